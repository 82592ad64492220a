// Owns the page pieces more than one area shows: a secret with its copy button, the new-password fields with
// their live rule list, the recovery codes shown once (first sign-in and Security), the "already shown" page
// of every shown-once secret, and the API key slots' names.
import { PASSWORD_RULES } from '../validation';
import { html, type SafeHtml } from './html';
import { appPage, type AppContext } from './layout';

export const SLOT_LABEL = { primary: 'Primary key', secondary: 'Secondary key' } as const;

export function keyBlock(id: string, label: string, key: string, note?: string): SafeHtml {
  return html`<div>
  <div class="key-label">${label}${note ? html` <span class="badge">${note}</span>` : ''}</div>
  <div class="secret">
    <code id="${id}">${key}</code>
    <button class="btn btn-secondary btn-sm" type="button" data-copy="${id}" hidden>Copy</button>
  </div>
</div>`;
}

/** New password + repeat, with the live rule checklist and a message the script fills on a weak submit. */
export function passwordFields(problems?: string[]): SafeHtml {
  return html`<div class="field">
    <label for="password">New password</label>
    <input id="password" name="password" type="password" required autocomplete="new-password" maxlength="128"
      data-password-rules="password-rules" aria-describedby="password-rules password-error" aria-invalid="${problems?.length ? 'true' : 'false'}">
    <ul class="rules" id="password-rules" aria-live="polite">
      ${PASSWORD_RULES.map((r) => html`<li data-rule="${r.id}">${r.label}<span class="sr-only"> (not met yet)</span></li>`)}
    </ul>
    <div class="error-text" id="password-error" role="alert">${problems?.length ? `The password needs: ${problems.join(', ').toLowerCase()}.` : ''}</div>
  </div>
  <div class="field">
    <label for="confirm">Repeat the new password</label>
    <input id="confirm" name="confirm" type="password" required autocomplete="new-password" maxlength="128" data-confirms="password" aria-describedby="confirm-error">
    <div class="error-text" id="confirm-error" role="alert"></div>
  </div>`;
}

/** A "shown once" page opened again: the secret is gone, say so and lead on (never repeat the action). */
export function alreadyShownPage(
  ctx: AppContext,
  o: { nav: 'keys' | 'emotion' | 'security'; what: string; back: { href: string; label: string }; again: string },
): string {
  return appPage(ctx, {
    title: 'Already shown',
    nav: o.nav,
    body: html`<section class="card" aria-labelledby="shown-h" id="already-shown">
  <h1 id="shown-h">${o.what} was already shown</h1>
  <p>For your safety it is displayed only once, right after it is created; reloading this page does not create another one.</p>
  <p class="muted">${o.again}</p>
  <div class="actions"><a class="btn btn-primary" href="${o.back.href}">${o.back.label}</a></div>
</section>`,
  });
}

export function recoveryCodesBody(o: { codes: string[]; next: string }): SafeHtml {
  return html`<h1 id="codes-h">Your recovery codes</h1>
<p class="lead">If you lose your phone, each code signs you in once instead of a 6-digit code.</p>
<div class="alert alert-warn" role="note"><p><strong>Save them now: they are shown only this once.</strong> Print them or keep them in a password manager.</p></div>
<ol class="codes" id="recovery-codes">${o.codes.map((c) => html`<li><code>${c}</code></li>`)}</ol>
<div class="actions">
  <button class="btn btn-secondary btn-sm" type="button" data-copy="recovery-codes" hidden>Copy all</button>
  <button class="btn btn-secondary btn-sm" type="button" id="codes-download" data-download="recovery-codes" data-filename="liveness-api-recovery-codes.txt" data-heading="Liveness API console: recovery codes. Each one signs in once in place of a code from your authenticator app." hidden>Download as a text file</button>
  <button class="btn btn-secondary btn-sm" type="button" id="codes-print" data-print hidden>Print</button>
</div>
<div class="actions"><a class="btn btn-primary" href="${o.next}" id="codes-continue">I have saved them — continue</a></div>`;
}
