// Owns the emotion benchmarks' service under test: private Redis and FerretDB, one emotion API and one emotion
// worker as separate processes (the shipped defaults unless `env` changes them), and a token to call it with.
import path from 'node:path';
import { startFerretDb, startRedis } from '../../dev/engines/local-engines';
import { spawnService, type ServiceProcess } from '../../dev/harness/processes';
import { connectMongo } from '../../shared/db/mongo';
import { createModels } from '../../shared/db/models';
import { EmotionTokenService } from '../../shared/accounts/emotion-tokens';

export interface EmotionService {
  url: string;
  token: string;
  /** The API's and the worker's process ids (for their CPU time). */
  pids: Record<string, number>;
  stop(): Promise<void>;
}

export async function startEmotionService(dir: string, env: Record<string, string> = {}): Promise<EmotionService> {
  const redis = await startRedis({ dir: path.join(dir, 'redis') });
  const mongo = await startFerretDb({ dataDir: path.join(dir, 'ferretdb') });
  const all = { REDIS_URL: redis.url, MONGODB_URI: `${mongo.url}bench`, LOG_LEVEL: 'warn', ...env };
  const procs: ServiceProcess[] = [await spawnService('emotion-api', all), await spawnService('emotion-worker', all)];
  await Promise.all(procs.map((p) => p.ready(60_000)));
  const conn = await connectMongo(all.MONGODB_URI);
  const { token } = await new EmotionTokenService(createModels(conn)).create('bench');
  await conn.close();
  return {
    url: `http://127.0.0.1:${procs[0]!.port}/feelings/v3/analysis`,
    token,
    pids: { api: procs[0]!.proc.pid!, worker: procs[1]!.proc.pid! },
    async stop() {
      for (const p of procs) await p.stop();
      await mongo.stop();
      await redis.stop();
    },
  };
}
