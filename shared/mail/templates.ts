// Owns the console's e-mail messages (verification link, welcome): subject, plain text and simple HTML.
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
      '- watch this month\'s usage and remaining credits,',
      '- change your plan and switch the hard cap.',
      '',
      o.dashboardUrl,
      '',
      o.docsHint,
    ].join('\n'),
    html: htmlBody(
      [
        `Hello ${esc(o.firstName)},`,
        'Your account is ready and two-factor sign-in is on. From the dashboard you can see your key prefixes and regenerate a key, watch this month\'s usage and remaining credits, change your plan and switch the hard cap.',
        esc(o.docsHint),
      ],
      { href: o.dashboardUrl, label: 'Open the dashboard' },
    ),
  };
}
