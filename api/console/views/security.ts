// Owns the Security page (password, authenticator app, recovery codes, usage alert e-mails) and the new
// recovery codes it shows once.
import { html } from './html';
import { appPage, type AppContext } from './layout';
import { int, utc } from './format';
import { csrfField, passwordFields, recoveryCodesBody } from './components';

export function securityPage(
  ctx: AppContext,
  o: {
    recoveryCodesLeft: number;
    usageAlerts: boolean;
    /** When the password was last set: changed (or reset), or else chosen at activation. */
    password: { at: Date; how: 'changed' | 'activation' } | null;
    error?: { form: 'password' | 'codes'; text: string };
  },
): string {
  const err = (form: 'password' | 'codes') => (o.error?.form === form ? html`<div class="alert alert-error" role="alert"><p>${o.error.text}</p></div>` : '');
  return appPage(ctx, {
    title: 'Security',
    nav: 'security',
    body: html`<div class="page-head"><div><h1>Security</h1><p>Your password, authenticator app, two-factor recovery codes and usage alert e-mails.</p></div></div>
<div class="grid">
  <section class="card span-6" aria-labelledby="pw-h" id="change-password">
    <h2 id="pw-h">Change password</h2>
    <p class="small muted" id="password-set">${
      o.password === null ? '' : o.password.how === 'changed' ? `Last changed ${utc(o.password.at)}.` : `Set at activation, ${utc(o.password.at)}.`
    } Changing it signs out every other session.</p>
    ${err('password')}
    <form method="post" action="/console/security/password" data-once>
      ${csrfField(ctx.csrf)}
      <input type="email" name="username" value="${ctx.email}" autocomplete="username" hidden>
      <div class="field"><label for="current">Current password</label><input id="current" name="current" type="password" required autocomplete="current-password"></div>
      ${passwordFields()}
      <div class="field"><label for="sec-code">Code from your authenticator app (or a recovery code)</label>
        <input id="sec-code" name="code" type="text" required autocomplete="one-time-code" inputmode="text" maxlength="16" class="mono"></div>
      <button class="btn btn-primary" type="submit">Change password</button>
    </form>
  </section>
  <div class="span-6 grid">
    <section class="card span-12" aria-labelledby="rc-h" id="recovery">
      <h2 id="rc-h">Recovery codes</h2>
      <p>Codes left: <strong id="recovery-left">${int(o.recoveryCodesLeft)}</strong> of 10. Each one signs you in once in place of a code from your phone.</p>
      ${err('codes')}
      <form method="post" action="/console/security/recovery-codes" data-once>
        ${csrfField(ctx.csrf)}
        <div class="field"><label for="rc-code">6-digit code from your authenticator app</label>
          <input id="rc-code" name="code" class="code-input" inputmode="numeric" autocomplete="one-time-code" maxlength="6" required></div>
        <button class="btn btn-secondary" type="submit">Make ten new codes</button>
      </form>
      <p class="small muted">New codes replace all the old ones.</p>
    </section>
    <section class="card span-12" aria-labelledby="authenticator-h" id="authenticator">
      <h2 id="authenticator-h">Authenticator app</h2>
      <p class="small">New phone, or the old one lost? Replace the app that makes your 6-digit codes. You confirm it is you first; the current app keeps working until a code from the new one is accepted.</p>
      <form method="post" action="/console/security/authenticator" data-once>
        ${csrfField(ctx.csrf)}<button class="btn btn-secondary" type="submit" id="replace-authenticator-start">Replace authenticator app</button>
      </form>
    </section>
    <section class="card span-12" aria-labelledby="alerts-h" id="alerts">
      <h2 id="alerts-h">Usage alert e-mails</h2>
      <p class="small">An e-mail to ${ctx.email} when this month's calls reach 80 % and 100 % of your limit (each at most once a month).</p>
      <form method="post" action="/console/security/alerts">
        ${csrfField(ctx.csrf)}<input type="hidden" name="on" value="${o.usageAlerts ? 'off' : 'on'}">
        <p>Alerts are <strong id="alerts-state">${o.usageAlerts ? 'on' : 'off'}</strong>.</p>
        <button class="btn ${o.usageAlerts ? 'btn-secondary' : 'btn-primary'}" type="submit" id="alerts-toggle">${o.usageAlerts ? 'Turn alerts off' : 'Turn alerts on'}</button>
      </form>
    </section>
  </div>
</div>`,
  });
}

export function recoveryCodesAppPage(ctx: AppContext, o: { codes: string[] }): string {
  return appPage(ctx, {
    title: 'Recovery codes',
    nav: 'security',
    body: html`<section class="card narrow" aria-labelledby="codes-h">${recoveryCodesBody({ codes: o.codes, next: '/console/security' })}</section>`,
  });
}
