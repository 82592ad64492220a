// The spec's accepted formats (wav PCM/GSM, aiff, aac ADTS/m4a, mp3, wma, flac), Opus/Vorbis beyond it, and
// its limits, through the real engine: every accepted format decodes and yields intervals; everything else gets a precise 400 code.
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { FixtureDir, pseudoRandomBytes, wavHeader } from '../../../dev/harness/emotion/audio';
import { makeBrokenOpusVorbis, makeOpusVorbis, type OpusVorbisCase } from '../../fixtures/emotion/opus-vorbis';
import type { EmotionEngine } from '../../../workers/emotion/engine';
import { sniff } from '../../../workers/emotion/engine/sniff';
import { lossyMinimumBitRate } from '../../../workers/emotion/engine/probe';
import { expectRejection, loadEngine } from './engine';

describe('emotion engine: formats (POST /feelings/v3/analysis body)', () => {
  let engine: EmotionEngine;
  const fx = new FixtureDir();

  before(async () => {
    engine = await loadEngine();
    fx.speak('speech.wav'); // 22.05 kHz mono PCM16, about 6 s
    fx.sox(['speech.wav'], 'speech16k.wav', ['rate', '16000']);
    fx.sox(['speech.wav'], 'speech44k.wav', ['rate', '44100', 'channels', '2']);
  });
  after(async () => {
    fx.remove();
    await engine.close();
  });

  const accepted: Array<{ name: string; make: () => string; format_name: string; sample_rate: number; channels: number }> = [
    { name: 'wav PCM 16-bit', make: () => fx.path('speech16k.wav'), format_name: 'wav', sample_rate: 16000, channels: 1 },
    {
      name: 'wav GSM 6.10 (format tag 0x31)',
      make: () => fx.ffmpeg('speech.wav', 'gsm.wav', ['-ar', '8000', '-ac', '1', '-c:a', 'libgsm_ms']),
      format_name: 'wav',
      sample_rate: 8000,
      channels: 1,
    },
    { name: 'aiff PCM 16-bit', make: () => fx.ffmpeg('speech16k.wav', 'speech.aiff', []), format_name: 'aiff', sample_rate: 16000, channels: 1 },
    {
      name: 'aiff-c sowt (little-endian PCM)',
      make: () => fx.ffmpeg('speech16k.wav', 'sowt.aifc', ['-f', 'aiff', '-c:a', 'pcm_s16le']),
      format_name: 'aiff',
      sample_rate: 16000,
      channels: 1,
    },
    {
      name: 'aac ADTS',
      make: () => fx.ffmpeg('speech44k.wav', 'speech.aac', ['-c:a', 'aac', '-b:a', '128k']),
      format_name: 'aac',
      sample_rate: 44100,
      channels: 2,
    },
    {
      name: 'm4a with the moov atom at the end (ffmpeg default)',
      make: () => fx.ffmpeg('speech44k.wav', 'moov-end.m4a', ['-c:a', 'aac', '-b:a', '128k']),
      format_name: 'mov,mp4,m4a,3gp,3g2,mj2',
      sample_rate: 44100,
      channels: 2,
    },
    {
      name: 'm4a with the moov atom first (faststart)',
      make: () => fx.ffmpeg('speech44k.wav', 'faststart.m4a', ['-c:a', 'aac', '-b:a', '128k', '-movflags', '+faststart']),
      format_name: 'mov,mp4,m4a,3gp,3g2,mj2',
      sample_rate: 44100,
      channels: 2,
    },
    {
      name: 'mp3 at 128 kbps',
      make: () => fx.ffmpeg('speech44k.wav', 'speech.mp3', ['-c:a', 'libmp3lame', '-b:a', '128k']),
      format_name: 'mp3',
      sample_rate: 44100,
      channels: 2,
    },
    {
      name: 'mp3 at 8 kHz (narrow-band floor: 24 kbps)',
      make: () => fx.ffmpeg('speech.wav', 'nb.mp3', ['-ar', '8000', '-ac', '1', '-c:a', 'libmp3lame', '-b:a', '32k']),
      format_name: 'mp3',
      sample_rate: 8000,
      channels: 1,
    },
    {
      name: 'wma (wmav2)',
      make: () => fx.ffmpeg('speech44k.wav', 'speech.wma', ['-c:a', 'wmav2', '-b:a', '128k']),
      format_name: 'asf',
      sample_rate: 44100,
      channels: 2,
    },
    { name: 'flac', make: () => fx.ffmpeg('speech16k.wav', 'speech.flac', []), format_name: 'flac', sample_rate: 16000, channels: 1 },
  ];

  for (const c of accepted) {
    it(`accepts ${c.name}, reports ffprobe's meta and yields intervals with speech`, async () => {
      const res = await engine.analyze(fs.readFileSync(c.make()));
      expect(res.meta).to.include({ format_name: c.format_name, sample_rate: c.sample_rate, channels: c.channels });
      expect(res.meta.bit_rate).to.be.greaterThan(0);
      expect(res.results.length).to.be.within(1, 2);
      expect(res.results[0]!.from).to.equal(0);
      expect(res.results[0]!.speech_ratio).to.be.greaterThan(0.5);
      expect(res.results[0]!.rough).to.be.within(0.001, 1);
      expect(res.results[0]!.soft).to.be.within(0.001, 1);
      expect(res.summary.duration).to.be.within(5, 8);
    });
  }

  it('reports the audio stream bit rate, not the container rate inflated by cover art', async () => {
    fx.ffmpeg('speech44k.wav', 'plain.mp3', ['-c:a', 'libmp3lame', '-b:a', '128k']);
    execFileSync(
      'ffmpeg',
      [
        '-nostdin',
        '-v',
        'error',
        '-y',
        '-i',
        fx.path('plain.mp3'),
        '-f',
        'image2pipe',
        '-c',
        'png',
        '-i',
        '-',
        '-map',
        '0',
        '-map',
        '1',
        '-c',
        'copy',
        '-disposition:v',
        'attached_pic',
        fx.path('cover.mp3'),
      ],
      {
        input: makePng(), // 256x256 noise: large enough that the container's rate is far above 128 kbps
      },
    );
    const res = await engine.analyze(fx.read('cover.mp3'));
    expect(res.meta.bit_rate).to.equal(128000);
  });

  describe('rejections', () => {
    it('answers unsupported_format for random bytes', async () => {
      await expectRejection(engine.analyze(pseudoRandomBytes(50_000)), 'unsupported_format');
    });

    it('answers unsupported_format for a format outside the table (AC-3, FLAC in Ogg), whatever it is labelled', async () => {
      const ac3 = fx.ffmpeg('speech.wav', 'speech.ac3', ['-c:a', 'ac3']);
      await expectRejection(engine.analyze(fs.readFileSync(ac3)), 'unsupported_format');
      const oggFlac = fx.ffmpeg('speech.wav', 'speech.oga', ['-c:a', 'flac', '-f', 'ogg']);
      await expectRejection(engine.analyze(fs.readFileSync(oggFlac)), 'unsupported_format');
    });

    it('answers unsupported_format for a WAV carrying another codec (mu-law, MP3-in-WAV)', async () => {
      const mulaw = fx.ffmpeg('speech.wav', 'mulaw.wav', ['-c:a', 'pcm_mulaw']);
      await expectRejection(engine.analyze(fs.readFileSync(mulaw)), 'unsupported_format');
      const mp3InWav = Buffer.concat([wavHeader({ formatTag: 0x55, dataBytes: 4 }), Buffer.from([0xff, 0xfb, 0x90, 0x00])]);
      await expectRejection(engine.analyze(mp3InWav), 'unsupported_format');
    });

    it('answers unsupported_format for an m4a carrying ALAC rather than AAC', async () => {
      const alac = fx.ffmpeg('speech16k.wav', 'alac.m4a', ['-c:a', 'alac']);
      await expectRejection(engine.analyze(fs.readFileSync(alac)), 'unsupported_format');
    });

    it('answers corrupt_audio for bytes that carry a format signature and garbage after it (mislabelled)', async () => {
      const fakeFlac = Buffer.concat([Buffer.from('fLaC', 'latin1'), pseudoRandomBytes(5000)]);
      await expectRejection(engine.analyze(fakeFlac), 'corrupt_audio');
    });

    it('answers sample_rate_out_of_range: 96 kHz WAV (limit 80 kHz), 96 kHz FLAC and AAC (limit 48 kHz), 6 kHz WAV', async () => {
      await expectRejection(engine.analyze(fs.readFileSync(fx.sox(['speech.wav'], 'r96.wav', ['rate', '96000']))), 'sample_rate_out_of_range');
      await expectRejection(engine.analyze(fs.readFileSync(fx.sox(['speech.wav'], 'r96.flac', ['rate', '96000']))), 'sample_rate_out_of_range');
      await expectRejection(
        engine.analyze(fs.readFileSync(fx.ffmpeg('speech.wav', 'r96.aac', ['-ar', '96000', '-c:a', 'aac', '-b:a', '128k']))),
        'sample_rate_out_of_range',
      );
      await expectRejection(engine.analyze(fs.readFileSync(fx.sox(['speech.wav'], 'r6k.wav', ['rate', '6000']))), 'sample_rate_out_of_range');
    });

    it('accepts 80 kHz WAV, the top of its range', async () => {
      const res = await engine.analyze(fs.readFileSync(fx.sox(['speech.wav'], 'r80.wav', ['rate', '80000'])));
      expect(res.meta.sample_rate).to.equal(80000);
    });

    it('answers channels_out_of_range for 3 channels', async () => {
      const three = fx.sox(['speech16k.wav', 'speech16k.wav', 'speech16k.wav'], 'three.wav', [], ['-M', '-b', '16']);
      await expectRejection(engine.analyze(fs.readFileSync(three)), 'channels_out_of_range');
    });

    it('answers bit_depth_unsupported for 8-bit and 24-bit WAV and 24-bit AIFF', async () => {
      await expectRejection(engine.analyze(fs.readFileSync(fx.sox(['speech16k.wav'], 'u8.wav', [], ['-b', '8']))), 'bit_depth_unsupported');
      await expectRejection(engine.analyze(fs.readFileSync(fx.sox(['speech16k.wav'], 's24.wav', [], ['-b', '24']))), 'bit_depth_unsupported');
      await expectRejection(engine.analyze(fs.readFileSync(fx.sox(['speech16k.wav'], 's24.aiff', [], ['-b', '24']))), 'bit_depth_unsupported');
    });

    it('answers bit_rate_out_of_range for a 64 kbps mp3 at 44.1 kHz and a 32 kbps AAC', async () => {
      const low = fx.ffmpeg('speech44k.wav', 'low.mp3', ['-c:a', 'libmp3lame', '-b:a', '64k']);
      await expectRejection(engine.analyze(fs.readFileSync(low)), 'bit_rate_out_of_range');
      const lowAac = fx.ffmpeg('speech44k.wav', 'low.m4a', ['-c:a', 'aac', '-b:a', '32k']);
      await expectRejection(engine.analyze(fs.readFileSync(lowAac)), 'bit_rate_out_of_range');
    });

    it('answers no_audio for an empty body and for files that are only a header (encoders given zero samples)', async () => {
      await expectRejection(engine.analyze(Buffer.alloc(0)), 'no_audio');
      await expectRejection(engine.analyze(wavHeader({ dataBytes: 0 })), 'no_audio');
      const id3Only = Buffer.concat([Buffer.from('ID3\x04\x00\x00\x00\x00\x00\x0a', 'latin1'), Buffer.alloc(10)]);
      await expectRejection(engine.analyze(id3Only), 'no_audio');
      const empty: Array<[string, string]> = [
        ['empty.wav', 'pcm_s16le'],
        ['empty.aiff', 'pcm_s16be'],
        ['empty.flac', 'flac'],
        ['empty.m4a', 'aac'],
        ['empty.mp3', 'libmp3lame'],
        ['empty.wma', 'wmav2'],
        ['empty.opus', 'libopus'],
      ];
      for (const [name, codec] of empty) {
        execFileSync('ffmpeg', ['-nostdin', '-v', 'error', '-y', '-f', 'lavfi', '-i', 'anullsrc=r=44100:cl=mono', '-t', '0', '-c:a', codec, fx.path(name)]);
        await expectRejection(engine.analyze(fx.read(name)), 'no_audio');
      }
    });

    it('answers too_long for audio longer than the engine can analyse within the time-out', async () => {
      const short = await loadEngine({ maxDurationSeconds: 3 });
      try {
        await expectRejection(short.analyze(fx.read('speech16k.wav')), 'too_long');
      } finally {
        await short.close();
      }
    });

    it('stops with 503 processing_timeout instead of hanging when the deadline has passed', async () => {
      await expectRejection(engine.analyze(fx.read('speech16k.wav'), { deadline: Date.now() - 1 }), 'processing_timeout', 503);
    });
  });

  describe('Opus and Vorbis, accepted beyond the spec', () => {
    let cases: OpusVorbisCase[] = [];
    before(() => {
      cases = makeOpusVorbis(fx, fx.path('speech.wav'));
    });

    it('accepts WebM/Opus (with and without a duration), Matroska/Opus, Ogg/Opus and Ogg/Vorbis with ffprobe meta and intervals', async () => {
      for (const c of cases) {
        const res = await engine.analyze(fs.readFileSync(c.file));
        expect(res.meta, c.name).to.include({ format_name: c.format_name, sample_rate: c.sample_rate, channels: 1 });
        expect(res.meta.bit_rate, c.name).to.be.greaterThan(0);
        expect(res.results.length, c.name).to.be.within(1, 2);
        expect(res.results[0]!.from, c.name).to.equal(0);
        expect(res.results[0]!.speech_ratio, c.name).to.be.greaterThan(0.5);
        expect(res.results[0]!.rough, c.name).to.be.within(0.001, 1);
        expect(res.summary.duration, c.name).to.be.within(5, 8);
        expect(res.results.at(-1)!.to, c.name).to.equal(res.summary.duration);
      }
    });

    it('measures a duration-less WebM (MediaRecorder) so that too_long still applies', async () => {
      const short = await loadEngine({ maxDurationSeconds: 3 });
      try {
        const e = await expectRejection(short.analyze(fx.read('live.webm')), 'too_long');
        expect(e.message).to.match(/lasts [56] s/);
      } finally {
        await short.close();
      }
    });

    it('answers precise 400s for a truncated Ogg, a WebM without audio, video files and other codecs', async () => {
      for (const b of makeBrokenOpusVorbis(fx, fx.path('speech.wav'))) {
        const e = await expectRejection(engine.analyze(b.bytes), b.code);
        expect(e.message, b.name).to.match(b.message);
      }
    });

    it('sniffs Ogg and WebM from the bytes', () => {
      expect(cases.map((c) => sniff(fs.readFileSync(c.file)).format)).to.deep.equal(['webm', 'webm', 'webm', 'ogg', 'ogg']);
    });
  });

  describe('sniffing', () => {
    it('detects formats from the bytes, not from names: an mp3 renamed .wav is still mp3', () => {
      const mp3 = fx.ffmpeg('speech44k.wav', 'named.wav.mp3', ['-f', 'mp3', '-c:a', 'libmp3lame', '-b:a', '128k']);
      expect(sniff(fs.readFileSync(mp3)).format).to.equal('mp3');
    });

    it('scales the lossy bit-rate floor below 32 kHz (8 kHz: 24 kbps; 16 kHz: 48 kbps; 44.1 kHz: 96 kbps)', () => {
      expect([8000, 16000, 44100].map(lossyMinimumBitRate)).to.deep.equal([24000, 48000, 96000]);
    });
  });
});

/** A valid 256x256 PNG of noise (an "album cover"), made by ffmpeg so no binary is committed. */
function makePng(): Buffer {
  return execFileSync('ffmpeg', [
    '-nostdin',
    '-v',
    'error',
    '-f',
    'lavfi',
    '-i',
    'nullsrc=s=256x256,geq=random(1)*255:128:128',
    '-frames:v',
    '1',
    '-f',
    'image2pipe',
    '-c:v',
    'png',
    '-',
  ]);
}
