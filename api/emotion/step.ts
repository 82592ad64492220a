// Owns one emotion analysis as a domain step, free of HTTP: whose fair use and fair share a call counts in, running
// the job, and charging the rest of the audio's seconds once the job tells them. The route (route.ts) maps it to HTTP.
import type { AuthenticatedToken } from '../../shared/accounts/emotion-tokens';
import type { Deadline } from '../../shared/deadline';
import type { Logger } from '../../shared/logger';
import { JobTimeoutError, type JobAnswer, type JobClient } from '../../shared/queues/job-client';
import type { EmotionInput, EmotionResult } from '../../shared/queues/contracts';
import type { Throttle } from '../http/throttle';

/**
 * The fair-use bucket a call spends from: its account's when the token has one, so every token of an account
 * shares one allowance and minting more tokens buys none; a token without an account (issued by an operator
 * with the admin CLI) has its own. Its tokens are seconds of audio: the work an analysis costs grows with the
 * audio's duration, not with the number of calls.
 */
export function fairUseSubject(token: Pick<AuthenticatedToken, '_id' | 'customerId'>): string {
  return `emotion-audio:${tenantOf(token)}`;
}

/** Whose fair share of the workers a call counts in: the token's account, or the token itself without one. */
function tenantOf(token: Pick<AuthenticatedToken, '_id' | 'customerId'>): string {
  return token.customerId ?? `token:${token._id}`;
}

export interface AnalysisDeps {
  jobs: JobClient;
  /** Fair use in seconds of audio, per account (fairUseSubject). */
  throttle: Throttle;
  /** Seconds of audio a call takes before its duration is known (the rest is charged once it is decoded). */
  upfrontSeconds: number;
  /** Seconds of audio a refused job is charged per second of its worker time (it has no decoded duration). */
  secondsPerWorkerSecond: number;
  /** The whole request's budget: what a job still running when it ran out is charged for. */
  budgetMs: number;
}

/** Who calls and by when. */
export interface AnalysisCaller {
  token: AuthenticatedToken;
  requestId: string;
  deadline: Deadline;
  log: Logger;
}

/** Runs the analysis of `audio` (the upfront seconds already taken by the route) and answers the job's value. */
export async function analyse(d: AnalysisDeps, caller: AnalysisCaller, audio: Buffer, contentType: string): Promise<JobAnswer<EmotionResult>> {
  const { token } = caller;
  const input: EmotionInput = { contentType, tokenId: token._id };
  // The rest of the audio's duration (a debt the account's next calls wait for), not awaited by the answer. A
  // refused job (corrupt, out of time) has no duration: its worker time, at the engine's low pace, stands in; a
  // job still running when the budget ran out, the whole budget.
  const charge = (workerMs: number, durationSeconds?: number) => {
    const rest = Math.ceil(durationSeconds ?? (workerMs / 1000) * d.secondsPerWorkerSecond) - d.upfrontSeconds;
    d.throttle.charge(fairUseSubject(token), rest).catch((err: unknown) => caller.log.warn({ err, rest }, 'audio seconds not charged'));
  };
  try {
    return await d.jobs.call<EmotionInput, EmotionResult>({
      requestId: caller.requestId,
      input,
      payload: audio,
      deadline: caller.deadline,
      tenant: tenantOf(token),
      log: caller.log,
      onOutcome: (outcome) => charge(outcome.workerMs, outcome.ok ? outcome.value.summary.duration : undefined),
    });
  } catch (err) {
    if (err instanceof JobTimeoutError && err.wasStarted) charge(d.budgetMs);
    throw err;
  }
}
