// Owns the console's e-mail messages (verification link, welcome, password reset, usage alerts): subject, plain text and simple HTML.
import { monthName, utc } from '../views/format';

export interface RenderedMail {
  template: string;
  subject: string;
  text: string;
  html: string;
}

const PRODUCT = 'Liveness API';

function esc(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function htmlBody(paragraphs: string[], action?: { href: string; label: string }): string {
  const button = action
    ? `<p style="margin:28px 0"><a href="${esc(action.href)}" style="background:#2f5bea;color:#fff;padding:12px 20px;border-radius:6px;text-decoration:none;font-weight:600">${esc(action.label)}</a></p>`
    : '';
  return `<!doctype html><html><body style="font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;color:#1d2433;line-height:1.5;max-width:560px;margin:0 auto;padding:24px">
<p style="font-weight:700;font-size:18px">${PRODUCT}</p>
${paragraphs.map((p) => `<p>${p}</p>`).join('\n')}
${button}
<p style="color:#5b6478;font-size:13px">You receive this message because this address was registered for the ${PRODUCT} console.</p>
</body></html>`;
}

export function verificationMail(o: { firstName: string; link: string; validHours: number }): RenderedMail {
  return {
    template: 'verification',
    subject: `Confirm your e-mail address for the ${PRODUCT}`,
    text: [
      `Hello ${o.firstName},`,
      '',
      `Thanks for subscribing to the ${PRODUCT}. Confirm your e-mail address and choose a password:`,
      '',
      o.link,
      '',
      `The link works once and expires in ${o.validHours} hours. If it has expired, open it anyway: the page lets you ask for a new one.`,
      "If you didn't register, ignore this message.",
    ].join('\n'),
    html: htmlBody(
      [
        `Hello ${esc(o.firstName)},`,
        `Thanks for subscribing to the ${PRODUCT}. Confirm your e-mail address and choose a password.`,
        `The link works once and expires in ${o.validHours} hours. If it has expired, open it anyway: the page lets you ask for a new one.`,
      ],
      { href: o.link, label: 'Confirm e-mail and set password' },
    ),
  };
}

export function welcomeMail(o: { firstName: string; dashboardUrl: string; docsHint: string }): RenderedMail {
  return {
    template: 'welcome',
    subject: `Welcome to the ${PRODUCT}`,
    text: [
      `Hello ${o.firstName},`,
      '',
      'Your account is ready and two-factor sign-in is on. From the dashboard you can:',
      '- see your key prefixes and regenerate a key,',
      "- watch this month's usage and remaining credits,",
      '- change your plan and switch the hard cap.',
      '',
      o.dashboardUrl,
      '',
      o.docsHint,
    ].join('\n'),
    html: htmlBody(
      [
        `Hello ${esc(o.firstName)},`,
        "Your account is ready and two-factor sign-in is on. From the dashboard you can see your key prefixes and regenerate a key, watch this month's usage and remaining credits, change your plan and switch the hard cap.",
        esc(o.docsHint),
      ],
      { href: o.dashboardUrl, label: 'Open the dashboard' },
    ),
  };
}

export function passwordResetMail(o: { firstName: string; link: string; validMinutes: number; support: string }): RenderedMail {
  const lines = [
    `Someone (hopefully you) asked to reset the password of your ${PRODUCT} console account.`,
    `The link works once and expires in ${o.validMinutes} minutes. Resetting signs you out everywhere.`,
    `If you did not ask for this, ignore this message: your password stays as it is. Questions: ${o.support}.`,
  ];
  return {
    template: 'password-reset',
    subject: `Reset your ${PRODUCT} console password`,
    text: [`Hello ${o.firstName},`, '', lines[0], '', o.link, '', lines[1], lines[2]].join('\n'),
    html: htmlBody([`Hello ${esc(o.firstName)},`, esc(lines[0]!), esc(lines[1]!), esc(lines[2]!)], { href: o.link, label: 'Choose a new password' }),
  };
}

export function passwordChangedMail(o: { firstName: string; support: string }): RenderedMail {
  const line = `The password of your ${PRODUCT} console account was just changed, and every signed-in session was ended. If this was not you, write to ${o.support} at once.`;
  return {
    template: 'password-changed',
    subject: `Your ${PRODUCT} console password was changed`,
    text: [`Hello ${o.firstName},`, '', line].join('\n'),
    html: htmlBody([`Hello ${esc(o.firstName)},`, esc(line)]),
  };
}

export function authenticatorReplacedMail(o: { firstName: string; support: string }): RenderedMail {
  const line = `The authenticator app of your ${PRODUCT} console account was just replaced: codes from the previous app no longer work, the recovery codes were replaced with a new set, and every other signed-in session was ended. If this was not you, write to ${o.support} at once.`;
  return {
    template: 'authenticator-replaced',
    subject: `Your ${PRODUCT} console authenticator app was replaced`,
    text: [`Hello ${o.firstName},`, '', line].join('\n'),
    html: htmlBody([`Hello ${esc(o.firstName)},`, esc(line)]),
  };
}

export function usageAlertMail(o: {
  firstName: string;
  threshold: number;
  used: number;
  limit: number;
  month: string;
  hardCap: boolean;
  perCallUsd: number | null;
  resetAt: Date;
  dashboardUrl: string;
}): RenderedMail {
  const n = (v: number) => v.toLocaleString('en-US');
  const reset = utc(o.resetAt); // the console's one date style
  const next =
    o.threshold >= 100
      ? o.hardCap
        ? `The hard cap is on: detection answers 429 quota_exceeded until ${reset}. Upgrade, or switch the hard cap off, to continue.`
        : `The hard cap is off: further calls continue and are billed as overage${o.perCallUsd === null ? '' : ` at $${o.perCallUsd.toFixed(2)} per call`}.`
      : o.hardCap
        ? `When the limit is reached, detection stops until ${reset} (the hard cap is on).`
        : `Past the limit, calls continue and are billed as overage${o.perCallUsd === null ? '' : ` at $${o.perCallUsd.toFixed(2)} per call`}.`;
  const head = `You have used ${n(o.used)} of ${n(o.limit)} included calls for ${monthName(o.month)} (${o.threshold} % alert).`;
  return {
    template: `usage-alert-${o.threshold}`,
    subject: `${PRODUCT}: ${o.threshold} % of this month's calls used`,
    text: [
      `Hello ${o.firstName},`,
      '',
      head,
      next,
      '',
      o.dashboardUrl,
      '',
      'You receive this because usage alerts are on; switch them off under Security in the console.',
    ].join('\n'),
    html: htmlBody(
      [`Hello ${esc(o.firstName)},`, esc(head), esc(next), 'You receive this because usage alerts are on; switch them off under Security in the console.'],
      {
        href: o.dashboardUrl,
        label: 'Open the dashboard',
      },
    ),
  };
}

/** To the owner of an address someone tried to register again: registration answers alike for known and new addresses. */
export function alreadyRegisteredMail(o: { firstName: string; signInUrl: string; resetUrl: string; support: string }): RenderedMail {
  const line = `Someone (perhaps you) just tried to register a new ${PRODUCT} account with this e-mail address. It already has an account, so nothing was created.`;
  const next = `If it was you, sign in at ${o.signInUrl}, or set a new password at ${o.resetUrl} if you forgot it. If it was not you, you can ignore this message; write to ${o.support} with any question.`;
  return {
    template: 'already-registered',
    subject: `Your ${PRODUCT} console account already exists`,
    text: [`Hello ${o.firstName},`, '', line, '', next].join('\n'),
    html: htmlBody([`Hello ${esc(o.firstName)},`, esc(line), esc(next)], { href: o.signInUrl, label: 'Sign in' }),
  };
}
