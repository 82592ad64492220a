// Owns the field benchmark's console visitor: signs in through the real console flow (sign-in form with its
// CSRF token, password, then a TOTP code from otplib) and loads pages, reading each page's server time from
// the API's access log ("request" line, arrival to finish) by the X-Request-Id it answered with.
import { generate } from 'otplib';
import { call, type Shot } from './measure';

export interface PageLoad {
  page: string;
  status: number;
  clientMs: number;
  /** From the access log; null when the line was not found. */
  serverMs: number | null;
}

const csrfOf = (html: string) => /name="_csrf" value="([^"]*)"/.exec(html)?.[1] ?? '';

export class ConsoleVisitor {
  private cookies = new Map<string, string>();

  constructor(private readonly base: string) {}

  private keep(s: Shot): void {
    const set = s.headers['set-cookie'] ?? [];
    for (const c of set) {
      const [pair] = c.split(';');
      const i = pair!.indexOf('=');
      this.cookies.set(pair!.slice(0, i), pair!.slice(i + 1));
    }
  }

  private headers(extra: Record<string, string> = {}): Record<string, string> {
    return { cookie: [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; '), ...extra };
  }

  async get(path: string): Promise<Shot> {
    const s = await call(`${this.base}${path}`, { headers: this.headers(), timeoutMs: 30_000 });
    this.keep(s);
    return s;
  }

  private async post(path: string, form: Record<string, string>): Promise<Shot> {
    const s = await call(`${this.base}${path}`, {
      method: 'POST',
      headers: this.headers({ 'content-type': 'application/x-www-form-urlencoded', origin: this.base }),
      body: new URLSearchParams(form).toString(),
      timeoutMs: 30_000,
    });
    this.keep(s);
    return s;
  }

  /** Password, then the TOTP step; throws with what the console answered when a step fails. */
  async signIn(email: string, password: string, totpSecret: string): Promise<void> {
    this.cookies.clear(); // a new visit: a failed earlier attempt leaves nothing behind
    const form = await this.get('/console/sign-in');
    const first = await this.post('/console/sign-in', { _csrf: csrfOf(form.body), email, password });
    if (first.status !== 303) throw new Error(`console sign-in answered ${first.status}`);
    const challenge = await this.get('/console/sign-in/two-factor');
    const second = await this.post('/console/sign-in/two-factor', { _csrf: csrfOf(challenge.body), code: await generate({ secret: totpSecret }) });
    if (second.status !== 303 || !String(second.headers.location ?? '').includes('/console/dashboard'))
      throw new Error(`console two-factor step answered ${second.status} ${String(second.headers.location ?? '')}`);
  }
}

/** The access log's time for the request with this id, or null. */
export function serverMsOf(logs: string[], requestId: string | null): number | null {
  if (!requestId) return null;
  for (let i = logs.length - 1; i >= 0; i--) {
    const line = logs[i]!;
    if (!line.includes(requestId) || !line.includes('"msg":"request"')) continue;
    try {
      const entry = JSON.parse(line) as { ms?: number; requestId?: string };
      if (entry.requestId === requestId && typeof entry.ms === 'number') return entry.ms;
    } catch {
      // not a JSON line
    }
  }
  return null;
}
