// Owns the sign-in pages: e-mail and password, mandatory TOTP setup (QR code + secret), the TOTP code.
import { html, raw } from './html';
import { authPage, csrfField, workEmailField, type PageContext } from './layout';

export function signInPage(ctx: PageContext, o: { email?: string; error?: string; notice?: string }): string {
  return authPage(ctx, {
    title: 'Sign in',
    body: html`<h1>Sign in</h1>
<p class="lead">Manage your API keys, plan and usage.</p>
${o.notice ? html`<div class="alert alert-success" role="status"><p>${o.notice}</p></div>` : ''}
${o.error ? html`<div class="alert alert-error" role="alert"><p>${o.error}</p></div>` : ''}
<form method="post" action="/console/sign-in" data-validate novalidate data-once>
  ${csrfField(ctx.csrf)}
  ${workEmailField(o.email, 'username')}
  <div class="field">
    <label for="password">Password</label>
    <input id="password" name="password" type="password" required autocomplete="current-password" data-rule="required" aria-describedby="password-error">
    <div class="error-text" id="password-error" role="alert"></div>
  </div>
  <button class="btn btn-primary btn-block" type="submit">Sign in</button>
</form>
<p class="muted small">New here? Subscribe through the cloud marketplace; its console link brings you to registration.
Registered but never confirmed your e-mail? <a href="/console/verify/resend">Get a new confirmation link</a>.</p>`,
  });
}

function codeField(error?: string) {
  return html`<div class="field">
    <label for="code">6-digit code</label>
    <input id="code" name="code" class="code-input" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9]*" maxlength="6" required
      data-rule="code" aria-describedby="code-error" aria-invalid="${error ? 'true' : 'false'}" autofocus>
    <div class="error-text" id="code-error" role="alert">${error ?? ''}</div>
  </div>`;
}

export function totpSetupPage(ctx: PageContext, o: { email: string; secret: string; qrSvg: string; error?: string }): string {
  const grouped = o.secret.replace(/(.{4})/g, '$1 ').trim();
  return authPage(ctx, {
    title: 'Set up two-factor sign-in',
    step: 5,
    wide: true,
    body: html`<h1>Set up two-factor sign-in</h1>
<p class="lead">Two-factor sign-in is required for every account. Scan the code with an authenticator app (Google Authenticator, 1Password, Authy, Microsoft Authenticator…), then enter the 6-digit code it shows.</p>
<div class="qr">
  <div role="img" aria-label="QR code for your authenticator app">${raw(o.qrSvg)}</div>
  <div class="manual">
    <div class="label">Can't scan? Enter this key manually</div>
    <code class="secret-text" id="totp-secret" data-secret="${o.secret}">${grouped}</code>
    <button class="btn btn-secondary btn-sm" type="button" data-copy="totp-secret" hidden>Copy key</button>
    <p class="muted small">Account: ${o.email} · Time-based · 6 digits · 30 seconds</p>
  </div>
</div>
<form method="post" action="/console/two-factor/setup" data-validate novalidate>
  ${csrfField(ctx.csrf)}
  ${codeField(o.error)}
  <button class="btn btn-primary" type="submit">Verify and enable</button>
</form>`,
  });
}

export function totpChallengePage(ctx: PageContext, o: { email: string; error?: string }): string {
  return authPage(ctx, {
    title: 'Two-factor sign-in',
    body: html`<h1>Enter your code</h1>
<p class="lead">Open your authenticator app and enter the 6-digit code for <strong>${o.email}</strong>.</p>
<form method="post" action="/console/sign-in/two-factor" data-validate novalidate>
  ${csrfField(ctx.csrf)}
  ${codeField(o.error)}
  <div class="actions"><button class="btn btn-primary" type="submit">Verify</button></div>
</form>
<form method="post" action="/console/sign-out" class="small">${csrfField(ctx.csrf)}<button class="btn-link" type="submit">Use another account</button></form>`,
  });
}
