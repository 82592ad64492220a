// Owns the Redis key and channel names shared by API processes and workers. A job's payload and result live in the
// partition of its owner (its tenant: the account for a liveness call), so its bytes spread over a cluster's primaries
// and its result shares a slot with the account's credits (shared/redis-partitions.ts).
import { partitionPrefix, prefixOfKey } from '../redis-partitions';

export interface QueueKeys {
  /** The input bytes of one job, in its owner's partition (default: the job's own); written by the API, taken (GETDEL) by the worker. */
  payload(jobId: string, owner?: string): string;
  /** The result of one job, kept briefly for a waiter that missed the publish; in the partition of its payload. */
  result(jobId: string, owner?: string): string;
  /** The pub/sub channel of one API process; workers publish finished jobs to it. */
  replies(processId: string): string;
}

export function queueKeys(prefix: string): QueueKeys {
  return {
    payload: (jobId, owner) => `${partitionPrefix(prefix, owner ?? jobId)}:payload:${jobId}`,
    result: (jobId, owner) => resultKeyIn(partitionPrefix(prefix, owner ?? jobId), jobId),
    replies: (processId) => `${prefix}:replies:${processId}`,
  };
}

/** The result key beside a job's payload key (the worker knows the job by its envelope's payload key). */
export function resultKeyBeside(payloadKey: string, jobId: string): string {
  return resultKeyIn(prefixOfKey(payloadKey), jobId);
}

function resultKeyIn(partition: string, jobId: string): string {
  return `${partition}:result:${jobId}`;
}

/** How long a stored result outlives its job, for the waiter's last GET after a missed publish. */
export const RESULT_TTL_MS = 60_000;
/** How long an input outlives its deadline, so an unclaimed payload never lingers. */
export const PAYLOAD_GRACE_MS = 5_000;
