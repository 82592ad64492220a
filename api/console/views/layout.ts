// Owns the page frames: the centred card of onboarding, sign-in and the error page, and the dashboard's app
// frame with its navigation. Every page links the one stylesheet and the one script (CSP: 'self' only); the
// pieces inside pages live in components.ts.
import { assetUrl } from '../assets/serve';
import { csrfField, supportLink } from './components';
import { html, type SafeHtml } from './html';

export interface PageContext {
  csrf: string | null;
  flash?: { kind: 'success' | 'info' | 'error'; text: string } | null;
  /** Shows the local-mode mailbox link. */
  devMailbox: boolean;
  /** The support address (SUPPORT_EMAIL). */
  support: string;
  /** Past the password (two-factor step or fully signed in): the card's footer offers no "Sign in" link. */
  signedIn?: boolean;
}

export interface AppContext extends PageContext {
  csrf: string;
  email: string;
  company: string;
}

export type NavId = 'overview' | 'keys' | 'plan' | 'emotion' | 'activity' | 'security' | 'liveness-try' | 'emotion-try';

const NAV: Array<{ id: NavId; href: string; label: string }> = [
  { id: 'overview', href: '/console/dashboard', label: 'Overview' },
  { id: 'keys', href: '/console/keys', label: 'API keys' },
  { id: 'plan', href: '/console/plan', label: 'Plan & billing' },
  { id: 'emotion', href: '/console/emotion', label: 'Emotion API' },
  { id: 'liveness-try', href: '/console/liveness/try', label: 'Try liveness' },
  { id: 'emotion-try', href: '/console/emotion/try', label: 'Try emotion' },
  { id: 'activity', href: '/console/activity', label: 'Activity' },
];

function head(title: string): SafeHtml {
  return html`<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${title} · Liveness API console</title>
<link rel="icon" type="image/svg+xml" href="${assetUrl('icon.svg')}">
<link rel="stylesheet" href="${assetUrl('app.css')}">
<script src="${assetUrl('app.js')}" defer></script>
</head>`;
}

const brand = html`<a class="brand" href="/console/dashboard"><span class="brand-mark" aria-hidden="true">LA</span>Liveness API</a>`;

function devbar(ctx: PageContext): SafeHtml | string {
  return ctx.devMailbox ? html`<div class="devbar">Local mode: outgoing e-mail is kept in the <a href="/console/dev/mailbox">local mailbox</a>.</div>` : '';
}

function flashBox(flash: PageContext['flash']): SafeHtml | string {
  if (!flash) return '';
  const role = flash.kind === 'error' ? 'alert' : 'status';
  return html`<div class="alert alert-${flash.kind}" role="${role}"><p>${flash.text}</p></div>`;
}

const STEPS = ['Your details', 'Confirm e-mail', 'Password', 'API keys', 'Two-factor'];

/** Onboarding and sign-in: a single card. `step` draws the labelled onboarding progress (1..5). */
export function authPage(ctx: PageContext, o: { title: string; body: SafeHtml; wide?: boolean; step?: number }): string {
  const steps = o.step
    ? html`<ol class="steps" aria-label="Account set-up, step ${o.step} of ${STEPS.length}">${STEPS.map(
        (label, i) =>
          html`<li class="${i + 1 < o.step! ? 'done' : i + 1 === o.step ? 'done current' : ''}"${i + 1 === o.step ? html` aria-current="step"` : ''}><span class="step-n">${i + 1}</span> <span class="step-label">${label}</span></li>`,
      )}</ol>`
    : '';
  return `<!doctype html>\n${
    html`<html lang="en">
${head(o.title)}
<body>
${devbar(ctx)}
<div class="auth-wrap">
  ${brand}
  <main class="auth-card${o.wide ? ' wide' : ''}" id="main">
    ${steps}
    ${flashBox(ctx.flash)}
    ${o.body}
  </main>
  <p class="auth-foot">Need help? Write to ${supportLink(ctx)}.${ctx.signedIn ? '' : html` &nbsp;·&nbsp; <a href="/console/sign-in">Sign in</a>`}</p>
</div>
</body>
</html>`.value
  }`;
}

/** The dashboard frame: top bar with navigation and sign-out, then the page. */
export function appPage(ctx: AppContext, o: { title: string; nav: NavId; body: SafeHtml }): string {
  return `<!doctype html>\n${
    html`<html lang="en">
${head(o.title)}
<body>
<a class="skip" href="#main">Skip to content</a>
${devbar(ctx)}
<header class="topbar">
  <div class="topbar-inner">
    ${brand}
    <nav class="nav" aria-label="Console">
      ${NAV.map((n) => html`<a href="${n.href}"${n.id === o.nav ? html` aria-current="page"` : ''}>${n.label}</a>`)}
    </nav>
    <div class="account-menu">
      <a href="/console/security"${o.nav === 'security' ? html` aria-current="page"` : ''} class="btn btn-secondary btn-sm">Security</a>
      <form method="post" action="/console/sign-out" class="inline">${csrfField(ctx.csrf)}<button class="btn btn-secondary btn-sm" type="submit">Sign out</button></form>
    </div>
  </div>
</header>
<main class="app" id="main">
  ${flashBox(ctx.flash)}
  ${o.body}
</main>
<footer class="site">Signed in as ${ctx.email}${ctx.company ? ` (${ctx.company})` : ''} · All times UTC · <a href="/console/activity">Activity</a> · Help: ${supportLink(ctx)}</footer>
</body>
</html>`.value
  }`;
}

/** A full page for an error: what happened and where to go next (no dead ends). */
export function errorPage(
  ctx: PageContext,
  o: { status: number; code: string; title: string; message: string; next?: { href: string; label: string } },
): string {
  const next = o.next ?? { href: '/console/dashboard', label: 'Go to the console' };
  return authPage(ctx, {
    title: o.title,
    body: html`<h1>${o.title}</h1>
<p class="lead" data-error-code="${o.code}">${o.message}</p>
<p class="muted small">Error code: <code>${o.code}</code> (HTTP ${o.status})</p>
<div class="actions"><a class="btn btn-primary" href="${next.href}">${next.label}</a></div>`,
  });
}
