// Owns the Redis key and channel names shared by API processes and workers.

export interface QueueKeys {
  /** The input bytes of one job; written by the API, taken (GETDEL) by the worker. */
  payload(jobId: string): string;
  /** The result of one job, kept briefly for a waiter that missed the publish. */
  result(jobId: string): string;
  /** The pub/sub channel of one API process; workers publish finished jobs to it. */
  replies(processId: string): string;
}

export function queueKeys(prefix: string): QueueKeys {
  return {
    payload: (jobId) => `${prefix}:payload:${jobId}`,
    result: (jobId) => `${prefix}:result:${jobId}`,
    replies: (processId) => `${prefix}:replies:${processId}`,
  };
}

/** How long a stored result outlives its job, for the waiter's last GET after a missed publish. */
export const RESULT_TTL_MS = 60_000;
/** How long an input outlives its deadline, so an unclaimed payload never lingers. */
export const PAYLOAD_GRACE_MS = 5_000;
