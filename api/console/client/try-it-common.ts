// What both "Try it" page scripts share: posting bytes to a session route with the page's CSRF token (the
// answer parsed, or an Error a person can read), the status line, the tries left, and building SVG elements.

/** The try-it routes' error body (the API's shape). */
interface ErrorBody {
  error?: { code?: string; message?: string };
}

/** POSTs `body` to a try-it route with X-CSRF-Token; resolves with the JSON answer, rejects with a readable Error. */
export async function post<T>(url: string, csrf: string, body: Blob, type: string): Promise<T> {
  const res = await fetch(url, {
    method: 'POST',
    credentials: 'same-origin',
    headers: { 'X-CSRF-Token': csrf, 'Content-Type': type || 'application/octet-stream' },
    body,
  });
  const json = (res.headers.get('content-type') ?? '').startsWith('application/json');
  if (!json) {
    throw new Error(
      res.status === 403 || res.status === 401
        ? 'Your session has ended or the page is old: reload it and sign in again.'
        : `The server answered ${res.status}.`,
    );
  }
  const b = (await res.json()) as T & ErrorBody;
  if (!res.ok) throw new Error((b.error?.message ? b.error.message : 'Request failed') + (b.error?.code ? ` (${b.error.code})` : ''));
  return b;
}

/** Writes the page's status line (#status), styled as an error when `isError`. */
export function say(text: string, isError = false): void {
  const s = document.getElementById('status');
  if (!s) return;
  s.textContent = text;
  s.classList.toggle('error', isError);
}

const SVGNS = 'http://www.w3.org/2000/svg';

/** "99 of 100 free tries left this month.": the allowance is monthly (the page says "Free: 100 tries a month"). */
export function triesLeft(t: { used: number; cap: number }): string {
  const left = Math.max(0, t.cap - t.used);
  return `${left} of ${t.cap} free ${t.cap === 1 ? 'try' : 'tries'} left this month.`;
}

export function svgEl(name: string, attrs: Record<string, string | number>, text?: string): SVGElement {
  const el = document.createElementNS(SVGNS, name);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  if (text !== undefined) el.textContent = text;
  return el;
}

/** The element with this id, which the page's markup always has (views/try-it.ts). */
export function required<T extends HTMLElement>(id: string): T {
  const el = document.getElementById(id);
  if (!el) throw new Error(`The page has no #${id}`);
  return el as T;
}
