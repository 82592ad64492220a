// Findings 11 and 12 of the security review that are settings and housekeeping: strict e-mail addresses,
// safe local defaults, the proxy setting's validation, placeholder secrets, pending accounts that expire,
// temporary upload folders swept at start, and the PCM sink's own sample cap.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import type { Connection } from 'mongoose';
import { isAddrSpec, readRegistration } from '../../../api/console/validation';
import { AccountService } from '../../../shared/accounts/account-service';
import { parseConfig } from '../../../shared/config';
import { connectMongo } from '../../../shared/db/mongo';
import { createModels, type Models } from '../../../shared/db/models';
import { sweepStaleTempDirs, STALE_TEMP_AGE_MS } from '../../../workers/runtime/temp-sweep';
import { PcmSink } from '../../../workers/emotion/engine/decode';
import { MAX_PCM_SAMPLES } from '../../../workers/emotion/engine/pcm';
import { isolation, testMongoUri } from '../../support/engines';

describe('Security hardening: settings and housekeeping (findings 11 and 12)', function () {
  this.timeout(60_000);

  describe('e-mail addresses', () => {
    it('finding 11: registration accepts a bare addr-spec only: no display name, no group, no list', () => {
      for (const bad of [
        'Ada<ada@example.com>',
        'Ada <ada@example.com>',
        'team:ada@example.com;',
        'team: ada@example.com;',
        'ada@example.com,eve@example.com',
        '"ada"@example.com',
        'ada@[192.0.2.1]',
        'a..b@example.com',
        'ada@example',
      ]) {
        expect(isAddrSpec(bad), bad).to.equal(false);
        const { errors } = readRegistration({ firstName: 'A', lastName: 'L', email: bad, company: 'C', website: 'https://example.com' });
        expect(errors.email, bad).to.be.a('string');
      }
      for (const good of ['ada@example.com', 'ada.lovelace+console@mail.example.co.uk', "o'brien@example.ie"]) expect(isAddrSpec(good), good).to.equal(true);
    });
  });

  describe('configuration', () => {
    it('finding 6: front-ends listen on 127.0.0.1 unless HOST says otherwise', () => {
      expect(parseConfig({}).HOST).to.equal('127.0.0.1');
      expect(parseConfig({ HOST: '0.0.0.0' }).HOST).to.equal('0.0.0.0');
    });

    it('finding 12: TRUST_PROXY trusts loopback by default, takes a hop count or an address/CIDR list, and refuses anything else', () => {
      expect(parseConfig({}).TRUST_PROXY).to.deep.equal(['loopback']);
      expect(parseConfig({ TRUST_PROXY: '1' }).TRUST_PROXY).to.equal(1);
      expect(parseConfig({ TRUST_PROXY: '10.0.0.0/8, 192.0.2.7, fd00::/8, loopback' }).TRUST_PROXY).to.deep.equal([
        '10.0.0.0/8',
        '192.0.2.7',
        'fd00::/8',
        'loopback',
      ]);
      for (const bad of ['true', '*', '10.0.0.0/33', 'proxy.example.com', '1.2.3', ''])
        expect(() => parseConfig({ TRUST_PROXY: bad }), bad).to.throw(/TRUST_PROXY/);
    });

    it('finding 12: the example secret in the Kubernetes secret example fails the secret check', () => {
      const example = fs.readFileSync(path.join(__dirname, '../../../deploy/k8s/secret.example.yaml'), 'utf8');
      const value = /APP_SECRET:\s*(\S+)/.exec(example)![1]!;
      expect(value.length, 'long enough to pass a length-only check').to.be.at.least(32);
      expect(() => parseConfig({ APP_SECRET: value })).to.throw(/APP_SECRET/);
      expect(parseConfig({ APP_SECRET: 'k3J9vQ2xR7mW4tY8pL1sD6fH0gZ5cN2bA9eU' }).APP_SECRET).to.have.length(36);
    });
  });

  describe('pending accounts', () => {
    let mongo: Connection;
    let models: Models;
    before(async () => {
      mongo = await connectMongo(testMongoUri(), isolation('pending-expiry').dbName);
      models = createModels(mongo);
      await models.Account.init();
    });
    after(async () => mongo?.close());

    it('finding 12: accounts never verified are deleted after PENDING_ACCOUNT_DAYS; active and recent ones stay', async () => {
      const days = parseConfig({}).PENDING_ACCOUNT_DAYS;
      let now = new Date();
      const accounts = new AccountService(models, () => now);
      const stale = await accounts.create({ email: 'stale@example.com', plan: 'starter', status: 'pending' });
      const active = await accounts.create({ email: 'active@example.com', plan: 'starter' });
      now = new Date(Date.now() + days * 86_400_000 - 60_000); // a minute short of the limit
      expect(await accounts.deleteStalePending(days)).to.equal(0);
      const fresh = await accounts.create({ email: 'fresh@example.com', plan: 'starter', status: 'pending' });
      now = new Date(Date.now() + days * 86_400_000 + 60_000);
      expect(await accounts.deleteStalePending(days)).to.equal(2); // stale, and fresh (created with the real clock, so as old)
      expect(await accounts.get(stale._id)).to.equal(null);
      expect(await accounts.get(fresh._id)).to.equal(null);
      expect((await accounts.get(active._id))?.status).to.equal('active');
    });
  });

  describe('worker housekeeping', () => {
    it('finding 12: stale emotion upload folders are swept at start; fresh ones and other folders stay', async () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lc-sweep-'));
      try {
        for (const name of ['emotion-old', 'emotion-new', 'other-old']) {
          fs.mkdirSync(path.join(dir, name));
          fs.writeFileSync(path.join(dir, name, 'input'), 'audio');
        }
        const old = new Date(Date.now() - STALE_TEMP_AGE_MS - 60_000);
        fs.utimesSync(path.join(dir, 'emotion-old'), old, old);
        fs.utimesSync(path.join(dir, 'other-old'), old, old);
        expect(await sweepStaleTempDirs(dir, 'emotion-')).to.equal(1);
        expect(fs.readdirSync(dir).sort()).to.deep.equal(['emotion-new', 'other-old']);
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    });

    it('finding 12: the PCM sink stops at its own sample cap however much the decoder writes', () => {
      const sink = new PcmSink(0);
      const chunk = Buffer.alloc(1 << 20); // 524,288 samples of silence per chunk
      for (let written = 0; written <= MAX_PCM_SAMPLES + chunk.length; written += chunk.length / 2) sink.push(chunk);
      expect(sink.overflowed).to.equal(true);
      expect(sink.samples().length).to.be.at.most(MAX_PCM_SAMPLES);
    });
  });
});
