// Codes an authenticator app would show, for one account's replay guard: the server accepts a code once per
// 30-second step, only for a step later than the last one used, with one step of drift either way (now-1,
// now and now+1; api/console/auth/totp.ts).
import { generate } from 'otplib';

const STEP_MS = 30_000;
/** now-1 and now are sent only with this much of the step left, so they are still accepted when checked. */
const MARGIN_MS = 3_000;

const stepAt = (ms: number) => Math.floor(ms / STEP_MS);

export class TotpSteps {
  private last = 0;

  /** Marks `step` (default: the current one) as used, e.g. by a setup code sent without this helper. */
  used(step = stepAt(Date.now())): void {
    this.last = Math.max(this.last, step);
  }

  /**
   * A code of the earliest step the server accepts now that is later than the last one used: three codes
   * can follow each other within one step. Beyond that it waits for the clock instead of sending a code the
   * server must refuse.
   */
  async laterCode(secret: string): Promise<string> {
    for (;;) {
      const t = Date.now();
      const now = stepAt(t);
      const leftInStep = (now + 1) * STEP_MS - t;
      const step = [now - 1, now, now + 1].find((s) => s > this.last && (s === now + 1 || leftInStep > MARGIN_MS));
      if (step !== undefined) {
        this.last = step;
        return generate({ secret, epoch: (step * STEP_MS) / 1000 });
      }
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}
