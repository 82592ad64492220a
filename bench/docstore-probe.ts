// Document-store probe (`npm run bench:docstore-probe`), issue 27: what FerretDB does with concurrent updates to
// one document ($inc; a conditional update on a revision) and whether a filter on an indexed field is answered
// by the index or by a scan (explain), and how long concurrent updates of different documents take. The
// usage-counter design (shared/billing/usage-counters.ts) rests on it.
import fs from 'node:fs';
import os from 'node:os';
import { loadAvg, runMain } from './support/main';
import path from 'node:path';
import mongoose from 'mongoose';
import { startFerretDb } from '../dev/engines/local-engines';
import { timedBurst, type BurstRow } from './support/measure';

async function main(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lc-probe-'));
  const engine = await startFerretDb({ dataDir: dir });
  console.log(`docstore probe on FerretDB/SQLite; ${os.cpus().length} CPUs, load ${loadAvg()}`);
  const conn = await mongoose.createConnection(engine.url, { dbName: 'probe', maxPoolSize: 50, retryWrites: false }).asPromise();
  const c = conn.db!.collection<{ _id: string; n?: number; rev?: number; hash?: string }>('probe');
  try {
    for (let round = 0; round < 3; round++) {
      await c.deleteMany({});
      await c.insertOne({ _id: 'doc', n: 0, rev: 0 });
      await Promise.all(Array.from({ length: 100 }, () => c.updateOne({ _id: 'doc' }, { $inc: { n: 1 } })));
      const inc = (await c.findOne({ _id: 'doc' }))!.n;
      // Optimistic: every writer reads the revision and updates only if it is unchanged; matched = "won".
      let won = 0;
      await c.updateOne({ _id: 'doc' }, { $set: { n: 0, rev: 0 } });
      await Promise.all(
        Array.from({ length: 100 }, async () => {
          const d = await c.findOne({ _id: 'doc' });
          const r = await c.updateOne({ _id: 'doc', rev: d!.rev }, { $inc: { n: 1, rev: 1 } });
          won += r.matchedCount;
        }),
      );
      const cas = (await c.findOne({ _id: 'doc' }))!.n;
      console.log(`  round ${round}: 100 concurrent $inc kept ${inc}; conditional updates: ${won} reported matched, document counts ${cas}`);
    }
    await c.deleteMany({});
    await c.createIndex({ hash: 1 });
    for (const size of [2_000, 20_000]) {
      await c.deleteMany({});
      await c.insertMany(Array.from({ length: size }, (_, i) => ({ _id: `k${i}`, hash: `h${i}` })));
      for (const [label, filter] of [
        ['_id equality', { _id: 'k1234' }],
        ['indexed field equality (hash)', { hash: 'h1234' }],
      ] as const) {
        const t0 = performance.now();
        for (let i = 0; i < 20; i++) await c.findOne(filter as never);
        const ms = (performance.now() - t0) / 20;
        const plan = await c.find(filter as never).explain();
        console.log(`  ${label}: ${ms.toFixed(2)} ms per findOne over ${size} documents; explain: ${JSON.stringify(plan.queryPlanner ?? plan).slice(0, 300)}`);
      }
    }
    // What serialising each collection's updates (dev/engines/ferretdb-serialise-updates.patch) costs: updates of
    // different documents by _id, alone and beside updates whose filter uses no index (each reads every document).
    const byId = (i: number) => c.updateOne({ _id: `k${(i * 7919) % 20_000}` }, { $set: { n: i } });
    const unindexed = (i: number) => c.updateOne({ n: -1 - i }, { $set: { rev: i } });
    const show = (label: string, r: BurstRow) =>
      console.log(`  ${label}: ok ${r.ok}, errors ${r.errors}, p50 ${r.p50.toFixed(1)} ms, p99 ${r.p99.toFixed(1)} ms, max ${r.max.toFixed(1)} ms`);
    for (const round of [1, 2]) show(`300 concurrent $set by _id, each its own document of 20,000 (burst ${round})`, await timedBurst(300, byId));
    const [mixed, scans] = await Promise.all([timedBurst(300, byId), timedBurst(5, unindexed)]);
    show('  the same beside 5 updates by an unindexed field', mixed);
    show('  those 5 unindexed updates (each reads 20,000 documents)', scans);
  } finally {
    await conn.close();
    await engine.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

runMain(main);
