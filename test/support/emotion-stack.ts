// Starts the emotion front-end and a real emotion worker (ffmpeg, Silero, the mapping model) in-process,
// on isolated queue names and a fresh database; speech is generated with espeak-ng.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startEmotionApi, type RunningEmotionApi } from '../../api/emotion/server';
import { startEmotionWorker } from '../../workers/emotion/worker';
import type { RunningWorker } from '../../workers/runtime/worker-process';
import { EmotionTokenService } from '../../shared/accounts/emotion-tokens';
import { connectMongo } from '../../shared/db/mongo';
import { createModels, type Models } from '../../shared/db/models';
import type { Connection } from 'mongoose';
import { isolation, testMongoUri } from './engines';
import { quietLog, testConfig } from './config';
import { checkedFetch, contractFetch, registerContractPort, unregisterContractPort } from './openapi';
import { createEmotionClient, type EmotionClient, type RetryPolicy } from '../../clients/typescript/src';

export interface EmotionStack {
  api: RunningEmotionApi;
  worker: RunningWorker | null;
  models: Models;
  token: string;
  tokenId: string;
  analyze(body: Buffer | string, headers?: Record<string, string>, method?: string, urlPath?: string): Promise<Response>;
  /** Any request to the API (no default headers); the answer is checked against the OpenAPI document. */
  request(urlPath: string, init?: RequestInit): Promise<Response>;
  /** The typed client (clients/typescript) for this API, with the stack's token unless another is given; answers are checked. */
  client(o?: { token?: string; retry?: RetryPolicy }): EmotionClient;
  stop(): Promise<void>;
}

export async function startEmotionStack(label: string, o: { env?: Record<string, string>; withWorker?: boolean } = {}): Promise<EmotionStack> {
  const { prefix, dbName } = isolation(label);
  const config = testConfig(prefix, o.env);
  const api = await startEmotionApi({ config, log: quietLog, dbName });
  const worker = o.withWorker === false ? null : await startEmotionWorker({ config, log: quietLog, dbName });
  const conn: Connection = await connectMongo(testMongoUri(), dbName);
  const models = createModels(conn);
  const issued = await new EmotionTokenService(models).create(`test-${label}`);
  registerContractPort(api.port, 'emotion');
  return {
    api,
    worker,
    models,
    token: issued.token,
    tokenId: issued.id,
    analyze(body, headers = {}, method = 'POST', urlPath = '/feelings/v3/analysis') {
      return checkedFetch(api.port, urlPath, {
        method,
        headers: { authorization: `Bearer ${issued.token}`, 'content-type': 'audio/wav', ...headers },
        body: method === 'GET' || method === 'HEAD' ? undefined : body,
      });
    },
    request(urlPath, init = {}) {
      return checkedFetch(api.port, urlPath, init);
    },
    client({ token = issued.token, retry } = {}) {
      return createEmotionClient({ baseUrl: `http://127.0.0.1:${api.port}`, token, retry, fetch: contractFetch });
    },
    async stop() {
      unregisterContractPort(api.port);
      await worker?.stop();
      await api.stop();
      await conn.close();
    },
  };
}

/** Speech of about `seconds` seconds from espeak-ng, converted by ffmpeg to the asked format. */
export function speech(seconds: number, ext: 'wav' | 'mp3' | 'flac' = 'wav', voice = 'en-us'): Buffer {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lc-speech-'));
  try {
    const words = 'The quick brown fox jumps over the lazy dog while the band keeps playing softly. '.repeat(Math.ceil(seconds / 4));
    const raw = path.join(dir, 'raw.wav');
    execFileSync('espeak-ng', ['-v', voice, '-s', '150', '-w', raw, words]);
    const out = path.join(dir, `out.${ext}`);
    const codec = ext === 'mp3' ? ['-b:a', '128k'] : ext === 'wav' ? ['-c:a', 'pcm_s16le'] : [];
    execFileSync('ffmpeg', ['-v', 'error', '-y', '-i', raw, '-t', String(seconds), '-ar', '16000', '-ac', '1', ...codec, out]);
    return fs.readFileSync(out);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** The JSON body of a fetch response, untyped for assertions. */
export async function jsonOf(res: Response): Promise<any> {
  return res.json();
}
