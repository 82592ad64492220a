// The pieces of the liveness score that are plain arithmetic: crop geometry, calibration fit, metrics, manifests.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { anchorIntercept, calibrate, fitCalibration, fitLogistic, shippedCalibration } from '../../../workers/liveness/engine/calibrate';
import { apcer, auc, bpcer, crossValidatedLikelihoods, readManifest, type Scored } from '../../../workers/liveness/engine/evaluation';
import { contextCrop } from '../../../workers/liveness/engine/spoof';

describe('liveness spoof crop', () => {
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

describe('liveness calibration', () => {
  it('recovers the slope and intercept of a logistic law from samples', () => {
    const x: number[] = [], y: number[] = [];
    let seed = 7;
    const rand = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    for (let i = 0; i < 4000; i++) {
      const xi = rand() * 8 - 4;
      x.push(xi);
      y.push(rand() < 1 / (1 + Math.exp(-(1.5 * xi - 0.5))) ? 1 : 0);
    }
    const { a, b } = fitLogistic(x, y);
    expect(a).to.be.closeTo(1.5, 0.2);
    expect(b).to.be.closeTo(-0.5, 0.2);
  });

  it('anchors the intercept so that the target share of live faces scores above the threshold', () => {
    const live = Array.from({ length: 101 }, (_, i) => i / 10 - 5);
    const b = anchorIntercept(0.8, live, 0.15, 0.1);
    const rejected = live.filter((x) => calibrate({ a: 0.8, b }, x) > 0.15).length / live.length;
    expect(rejected).to.be.closeTo(0.1, 0.011);
  });

  it('ships a fitted curve that rises with the fake logit', () => {
    expect(shippedCalibration.a).to.be.greaterThan(0);
    expect(shippedCalibration.fittedSources.length).to.be.greaterThan(5);
    expect(calibrate(shippedCalibration, 5)).to.be.greaterThan(calibrate(shippedCalibration, -5));
  });

  it('never scores a source group with a curve fitted on that group', () => {
    const mk = (group: string, label: 'live' | 'spoof', fused: number): Scored => ({
      row: { file: `${group}-${fused}`, label, kind: 'full', type: '', group },
      features: { detector: 'fr-detect', detectorScore: 1, spoofLogits: {}, fused, quality: { brightness: 0, sharpness: 0, faceHeight: 0, outside: 0 } },
    });
    const others = [
      mk('a', 'live', -3), mk('a', 'live', -2), mk('a', 'spoof', 2), mk('a', 'spoof', 3), mk('a', 'live', 0.5),
      mk('c', 'live', -2.5), mk('c', 'live', -1), mk('c', 'spoof', 1), mk('c', 'spoof', 2.5), mk('c', 'spoof', -0.5),
    ];
    const b = [mk('b', 'live', 10), mk('b', 'spoof', -12)]; // deliberately backwards: a fit that saw them would bend
    const op = { threshold: 0.15, targetBpcer: 0.1 };
    const cv = crossValidatedLikelihoods([...others, ...b], op);
    const curve = fitCalibration(others.map((s) => s.features!.fused), others.map((s) => s.row.label === 'spoof'), op);
    for (const s of b) expect(cv.get(s)).to.be.closeTo(calibrate(curve, s.features!.fused), 1e-12);
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

  it('reads a manifest with only file and label columns, grouping each file alone', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'liveness-manifest-'));
    fs.writeFileSync(path.join(dir, 'manifest.csv'), 'file,label\n"a.jpg",live\nb.png,spoof\n');
    const rows = readManifest(dir);
    fs.rmSync(dir, { recursive: true });
    expect(rows).to.deep.equal([
      { file: 'a.jpg', label: 'live', kind: 'full', type: '', group: 'a.jpg' },
      { file: 'b.png', label: 'spoof', kind: 'full', type: 'unknown', group: 'b.png' },
    ]);
  });
});
