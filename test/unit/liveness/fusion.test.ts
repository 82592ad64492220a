// The pieces of the liveness score that are plain arithmetic: crop geometry, the fusion's fit and shape, metrics, manifests.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { apcer, auc, bootstrapAuc, bpcer, crossValidatedLikelihoods, readManifest, type Scored, trainingRows } from '../../../research/liveness/evaluation';
import { coefficients } from '../../../workers/liveness/engine';
import { CUE_NAMES } from '../../../workers/liveness/engine/cues';
import { fusedLikelihood, fusedLogit, shippedFusion } from '../../../workers/liveness/engine/fusion';
import { chooseL2, equalErrorPoint, fitFusion, fitLogisticL2, L2_GRID, type TrainingRow } from '../../../research/liveness/fusion-fit';
import { sampleToTensor } from '../../../workers/liveness/engine/image';
import { BUILTIN_SPOOF_SPECS, contextCrop, paddedCrop, silentFaceCrop } from '../../../workers/liveness/engine/spoof';

describe('liveness spoof crops', () => {
  describe('faceplugin square window', () => {
    it('takes 2.7x the face height around the face centre when it fits', () => {
      const c = contextCrop({ x: 300, y: 200, w: 80, h: 100 }, 1000, 1000, 2.7);
      expect(c.w).to.be.closeTo(270, 1e-9);
      expect(c.x + c.w / 2).to.be.closeTo(340, 1e-9);
      expect(c.y + c.h / 2).to.be.closeTo(250, 1e-9);
    });

    it('shrinks the factor to fit the image and shifts the window inside it instead of padding', () => {
      const c = contextCrop({ x: 10, y: 10, w: 150, h: 200 }, 640, 480, 2.7);
      expect(c.w).to.be.closeTo(479, 1e-9);
      expect(c.x).to.equal(0);
      expect(c.y).to.equal(0);
      expect(c.y + c.h).to.be.at.most(480);
    });
  });

  describe('padded window', () => {
    it("keeps Silent-Face's window whole around the face where the frame ends: not shrunk, not shifted", () => {
      // The box that silentFaceCrop shrinks to 319 x 480 and shifts (test below): 400 x 600 around (550, 375).
      expect(paddedCrop({ x: 500, y: 300, w: 100, h: 150 }, 'silent-face', 4)).to.deep.equal({ x: 350, y: 75, w: 400, h: 600 });
    });

    it("keeps faceplugin's square of the face height whole", () => {
      expect(paddedCrop({ x: 10, y: 10, w: 150, h: 200 }, 'square', 2.7)).to.deep.equal({ x: -185, y: -160, w: 540, h: 540 });
    });
  });

  // Boxes worked out by hand from Silent-Face's CropImage._get_new_box (x0, y0, x1, y1 inclusive).
  describe('Silent-Face window', () => {
    it('scales width and height each by 2.7 around the centre when the box fits', () => {
      // s = min(479/100, 639/80, 2.7) = 2.7; 216 x 270 around (140, 170): 32..248, 35..305
      expect(silentFaceCrop({ x: 100, y: 120, w: 80, h: 100 }, 640, 480, 2.7)).to.deep.equal({ x: 32, y: 35, w: 217, h: 271 });
    });

    it('shifts a window that starts left of or above the image back inside, keeping its size', () => {
      // 270 x 324 around (60, 80): x -75..195 -> 0..270, y -82..242 -> 0..324
      expect(silentFaceCrop({ x: 10, y: 20, w: 100, h: 120 }, 640, 480, 2.7)).to.deep.equal({ x: 0, y: 0, w: 271, h: 325 });
    });

    it('lowers the scale so the window fits, shifts it off the right and bottom edges, and truncates the corners', () => {
      // s = min(479/150, 639/100, 4) = 3.1933; 319.33 x 479 around (550, 375):
      // x 390.33..709.67 -> 319.67..639, y 135.5..614.5 -> 0..479; int() -> 319, 0, 639, 479
      expect(silentFaceCrop({ x: 500, y: 300, w: 100, h: 150 }, 640, 480, 4)).to.deep.equal({ x: 319, y: 0, w: 321, h: 480 });
    });

    it('handles fractional detector boxes as Python would', () => {
      // 155.25 x 172.53 around (62.45, 73.15): x -15.175 -> 0..155.25, y -13.115 -> 0..172.53
      expect(silentFaceCrop({ x: 33.7, y: 41.2, w: 57.5, h: 63.9 }, 320, 240, 2.7)).to.deep.equal({ x: 0, y: 0, w: 156, h: 173 });
    });

    it('stretches the window with plain bilinear sampling, BGR, raw 0..255', () => {
      // Columns repeat 0, 0, 0, 255 in red; green is 7, blue 200. A 4x shrink samples at 4o + 1.5, between
      // two 0 columns: plain bilinear gives 0 where an anti-aliased resize would give 63.75.
      const width = 320,
        height = 80;
      const data = new Uint8Array(width * height * 3);
      for (let y = 0; y < height; y++) {
        for (let x = 0; x < width; x++) data.set([x % 4 === 3 ? 255 : 0, 7, 200], (y * width + x) * 3);
      }
      const img = { data, width, height, origWidth: width, origHeight: height, scale: 1 };
      const t = sampleToTensor(
        img,
        { x: 0, y: 0, w: 320, h: 80 },
        {
          width: 80,
          height: 80,
          layout: 'nchw',
          order: 'bgr',
          mean: 0,
          std: 1,
          antialias: false,
          clampToBox: true,
        },
      );
      const plane = 80 * 80;
      expect(t[0]).to.equal(200); // channel 0 is blue
      expect(t[plane]).to.equal(7);
      expect(Math.max(...t.subarray(2 * plane, 3 * plane))).to.equal(0);
    });

    it("reads only the window's own pixels when enlarging it (cv2.resize on an ROI)", () => {
      const width = 10,
        height = 10;
      const data = new Uint8Array(width * height * 3);
      for (let y = 0; y < height; y++) for (let x = 0; x < width; x++) data[(y * width + x) * 3] = x === 2 ? 0 : 100;
      const img = { data, width, height, origWidth: width, origHeight: height, scale: 1 };
      // Window x 3..6: its left output pixel would reach back to x = 2 (value 0) without the ROI clamp.
      const t = sampleToTensor(
        img,
        { x: 3, y: 3, w: 4, h: 4 },
        {
          width: 8,
          height: 8,
          layout: 'nhwc',
          order: 'rgb',
          mean: 0,
          std: 1,
          antialias: false,
          clampToBox: true,
        },
      );
      expect(t[0]).to.equal(100);
    });
  });
});

