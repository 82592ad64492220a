// Owns the engine's notion of time budget: one deadline (epoch ms) checked between and inside stages,
// and the error an overrun becomes. A file that is predictably too long is a 400 too_long instead (probe).
import { AppError } from '../../../shared/errors';

/** The analysis ran past its deadline (load, not the file): 503 so a client may retry later. */
export class DeadlineExceededError extends AppError {
  constructor(stage: string) {
    super('processing_timeout', `Analysis did not finish within the processing time-out (during ${stage})`, 503);
  }
}

export class Deadline {
  constructor(readonly at: number = Number.POSITIVE_INFINITY) {}

  remainingMs(): number {
    return this.at - Date.now();
  }

  /** Throws when the deadline has passed; called at stage boundaries and every few windows. */
  check(stage: string): void {
    if (Date.now() >= this.at) throw new DeadlineExceededError(stage);
  }
}
