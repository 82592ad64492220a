// Owns the UTC month arithmetic of billing: tallies run from 00:00:00 UTC on the 1st.

/** 'YYYY-MM' of the UTC month containing `at`. */
export function monthOf(at: Date): string {
  return at.toISOString().slice(0, 7);
}

/** Whether a change effective in `month` ('YYYY-MM') applies at `at`: from 00:00 UTC on its 1st. None is due without a month. */
export function hasComeDue(month: string | null | undefined, at: Date): boolean {
  return !!month && monthOf(at) >= month;
}

/** Start of the next UTC month: when credits reset. */
export function nextMonthStart(at: Date): Date {
  return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1));
}

/** 'YYYY-MM' of the month after `month`. */
export function monthAfter(month: string): string {
  const [y, m] = month.split('-').map(Number) as [number, number];
  return monthOf(new Date(Date.UTC(y, m, 1)));
}

/** 'DD', the UTC day of the month of `at` (the credits' and counters' daily fields). */
export function dayOf(at: Date): string {
  return at.toISOString().slice(8, 10);
}

/** 'YYYY-MM-DDTHH' of the UTC hour containing `at` (metering granularity). */
export function hourOf(at: Date): string {
  return at.toISOString().slice(0, 13);
}

export type Clock = () => Date;
export const systemClock: Clock = () => new Date();