describe('liveness fusion', () => {
  let seed = 7;
  const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;

  /** n samples of two features uniform in [-4, 4], labelled 1 with probability sigmoid(w0 x0 + w1 x1 + bias). */
  function logisticSamples(n: number, w0: number, w1: number, bias = 0): { x: number[][]; y: number[] } {
    const x: number[][] = [],
      y: number[] = [];
    for (let i = 0; i < n; i++) {
      const r = [rand() * 8 - 4, rand() * 8 - 4];
      x.push(r);
      y.push(rand() < 1 / (1 + Math.exp(-(w0 * r[0]! + w1 * r[1]! + bias))) ? 1 : 0);
    }
    return { x, y };
  }

  it('recovers the weights and bias of a logistic law from samples', () => {
    const { x, y } = logisticSamples(4000, 1.5, 0.5, -0.5);
    const { w, b } = fitLogisticL2(x, y, 1e-3);
    expect(w[0]).to.be.closeTo(1.5, 0.2);
    expect(w[1]).to.be.closeTo(0.5, 0.15);
    expect(b).to.be.closeTo(-0.5, 0.2);
  });

  it('keeps every weight non-negative: a feature that points the wrong way is dropped', () => {
    const { x, y } = logisticSamples(2000, 1.2, -0.8);
    const { w } = fitLogisticL2(x, y, 1);
    expect(w[0]).to.be.greaterThan(0.8);
    expect(w[1]).to.equal(0);
  });

  it("keeps a sign-free feature's negative weight (a cue) that a constrained fit would drop", () => {
    const { x, y } = logisticSamples(3000, 1.2, -0.8);
    const free = fitLogisticL2(x, y, 1, [false, true]).w;
    expect(free[0]).to.be.closeTo(1.2, 0.2);
    expect(free[1]).to.be.closeTo(-0.8, 0.2);
    expect(fitLogisticL2(x, y, 1).w[1]).to.equal(0);
  });

  it("ships a fusion that rises with every model's fake logit, whatever the face cues, and records the sources it was fitted on", () => {
    // The built-in models the engine runs by default (a weight-0 built-in, fr_liveness, is not in the fusion).
    const names = BUILTIN_SPOOF_SPECS.filter((s) => s.weight > 0).map((s) => s.name);
    expect(Object.keys(shippedFusion.weights)).to.have.members(names);
    for (const w of Object.values(shippedFusion.weights)) expect(w).to.be.at.least(0);
    expect(Object.values(shippedFusion.weights).filter((w) => w > 0).length).to.be.at.least(2);
    expect(shippedFusion.fittedSources.length).to.be.greaterThan(20);
    for (let i = 0; i < 200; i++) {
      const at = Object.fromEntries(names.map((n) => [n, rand() * 20 - 10]));
      const cues = Object.fromEntries(CUE_NAMES.map((c) => [c, rand() * 10 - 5]));
      for (const n of names) {
        if (shippedFusion.weights[n] === 0) continue;
        // On the logit: far out, the likelihoods round to the same double.
        expect(fusedLogit(shippedFusion, { ...at, [n]: at[n]! + 0.5 }, cues)).to.be.greaterThan(fusedLogit(shippedFusion, at, cues));
      }
    }
  });

  it('ships a weight, mean and standard deviation for every face cue, with L2 chosen out of source', () => {
    expect(Object.keys(shippedFusion.cues ?? {})).to.have.members([...CUE_NAMES]);
    for (const t of Object.values(shippedFusion.cues ?? {})) {
      expect(Number.isFinite(t.weight) && Number.isFinite(t.mean)).to.equal(true);
      expect(t.std).to.be.greaterThan(0);
    }
    expect(shippedFusion.l2Rule).to.match(/^chosen/);
    expect(L2_GRID).to.include(shippedFusion.l2);
  });

  it('adds each cue as weight x (value - mean) / std, and refuses to score without a cue it needs', () => {
    const f = { weights: { m: 2 }, bias: -1, cues: { c: { weight: -0.5, mean: 10, std: 4 } } };
    expect(fusedLogit(f, { m: 1 }, { c: 18 })).to.be.closeTo(-1 + 2 - 0.5 * 2, 1e-12);
    expect(() => fusedLogit(f, { m: 1 })).to.throw(/face cue "c"/);
    expect(() => fusedLogit(f, { m: 1 }, { c: NaN })).to.throw(/face cue "c"/);
  });

  it('fits a cue on its own scale: standardised on the fitting rows, weight sign-free', () => {
    const rows: Array<TrainingRow & { cues: { c: number } }> = [];
    for (let g = 0; g < 6; g++) {
      for (let i = 0; i < 30; i++) {
        const isSpoof = i % 2 === 0;
        // The cue is lower on spoofs, on a scale of hundreds; the model logit is weak.
        rows.push({
          group: `g${g}`,
          isSpoof,
          logits: { m: (isSpoof ? 0.5 : -0.5) + (rand() - 0.5) * 4 },
          cues: { c: 500 + (isSpoof ? -60 : 60) + (rand() - 0.5) * 200 },
        });
      }
    }
    const f = fitFusion(rows, ['m'], { l2: 1, threshold: 0.15, cues: ['c'] });
    const c = f.cues!.c!;
    expect(c.weight).to.be.lessThan(-0.5);
    expect(c.mean).to.be.closeTo(rows.reduce((a, r) => a + r.cues.c, 0) / rows.length, 1e-9);
    expect(c.std).to.be.within(50, 120);
    expect(() => fitFusion([{ ...rows[0]!, cues: {} }, ...rows.slice(1)], ['m'], { l2: 1, threshold: 0.15, cues: ['c'] })).to.throw(/lacks the face cue/);
  });

  it('chooses the L2 strength by out-of-source log-loss: strong when the cues are noise, weak when they carry the signal', () => {
    const rows = (signal: number): TrainingRow[] => {
      const out: TrainingRow[] = [];
      for (let g = 0; g < 6; g++) {
        for (let i = 0; i < 20; i++) {
          const isSpoof = i % 2 === 0;
          out.push({ group: `g${g}`, isSpoof, logits: { m: rand() * 2 - 1 }, cues: { c: (isSpoof ? signal : -signal) + rand() * 2 - 1, d: rand() } });
        }
      }
      return out;
    };
    expect(chooseL2(rows(0), ['m'], { threshold: 0.15, cues: ['c', 'd'] })).to.be.at.least(10);
    expect(chooseL2(rows(2), ['m'], { threshold: 0.15, cues: ['c', 'd'] })).to.be.at.most(1);
  });

  it('gives an operator model without a fitted weight the mean fitted weight times its own weight, and re-weights built-ins', () => {
    const f = { weights: { a: 1, b: 3 }, bias: -2 };
    const spec = (name: string, weight: number) => ({ ...BUILTIN_SPOOF_SPECS[0]!, name, weight });
    expect(coefficients(f, [spec('a', 1), spec('b', 0.5), spec('extra', 2)])).to.deep.equal({ bias: -2, weights: { a: 1, b: 1.5, extra: 4 } });
    const cues = { c: { weight: 1, mean: 0, std: 1 } };
    expect(coefficients({ ...f, cues }, [spec('a', 0.5)]).cues).to.deep.equal(cues);
  });

  it('puts the threshold at the equal-error point of the out-of-source scores', () => {
    expect(equalErrorPoint([2, 3, 4, 0.5], [-3, -2, -1, 1])).to.be.within(0.5, 1);
    const rows = [];
    for (let g = 0; g < 8; g++) {
      for (let i = 0; i < 20; i++) {
        const isSpoof = i % 2 === 0;
        rows.push({ group: `g${g}`, isSpoof, logits: { m: (isSpoof ? 1.5 : -1.5) + (rand() - 0.5) * 4 } });
      }
    }
    const f = fitFusion(rows, ['m'], { l2: 1, threshold: 0.15 });
    const spoof = rows.filter((r) => r.isSpoof).map((r) => fusedLikelihood(f, r.logits));
    const live = rows.filter((r) => !r.isSpoof).map((r) => fusedLikelihood(f, r.logits));
    // In sample the two error rates at 0.15 are close (the anchor came from out-of-source scores).
    expect(Math.abs(apcer(spoof, 0.15) - bpcer(live, 0.15))).to.be.lessThan(0.1);
  });

  it('never scores a source group with a fusion fitted on that group', () => {
    const mk = (group: string, label: 'live' | 'spoof', x: number): Scored => ({
      row: { file: `${group}-${x}`, dataset: 'd', label, kind: 'full', type: '', group },
      features: { detector: 'fr-detect', spoofLogits: { m: x }, passLogits: { m: x } },
    });
    const others = [
      mk('a', 'live', -3),
      mk('a', 'live', -2),
      mk('a', 'spoof', 2),
      mk('a', 'spoof', 3),
      mk('a', 'live', 0.5),
      mk('c', 'live', -2.5),
      mk('c', 'live', -1),
      mk('c', 'spoof', 1),
      mk('c', 'spoof', 2.5),
      mk('c', 'spoof', -0.5),
      mk('d', 'live', -2),
      mk('d', 'spoof', 1.5),
    ];
    const b = [mk('b', 'live', 10), mk('b', 'spoof', -12)]; // deliberately backwards: a fit that saw them would bend
    const opts = { l2: 1, threshold: 0.15 };
    const cv = crossValidatedLikelihoods([...others, ...b], ['m'], opts);
    const fusion = fitFusion(trainingRows(others), ['m'], opts);
    for (const s of b) expect(cv.get(s)).to.be.closeTo(fusedLikelihood(fusion, s.features!.spoofLogits), 1e-12);
  });

  it('counts a sample of weight 2 as that sample twice, and weights of 1 as no weights', () => {
    const { x, y } = logisticSamples(500, 1, 0.5, 0.2);
    const twice = fitLogisticL2([...x, ...x], [...y, ...y], 1);
    const weighted = fitLogisticL2(
      x,
      y,
      1,
      [],
      x.map(() => 2),
    );
    weighted.w.forEach((v, j) => expect(v).to.be.closeTo(twice.w[j]!, 1e-9));
    expect(weighted.b).to.be.closeTo(twice.b, 1e-9);
    expect(
      fitLogisticL2(
        x,
        y,
        1,
        [],
        x.map(() => 1),
      ),
    ).to.deep.equal(fitLogisticL2(x, y, 1));
  });
});

