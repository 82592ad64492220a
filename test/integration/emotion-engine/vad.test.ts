// Speech detection: Silero VAD (the real model) and the cheap energy-and-periodicity detector used for long
// files must agree on ordinary speech with pauses, and running Silero's parts side by side in the batch
// axis must give the same decisions as one sequential pass.
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { FixtureDir } from '../../../dev/harness/emotion/audio';
import type { EmotionEngine } from '../../../workers/emotion/engine';
import { loadEngine } from './engine';

function agreement(a: Uint8Array[], b: Uint8Array[]): number {
  let same = 0;
  let total = 0;
  a.forEach((flags, w) =>
    flags.forEach((f, k) => {
      total++;
      if (f === b[w]![k]) same++;
    }),
  );
  return same / total;
}

describe('emotion engine: speech detection', () => {
  let engine: EmotionEngine;
  const fx = new FixtureDir();

  before(async () => {
    engine = await loadEngine();
    fx.speak('a.wav', { voice: 'en-us' });
    fx.speak('b.wav', { voice: 'en+f3', text: 'Please call me back when you get this message, it is rather urgent.' });
    // speech, 3 s pause, speech, 2 s pause, with a little pink noise under everything (a real room).
    fx.sox(['a.wav'], 'a-pause.wav', ['pad', '0', '3']);
    fx.sox(['b.wav'], 'b-pause.wav', ['pad', '0', '2']);
    fx.sox(['a-pause.wav', 'b-pause.wav'], 'dialogue-clean.wav', ['rate', '16000']);
    fx.sox([], 'room.wav', ['synth', '20', 'pinknoise', 'vol', '0.003'], ['-n', '-r', '16000', '-c', '1', '-b', '16']);
    fx.sox(['-m', 'dialogue-clean.wav', 'room.wav'], 'dialogue.wav', ['trim', '0', '18']);
  });
  after(async () => {
    fx.remove();
    await engine.close();
  });

  it('Silero and the energy detector agree on at least 85 % of frames of speech with pauses', async () => {
    const ins = await engine.inspect(fx.read('dialogue.wav'));
    expect(agreement(ins.speech.silero, ins.speech.energy)).to.be.at.least(0.85);
  });

  it('both find the pauses: speech_ratio is well below 1 over the file and near 0 in the pause', async () => {
    const ins = await engine.inspect(fx.read('dialogue.wav'));
    for (const flags of [ins.speech.silero, ins.speech.energy]) {
      const all = flags.flatMap((f) => [...f]);
      const ratio = all.reduce((s, f) => s + f, 0) / all.length;
      expect(ratio).to.be.within(0.4, 0.85);
    }
  });

  it('batching Silero across parts of the file gives the same decisions as one sequential pass', async () => {
    fx.sox(['dialogue.wav', 'dialogue.wav', 'dialogue.wav', 'dialogue.wav'], 'long.wav', ['rate', '8000']);
    const raw = execFileSync('sox', [fx.path('long.wav'), '-t', 'f32', '-'], { maxBuffer: 64 << 20 });
    const x = new Float32Array(raw.buffer, raw.byteOffset, raw.length / 4);
    const batched = await engine.silero.probabilities(x, 8000, () => undefined);
    const sequential = await engine.silero.probabilities(x, 8000, () => undefined, 1);
    let same = 0;
    for (let i = 0; i < batched.length; i++) if (batched[i]! >= 0.5 === sequential[i]! >= 0.5) same++;
    expect(same / batched.length).to.be.at.least(0.97);
  });
});
