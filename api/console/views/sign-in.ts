// Owns the sign-in pages: e-mail and password, mandatory TOTP setup (QR code + secret), the TOTP code.
import { html, raw } from './html';
import { authPage, type PageContext } from './layout';
import { csrfField, passwordFields, recoveryCodesBody, supportLink, workEmailField } from './components';

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
<p class="small"><a href="/console/forgot-password" id="forgot-link">Forgot your password?</a></p>
<p class="muted small">New here? Subscribe through the cloud marketplace; its console link brings you to registration.
Registered but never confirmed your e-mail? <a href="/console/verify/resend">Get a new confirmation link</a>.</p>`,
  });
}

/** The 6-digit code field (`error` under it, the field marked invalid). */
export function codeField(error?: string, focus = true) {
  return html`<div class="field">
    <label for="code">6-digit code</label>
    <input id="code" name="code" class="code-input" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9]*" maxlength="6" required
      data-rule="code" aria-describedby="code-error" aria-invalid="${error ? 'true' : 'false'}"${focus ? html` autofocus` : ''}>
    <div class="error-text" id="code-error" role="alert">${error ?? ''}</div>
  </div>`;
}

/** A TOTP secret to add to an authenticator app: its QR code and the key in groups of four (setup and replacement). */
export function authenticatorKey(o: { email: string; secret: string; qrSvg: string }) {
  const groups = o.secret.match(/.{1,4}/g) ?? [];
  return html`<div class="qr">
  <div role="img" aria-label="QR code for your authenticator app">${raw(o.qrSvg)}</div>
  <div class="manual">
    <div class="label">Can't scan? Enter this key manually</div>
    <code class="secret-text" id="totp-secret" data-secret="${o.secret}">${groups.map((g, i) => html`${i > 0 ? ' ' : ''}<span class="group">${g}</span>`)}</code>
    <button class="btn btn-secondary btn-sm" type="button" data-copy="totp-secret" hidden>Copy key</button>
    <p class="muted small">Account: ${o.email} · Time-based · 6 digits · 30 seconds</p>
  </div>
</div>`;
}

export function totpSetupPage(ctx: PageContext, o: { email: string; secret: string; qrSvg: string; error?: string }): string {
  return authPage(ctx, {
    title: 'Set up two-factor sign-in',
    step: 5,
    wide: true,
    body: html`<h1>Set up two-factor sign-in</h1>
<p class="lead">Two-factor sign-in is required for every account. Scan the code with an authenticator app (Google Authenticator, 1Password, Authy, Microsoft Authenticator…), then enter the 6-digit code it shows.</p>
${authenticatorKey(o)}
<form method="post" action="/console/two-factor/setup" data-validate novalidate>
  ${csrfField(ctx.csrf)}
  ${codeField(o.error)}
  <button class="btn btn-primary" type="submit">Verify and enable</button>
</form>`,
  });
}

/** `error` answers the 6-digit code; `recoveryError` answers a recovery code (its section open, the typed code kept). */
export function totpChallengePage(ctx: PageContext, o: { email: string; error?: string; recoveryCode?: string; recoveryError?: string }): string {
  const recoveryOpen = o.recoveryError !== undefined;
  return authPage(ctx, {
    title: 'Two-factor sign-in',
    body: html`<h1>Enter your code</h1>
<p class="lead">Open your authenticator app and enter the 6-digit code for <strong>${o.email}</strong>.</p>
<form method="post" action="/console/sign-in/two-factor" data-validate novalidate>
  ${csrfField(ctx.csrf)}
  ${codeField(o.error, !recoveryOpen)}
  <div class="actions"><button class="btn btn-primary" type="submit">Verify</button></div>
</form>
<details class="small" id="use-recovery"${recoveryOpen ? ' open' : ''}><summary>Lost your phone? Use a recovery code</summary>
<form method="post" action="/console/sign-in/two-factor">
  ${csrfField(ctx.csrf)}
  <div class="field"><label for="recovery-code">Recovery code</label>
    <input id="recovery-code" name="recoveryCode" type="text" autocomplete="off" spellcheck="false" maxlength="16" class="mono" placeholder="xxxxx-xxxxx"
      value="${o.recoveryCode ?? ''}" aria-describedby="recovery-code-error" aria-invalid="${o.recoveryError ? 'true' : 'false'}"${recoveryOpen ? html` autofocus` : ''}>
    <div class="error-text" id="recovery-code-error" role="alert">${o.recoveryError ?? ''}</div></div>
  <button class="btn btn-secondary" type="submit">Sign in with a recovery code</button>
