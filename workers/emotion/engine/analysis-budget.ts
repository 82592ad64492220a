// Owns the engine's time budget for one analysis: an instant (epoch ms, none when run offline) checked
// between and inside stages, and the 503 processing_timeout an overrun becomes. Not the request-wide
// shared/deadline.ts (every awaited step of a request, 503 service_unavailable): the engine's stages are
// mostly synchronous, so it polls. A file that is predictably too long is a 400 too_long instead (probe).
import { AppError } from '../../../shared/errors';

/** The analysis ran past its deadline (load, not the file): 503 so a client may retry later. */
export class AnalysisTimeoutError extends AppError {
  constructor(stage: string) {
    super('processing_timeout', `Analysis did not finish within the processing time-out (during ${stage})`, 503);
  }
}

export class AnalysisBudget {
  constructor(readonly at: number = Number.POSITIVE_INFINITY) {}

  remainingMs(): number {
    return this.at - Date.now();
  }

  /** Throws when the deadline has passed; called at stage boundaries and every few windows. */
  check(stage: string): void {
    if (Date.now() >= this.at) throw new AnalysisTimeoutError(stage);
  }
}