describe('liveness metrics', () => {
  it('computes AUC, APCER and BPCER with "spoof" meaning a score above the threshold', () => {
    const spoof = [0.9, 0.8, 0.1];
    const live = [0.05, 0.2, 0.01];
    expect(auc(spoof, live)).to.be.closeTo(8 / 9, 1e-12);
    expect(apcer(spoof, 0.15)).to.be.closeTo(1 / 3, 1e-12);
    expect(bpcer(live, 0.15)).to.be.closeTo(1 / 3, 1e-12);
  });

  it('bootstraps an AUC interval over source groups that holds the pooled AUC, and collapses when every group is perfect', () => {
    const items = [];
    for (let g = 0; g < 10; g++) {
      items.push({ group: `g${g}`, spoof: true, score: g % 3 === 0 ? 0.2 : 0.9 }, { group: `g${g}`, spoof: false, score: 0.3 });
    }
    const [lo, hi] = bootstrapAuc(items, 500);
    const pooled = auc(
      items.filter((i) => i.spoof).map((i) => i.score),
      items.filter((i) => !i.spoof).map((i) => i.score),
    );
    expect(lo).to.be.at.most(pooled);
    expect(hi).to.be.at.least(pooled);
    expect(hi - lo).to.be.greaterThan(0.1);
    const perfect = items.map((i) => ({ ...i, score: i.spoof ? 0.9 : 0.1 }));
    expect(bootstrapAuc(perfect, 200)).to.deep.equal([1, 1]);
  });

  it('reads a manifest with only file and label columns, grouping each file alone', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'liveness-manifest-'));
    fs.writeFileSync(path.join(dir, 'manifest.csv'), 'file,label\n"a.jpg",live\nb.png,spoof\n');
    const rows = readManifest(dir);
    fs.rmSync(dir, { recursive: true });
    const dataset = path.basename(dir);
    expect(rows).to.deep.equal([
      { file: 'a.jpg', dataset, label: 'live', kind: 'full', type: '', group: 'a.jpg' },
      { file: 'b.png', dataset, label: 'spoof', kind: 'full', type: 'unknown', group: 'b.png' },
    ]);
  });
});
