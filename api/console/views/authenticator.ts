// Owns the Security page's "Replace authenticator app" step: the new secret (QR code and key, as at the first
// sign-in) and the form that confirms it with a code from the new app; the old app keeps working until then.
import { html } from './html';
import { appPage, type AppContext } from './layout';
import { csrfField } from './components';
import { authenticatorKey, codeField } from './sign-in';

export function replaceAuthenticatorPage(ctx: AppContext, o: { secret: string; qrSvg: string; error?: string }): string {
  return appPage(ctx, {
    title: 'Replace authenticator app',
    nav: 'security',
    body: html`<section class="card narrow" aria-labelledby="replace-totp-h" id="replace-authenticator">
  <h1 id="replace-totp-h">Replace authenticator app</h1>
  <p class="lead">Scan this code with the new app (or enter the key), then enter the 6-digit code the <strong>new</strong> app shows. Until you do, your current app keeps working.</p>
  ${authenticatorKey({ email: ctx.email, secret: o.secret, qrSvg: o.qrSvg })}
  <form method="post" action="/console/security/authenticator/confirm" data-validate novalidate>
    ${csrfField(ctx.csrf)}
    ${codeField(o.error)}
    <p class="small muted">Confirming signs out every other session and replaces your recovery codes with ten new ones, shown once.</p>
    <div class="actions"><button class="btn btn-primary" type="submit" id="confirm-authenticator">Use the new app</button>
    <a class="btn btn-secondary" href="/console/security">Keep the current app</a></div>
  </form>
</section>`,
  });
}
