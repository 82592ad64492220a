// Owns the step-up prompt: a sensitive action (regenerate a key, create an emotion token, hard cap off, plan
// change) asked for without a proof of identity in the last 10 minutes. The form posts the same action again
// with the original fields and the password or a 6-digit code, so the action completes in one more step.
import { html } from './html';
import { appPage, type AppContext, type NavId } from './layout';
import { csrfField } from './components';

export function stepUpPage(
  ctx: AppContext,
  o: { action: string; what: string; nav: NavId; fields: Record<string, string>; error?: string; windowMinutes: number },
): string {
  return appPage(ctx, {
    title: 'Confirm it is you',
    nav: o.nav,
    body: html`<section class="card narrow" aria-labelledby="step-up-h" id="step-up">
  <h1 id="step-up-h">Confirm it is you</h1>
  <p>To ${o.what}, enter your password or a code from your authenticator app. You will not be asked again for ${o.windowMinutes} minutes.</p>
  ${o.error ? html`<div class="alert alert-error" role="alert" id="step-up-error"><p>${o.error}</p></div>` : ''}
  <form method="post" action="${o.action}" class="stack-form">
    ${csrfField(ctx.csrf)}
    ${Object.entries(o.fields).map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`)}
    <div class="field"><label for="step-up-password">Password</label>
      <input id="step-up-password" name="stepUpPassword" type="password" autocomplete="current-password" maxlength="128"></div>
    <div class="field"><label for="step-up-code">or a 6-digit code</label>
      <input id="step-up-code" name="stepUpCode" class="code-input" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9]*" maxlength="6"></div>
    <div class="actions"><button class="btn btn-primary" type="submit" id="step-up-confirm">Confirm and continue</button>
      <a class="btn btn-secondary" href="/console/dashboard">Cancel</a></div>
  </form>
</section>`,
  });
}
