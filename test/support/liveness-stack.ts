// Starts the liveness front-end and a real liveness worker (real models) in-process on isolated
// queue names and a fresh database, for integration tests. Clock injectable for month boundaries.
import { startLivenessApi, type RunningLivenessApi } from '../../api/liveness/server';
import { startLivenessWorker } from '../../workers/liveness/worker';
import type { RunningWorker } from '../../workers/runtime/worker-process';
import type { Clock } from '../../shared/billing/month';
import type { PlanId } from '../../shared/billing/plans';
import { isolation } from './engines';
import { quietLog, testConfig } from './config';
import { http, type HttpResult } from './http';
import { contractFetch, registerContractPort, unregisterContractPort } from './openapi';
import { createLivenessClient, type LivenessClient, type RetryPolicy } from '../../clients/typescript/src';

export interface LivenessStack {
  api: RunningLivenessApi;
  worker: RunningWorker | null;
  prefix: string;
  dbName: string;
  createAccount(plan: PlanId, opts?: { hardCap?: boolean; monthlyLimit?: number }): Promise<{ customerId: string; primaryKey: string; secondaryKey: string }>;
  check(key: string, image: Buffer | string, format?: string, headers?: Record<string, string>): Promise<HttpResult>;
  usage(key: string): Promise<HttpResult>;
  /** The typed client (clients/typescript) for this API with `key`; its answers are checked against the document. */
  client(key: string, retry?: RetryPolicy): LivenessClient;
  stop(): Promise<void>;
}

export async function startLivenessStack(label: string, o: { env?: Record<string, string>; clock?: Clock; withWorker?: boolean } = {}): Promise<LivenessStack> {
  const { prefix, dbName } = isolation(label);
  const config = testConfig(prefix, o.env);
  const api = await startLivenessApi({ config, log: quietLog, dbName, clock: o.clock });
  const worker = o.withWorker === false ? null : await startLivenessWorker({ config, log: quietLog, dbName });
  registerContractPort(api.port, 'liveness');
  let n = 0;
  return {
    api,
    worker,
    prefix,
    dbName,
    async createAccount(plan, opts = {}) {
      const created = await api.deps.apiKeys.createAccountWithKeys({
        email: `user${++n}-${label}@example.com`,
        plan,
        hardCap: opts.hardCap,
        monthlyLimit: opts.monthlyLimit,
      });
      return { customerId: created.account._id, primaryKey: created.primaryKey!, secondaryKey: created.secondaryKey! };
    },
    check(key, image, format = 'jpeg', headers = {}) {
      const b64 = typeof image === 'string' ? image : image.toString('base64');
      return http(api.port, '/v1/check/liveness', { method: 'POST', headers: { 'x-api-key': key, ...headers }, json: { image: b64, image_format: format } });
    },
    usage(key) {
      return http(api.port, '/v1/usage', { headers: { 'x-api-key': key } });
    },
    client(key, retry) {
      return createLivenessClient({ baseUrl: `http://127.0.0.1:${api.port}`, apiKey: key, retry, fetch: contractFetch });
    },
    async stop() {
      unregisterContractPort(api.port);
      await worker?.stop();
      await api.stop();
    },
  };
}