</form>
<p class="muted">No codes either? Write to ${supportLink(ctx)} from this address; we verify your identity before resetting two-factor sign-in.</p>
</details>
<form method="post" action="/console/sign-out" class="small">${csrfField(ctx.csrf)}<button class="btn-link" type="submit">Use another account</button></form>`,
  });
}

export function recoveryCodesSetupPage(ctx: PageContext, o: { codes: string[] }): string {
  return authPage(ctx, { title: 'Recovery codes', step: 5, wide: true, body: recoveryCodesBody({ codes: o.codes, next: '/console/dashboard' }) });
}

export function recoveryCodesShownPage(ctx: PageContext): string {
  return authPage(ctx, {
    title: 'Recovery codes already shown',
    body: html`<h1 id="already-shown">Your recovery codes were already shown</h1>
<p class="lead">They are displayed only once. If you did not save them, make new ones under Security (this voids the old ones).</p>
<div class="actions"><a class="btn btn-primary" href="/console/security#recovery">Go to Security</a><a class="btn btn-secondary" href="/console/dashboard">Dashboard</a></div>`,
  });
}

export function forgotPasswordPage(ctx: PageContext, o: { email?: string; error?: string }): string {
  return authPage(ctx, {
    title: 'Forgot password',
    body: html`<h1>Reset your password</h1>
<p class="lead">Enter the work e-mail you sign in with. If it belongs to an account, we send a link to choose a new password; it works once, for one hour.</p>
${o.error ? html`<div class="alert alert-error" role="alert"><p>${o.error}</p></div>` : ''}
<form method="post" action="/console/forgot-password" data-validate novalidate data-once>
  ${csrfField(ctx.csrf)}
  ${workEmailField(o.email, 'email')}
  <button class="btn btn-primary btn-block" type="submit">Send the reset link</button>
</form>
<p class="small muted">You will still need your authenticator app (or a recovery code) to sign in afterwards.</p>`,
  });
}

export function forgotPasswordSentPage(ctx: PageContext, email: string): string {
  return authPage(ctx, {
    title: 'Check your inbox',
    body: html`<h1 id="reset-sent">Check your inbox</h1>
<p class="lead">If <strong>${email}</strong> belongs to a console account, a link to choose a new password is on its way. It works once, for one hour.</p>
<p class="small muted">Nothing after a few minutes? Check the spam folder, or write to ${supportLink(ctx)}.</p>
<div class="actions"><a class="btn btn-secondary" href="/console/sign-in">Back to sign in</a></div>`,
  });
}

export function resetPasswordPage(ctx: PageContext, o: { token: string; email: string; problems?: string[] }): string {
  return authPage(ctx, {
    title: 'Choose a new password',
    body: html`<h1>Choose a new password</h1>
<p class="lead">For <strong>${o.email}</strong>. Setting it signs you out everywhere; you then sign in with the new password and your two-factor code.</p>
<form method="post" action="/console/reset-password" data-once>
  ${csrfField(ctx.csrf)}
  <input type="hidden" name="token" value="${o.token}">
  <input type="email" name="username" value="${o.email}" autocomplete="username" hidden>
  ${passwordFields(o.problems)}
  <button class="btn btn-primary btn-block" type="submit">Set the new password</button>
</form>`,
  });
}

export function resetProblemPage(ctx: PageContext, reason: 'invalid' | 'expired' | 'used'): string {
  const h = { invalid: 'This reset link is not valid', expired: 'This reset link has expired', used: 'This reset link was already used' }[reason];
  return authPage(ctx, {
    title: h,
    body: html`<h1>${h}</h1>
<p class="lead">Reset links work once, for one hour, and only until the password changes. Ask for a new one.</p>
<div class="actions"><a class="btn btn-primary" href="/console/forgot-password">Send a new reset link</a><a class="btn btn-secondary" href="/console/sign-in">Sign in</a></div>`,
  });
}
