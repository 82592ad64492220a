// Test support for the console: the liveness API with the console mounted, a private mail sink, and a
// cookie-keeping form client that behaves like a browser without JavaScript.
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startLivenessApi, type RunningLivenessApi } from '../../../api/liveness/server';
import { HmacRegistrationSigner, newLocalSubscription, registrationUrl } from '../../../api/console/links/registration-token';
import { startLocalMail, type LocalMail } from '../../../dev/engines/local-mail';
import { linksIn, listMessages, type StoredMessage } from '../../../shared/mail/mailbox';
import type { PlanId } from '../../../shared/billing/plans';
import { marketplaceSecret, signEntitlement } from '../../../shared/marketplace/entitlements';
import type { Clock } from '../../../shared/billing/month';
import { TotpSteps } from '../../support/totp';
import type { Config } from '../../../shared/config';
import { isolation } from '../../support/engines';
import { quietLog, testConfig } from '../../support/config';

export interface ConsoleHarness {
  api: RunningLivenessApi;
  /** The database this harness's API uses (a worker started for it must use the same). */
  dbName: string;
  config: Config;
  mail: LocalMail;
  base: string;
  /** A registration link as `admin marketplace subscribe` mints it. */
  subscribe(plan: PlanId): { url: string; subscriptionId: string; marketplaceAccountId: string };
  /** Delivers a signed entitlement event as the marketplace would (POST /marketplace/entitlements). */
  entitle(
    subscriptionId: string,
    plan: PlanId,
    o?: { id?: string; secret?: string; nowMs?: number; at?: Date },
  ): Promise<{ status: number; body: Record<string, unknown> }>;
  /** Delivers a signed unsubscribe.pending (the customer cancelled) or unsubscribe.success (it has ended) event. */
  unsubscribe(
    subscriptionId: string,
    type: 'unsubscribe.pending' | 'unsubscribe.success',
    o?: { id?: string; at?: Date },
  ): Promise<{ status: number; body: Record<string, unknown> }>;
  /** Waits for a message to `to` whose subject matches, newest first. */
  waitForMail(to: string, subject: RegExp, timeoutMs?: number): Promise<StoredMessage & { links: string[] }>;
  stop(): Promise<void>;
}

