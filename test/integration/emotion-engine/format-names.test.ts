// meta.format_name: the public contract's list (AUDIO_FORMAT_NAMES) is what the real ffprobe reports for each
// detected format with the demuxer the engine forces (m4a → mov's long name, wma → asf), and the OpenAPI
// enum is exactly that list.
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { AUDIO_FORMAT_NAMES, emotionAnalysisSchema } from '../../../shared/contracts/http/emotion';
import { DEMUXER } from '../../../workers/emotion/engine/probe';
import type { SniffedFormat } from '../../../workers/emotion/engine/sniff';
import { FixtureDir } from '../../../dev/harness/emotion/audio';

/** ffmpeg output arguments and file name that make a short file of each format. */
const MAKE: Record<SniffedFormat, { file: string; args: string[] }> = {
  wav: { file: 'a.wav', args: [] },
  aiff: { file: 'a.aiff', args: [] },
  aac: { file: 'a.aac', args: ['-c:a', 'aac', '-b:a', '128k'] },
  m4a: { file: 'a.m4a', args: ['-c:a', 'aac', '-b:a', '128k'] },
  mp3: { file: 'a.mp3', args: ['-c:a', 'libmp3lame', '-b:a', '128k'] },
  wma: { file: 'a.wma', args: ['-c:a', 'wmav2', '-b:a', '128k'] },
  flac: { file: 'a.flac', args: [] },
  ogg: { file: 'a.ogg', args: ['-c:a', 'libopus'] },
  webm: { file: 'a.webm', args: ['-c:a', 'libopus'] },
};

describe('emotion meta.format_name (AUDIO_FORMAT_NAMES)', () => {
  const fx = new FixtureDir();
  before(() => {
    execFileSync('ffmpeg', ['-nostdin', '-v', 'error', '-y', '-f', 'lavfi', '-i', 'sine=f=220:d=1:r=44100', fx.path('tone.wav')]);
  });
  after(() => fx.remove());

  for (const format of Object.keys(MAKE) as SniffedFormat[]) {
    it(`is ffprobe's own name for ${format} read with -f ${DEMUXER[format]}: "${AUDIO_FORMAT_NAMES[format]}"`, () => {
      const file = fx.ffmpeg('tone.wav', MAKE[format].file, MAKE[format].args);
      const out = execFileSync('ffprobe', ['-v', 'error', '-f', DEMUXER[format], '-show_entries', 'format=format_name', '-of', 'json', file]);
      const reported = (JSON.parse(out.toString('utf8')) as { format: { format_name: string } }).format.format_name;
      expect(reported).to.equal(AUDIO_FORMAT_NAMES[format]);
    });
  }

  it('is the OpenAPI enum, no more and no less', () => {
    const enumValues = emotionAnalysisSchema.shape.meta.shape.format_name.options;
    expect([...enumValues].sort()).to.deep.equal(Object.values(AUDIO_FORMAT_NAMES).sort());
  });
});
