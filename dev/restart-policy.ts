// Owns the supervisor's restart policy: a child that crashes after a healthy run is restarted at once; only a
// crash loop (exits soon after start, again and again) backs off, doubling up to a cap.

/** A child that ran this long before exiting was healthy: its crash count starts again from zero. */
export const HEALTHY_RUN_MS = 60_000;
const FIRST_RESTART_DELAY_MS = 250;
const MAX_RESTART_DELAY_MS = 30_000;

/** The wait before restarting after `crashLoop` consecutive short-lived runs (0: restart at once). */
export function restartDelayMs(crashLoop: number): number {
  if (crashLoop <= 0) return 0;
  return Math.min(MAX_RESTART_DELAY_MS, FIRST_RESTART_DELAY_MS * 2 ** Math.min(crashLoop - 1, 16));
}