export async function startConsole(label: string, overrides: Record<string, string> = {}, clock?: Clock): Promise<ConsoleHarness> {
  const { prefix, dbName } = isolation(label);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `lc-${label}-mail-`));
  const mail = await startLocalMail({ dir });
  const config = testConfig(prefix, { SMTP_URL: mail.url, MAILBOX_DIR: dir, ...overrides });
  const api = await startLivenessApi({ config, log: quietLog, dbName, console: true, clock });
  const base = `http://127.0.0.1:${api.port}`;
  const signer = new HmacRegistrationSigner(config.APP_SECRET!);
  /** Signs the event as the marketplace would and POSTs it; `occurredAt` is now unless the test dates it. */
  async function deliver(event: Record<string, string>, o: { secret?: string; nowMs?: number } = {}) {
    const body = JSON.stringify(event);
    const headers = signEntitlement(o.secret ?? marketplaceSecret(config)!, body, o.nowMs);
    const res = await fetch(`${base}/marketplace/entitlements`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  }
  return {
    api,
    dbName,
    config,
    mail,
    base,
    subscribe(plan) {
      const sub = newLocalSubscription(plan);
      return { url: registrationUrl(base, signer.sign(sub)), subscriptionId: sub.subscriptionId, marketplaceAccountId: sub.marketplaceAccountId };
    },
    async entitle(subscriptionId, plan, o = {}) {
      const occurredAt = (o.at ?? new Date()).toISOString();
      return deliver({ id: o.id ?? `evt_test_${randomUUID()}`, type: 'entitlement.updated', occurredAt, subscriptionId, plan }, o);
    },
    async unsubscribe(subscriptionId, type, o = {}) {
      return deliver({ id: o.id ?? `evt_test_${randomUUID()}`, type, occurredAt: (o.at ?? new Date()).toISOString(), subscriptionId });
    },
    async waitForMail(to, subject, timeoutMs = 10_000) {
      const until = Date.now() + timeoutMs;
      for (;;) {
        const found = listMessages(dir).find((m) => m.to.includes(to) && subject.test(m.subject));
        if (found) return { ...found, links: linksIn(found) };
        if (Date.now() > until) throw new Error(`no mail to ${to} matching ${subject} within ${timeoutMs} ms`);
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    async stop() {
      await api.stop();
      await mail.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface Page {
  status: number;
  url: string;
  location: string | null;
  headers: Headers;
  html: string;
}

/** A form-posting client with a cookie jar: what a browser does with these pages, minus the script. */
export class FormClient {
  readonly cookies = new Map<string, string>();

  constructor(readonly base: string) {}

  private cookieHeader(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  private remember(res: Response): void {
    for (const line of res.headers.getSetCookie()) {
      const [pair, ...attrs] = line.split(';');
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq).trim();
      const value = pair!.slice(eq + 1).trim();
      if (attrs.some((a) => /max-age=0/i.test(a)) || value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  async request(method: string, pathOrUrl: string, form?: Record<string, string>, headers: Record<string, string> = {}): Promise<Page> {
    const url = pathOrUrl.startsWith('http') ? pathOrUrl : `${this.base}${pathOrUrl}`;
    const res = await fetch(url, {
      method,
      redirect: 'manual',
      headers: { cookie: this.cookieHeader(), ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}), ...headers },
      body: form ? new URLSearchParams(form).toString() : undefined,
    });
    this.remember(res);
    return { status: res.status, url, location: res.headers.get('location'), headers: res.headers, html: await res.text() };
  }

  get(p: string): Promise<Page> {
    return this.request('GET', p);
  }

  /** GET, following same-site redirects like a browser. */
  async open(p: string, hops = 5): Promise<Page> {
    let page = await this.get(p);
    while (page.status >= 300 && page.status < 400 && page.location && hops-- > 0) page = await this.get(page.location);
    return page;
  }

  /** POSTs a form with the CSRF token of `page` (the page the form was on); follows the redirect. */
  async submit(page: Page, action: string, fields: Record<string, string>, follow = true): Promise<Page> {
    const res = await this.request('POST', action, { _csrf: csrfOf(page.html), ...fields });
    if (follow && res.status === 303 && res.location) return this.open(res.location);
    return res;
  }
}

export function csrfOf(html: string): string {
  const m = /name="_csrf" value="([^"]+)"/.exec(html);
  if (!m) throw new Error('page has no CSRF field');
  return m[1]!;
}

/** Text content of the element with this id (first match), tags stripped. */
export function textOf(html: string, id: string): string {
  const m = new RegExp(`id="${id}"[^>]*>([\\s\\S]*?)</`).exec(html);
  return m
    ? m[1]!
        .replace(/<[^>]+>/g, '')
        .replace(/&#(\d+);/g, (_, c) => String.fromCharCode(Number(c)))
        .trim()
    : '';
}

export function decodeEntities(s: string): string {
  return s.replace(/&#(\d+);/g, (_, c) => String.fromCharCode(Number(c))).replace(/&amp;/g, '&');
}

export interface Onboarded {
  client: FormClient;
  email: string;
  password: string;
  primaryKey: string;
  secondaryKey: string;
  customerId: string;
}

let counter = 0;

/** Marketplace link → registration → verification mail → password → keys: the no-script path. */
export async function registerAndActivate(h: ConsoleHarness, plan: PlanId = 'starter', password = 'Sturdy#Passw0rd'): Promise<Onboarded> {
  const client = new FormClient(h.base);
  const email = `user${++counter}-${Date.now()}@example.com`;
  const form = await client.open(h.subscribe(plan).url);
  const token = decodeEntities(/name="token" value="([^"]+)"/.exec(form.html)![1]!);
  const sent = await client.submit(form, '/console/register', {
    token,
    firstName: 'Grace',
    lastName: 'Hopper',
    email,
    company: 'Navy Labs',
    website: 'https://navy-labs.example.com',
  });
  if (sent.status !== 200) throw new Error(`registration answered ${sent.status}`);
  const mail = await h.waitForMail(email, /Confirm/);
  const passwordPage = await client.open(mail.links[0]!);
  // Post/Redirect/Get: the keys are on the page the activation redirects to (once).
  const activated = await client.submit(passwordPage, '/console/activate', { password, confirm: password });
  if (activated.status !== 200 || !activated.url.endsWith('/console/activate/keys'))
    throw new Error(`activation answered ${activated.status} at ${activated.url}`);
  const account = await h.api.deps.accounts.getByEmail(email);
  return {
    client,
    email,
    password,
    primaryKey: textOf(activated.html, 'primary-key'),
    secondaryKey: textOf(activated.html, 'secondary-key'),
    customerId: account!._id,
  };
}

/** The marketplace subscription of an onboarded account. */
export async function subscriptionOf(h: ConsoleHarness, customerId: string): Promise<string> {
  return (await h.api.deps.accounts.get(customerId))!.marketplace!.subscriptionId!;
}

export interface SignedIn extends Onboarded {
  /** The account's TOTP codes from here on: its replay guard has seen the setup code's step. */
  totp: TotpSteps;
}

/** Onboarded, signed in with e-mail and password and TOTP set up: on the dashboard. */
export async function fullySignedIn(h: ConsoleHarness, plan: PlanId = 'starter'): Promise<SignedIn> {
  const user = { ...(await registerAndActivate(h, plan)), totp: new TotpSteps() };
  const setup = await signIn(user.client, user.email, user.password);
  const codes = await user.client.submit(setup, '/console/two-factor/setup', { code: await user.totp.laterCode(secretOf(setup)) });
  if (!codes.url.endsWith('/console/two-factor/recovery-codes')) throw new Error(`expected the recovery codes, got ${codes.url} (${codes.status})`);
  const dash = await user.client.open('/console/dashboard');
  if (dash.status !== 200) throw new Error(`expected the dashboard, got ${dash.url} (${dash.status})`);
  return user;
}

/** E-mail and password; returns the page the redirect leads to (TOTP setup or challenge). */
export async function signIn(client: FormClient, email: string, password: string): Promise<Page> {
  const form = await client.open('/console/sign-in');
  return client.submit(form, '/console/sign-in', { email, password });
}

/** The base32 secret shown on the TOTP setup page. */
export function secretOf(setupPage: Page): string {
  return /data-secret="([A-Z2-7]+)"/.exec(setupPage.html)![1]!;
}
