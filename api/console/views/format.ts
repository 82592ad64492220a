// Owns how numbers, money and times read on the console (UTC everywhere, like billing).
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

export const int = (n: number) => n.toLocaleString('en-US');

/** "1 call", "2 calls": a count with its noun in the right number. */
export function plural(n: number, one: string, many = `${one}s`): string {
  return `${int(n)} ${n === 1 ? one : many}`;
}

export const calls = (n: number) => plural(n, 'call');

/**
 * The console's one date style, "1 Dec 2026" (with a time: "1 Dec 2026, 00:00 UTC"), for every date it
 * shows: activity, keys, plan changes, the usage chart and its table.
 */
export function day(d: Date | string): string {
  const t = typeof d === 'string' ? new Date(d.length === 10 ? `${d}T00:00:00Z` : d) : d;
  return `${t.getUTCDate()} ${MONTHS[t.getUTCMonth()]} ${t.getUTCFullYear()}`;
}

/** "1 Dec 2026" from "2026-12": the first day of a month, for "takes effect on …". */
export function firstOf(ym: string): string {
  return day(`${ym}-01`);
}

export function usd(n: number): string {
  return n.toLocaleString('en-US', { style: 'currency', currency: 'USD', minimumFractionDigits: 2, maximumFractionDigits: 2 });
}

export function usdPlain(n: number): string {
  return Number.isInteger(n) ? `$${int(n)}` : usd(n);
}

/** "1 Dec 2026, 00:00 UTC" */
export function utc(d: Date | string | null | undefined): string {
  if (!d) return '—';
  const t = typeof d === 'string' ? new Date(d) : d;
  const hh = String(t.getUTCHours()).padStart(2, '0');
  const mm = String(t.getUTCMinutes()).padStart(2, '0');
  return `${day(t)}, ${hh}:${mm} UTC`;
}

/** "December 2026" from "2026-12". */
export function monthName(ym: string): string {
  const [y, m] = ym.split('-').map(Number) as [number, number];
  const long = new Date(Date.UTC(y, m - 1, 1)).toLocaleString('en-US', { month: 'long', timeZone: 'UTC' });
  return `${long} ${y}`;
}
