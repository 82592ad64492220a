// The spoof models committed under models/vendor/: listed in the manifest with their licence, hash-checked,
// small, and shipped with the licence and notice their Apache-2.0 licence asks for.
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { isVendored, manifest, sha256File, vendoredPath } from '../../../models/manifest';

describe('vendored liveness models', () => {
  const vendored = manifest.models.filter(isVendored);

  it('lists both Silent-Face MiniFASNets as vendored, Apache-2.0, with their upstream origin', () => {
    expect(vendored.map((e) => e.name)).to.have.members(['silent-face-v2', 'silent-face-v1se']);
    for (const e of vendored) {
      expect(e.license).to.equal('Apache-2.0');
      expect(e.source.vendored).to.match(/^vendor\/silent-face\//);
    }
  });

  it('has each committed file match its manifest sha256 and stay under 2 MiB', () => {
    for (const e of vendored) {
      const file = vendoredPath(e);
      expect(sha256File(file), e.name).to.equal(e.sha256);
      expect(fs.statSync(file).size, e.name).to.be.below(2 * 1024 * 1024);
    }
  });

  it('ships the Apache-2.0 LICENSE and a NOTICE saying what was changed: the export to ONNX, and the fine-tuned files', () => {
    const dir = path.dirname(vendoredPath(vendored[0]!));
    expect(fs.readFileSync(path.join(dir, 'LICENSE'), 'utf8')).to.contain('Apache License');
    const notice = fs.readFileSync(path.join(dir, 'NOTICE'), 'utf8');
    expect(notice)
      .to.match(/exported to ONNX/)
      .and.match(/not changed/);
    // The files the worker loads are this project's fine-tuning of the upstream weights: the NOTICE names each.
    const fineTuned = vendored.map((e) => path.basename(e.source.vendored)).filter((f) => f.endsWith('.ft.onnx'));
    expect(fineTuned).to.have.length(2);
    for (const f of fineTuned) expect(notice).to.contain(f);
    expect(notice).to.match(/fine-tuned by this project/);
  });
});
