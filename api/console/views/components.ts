// Owns the page pieces more than one area shows (the page frames in layout.ts use them too): the CSRF field of
// every form, the work e-mail field, the support link, a secret with its copy button, the new-password fields
// with their live rule list, the recovery codes shown once (first sign-in and Security), and the API key slots'
// names.
import { PASSWORD_RULES } from '../validation';
import { html, type SafeHtml } from './html';

/** The hidden CSRF token every console form posts (checked by csrfProtect in api/console/http.ts). */
export function csrfField(csrf: string | null): SafeHtml {
  return html`<input type="hidden" name="_csrf" value="${csrf ?? ''}">`;
}

/** The work e-mail field of the sign-in and "send a new link" forms, with inline validation. */
export function workEmailField(value: string | undefined, autocomplete: 'email' | 'username'): SafeHtml {
  return html`<div class="field">
    <label for="email">Work e-mail</label>
    <input id="email" name="email" type="email" required autocomplete="${autocomplete}" value="${value ?? ''}" data-rule="email" aria-describedby="email-error">
    <div class="error-text" id="email-error" role="alert"></div>
  </div>`;
}

/** The support address (SUPPORT_EMAIL) as a mail link, labelled with the address unless told otherwise. */
export function supportLink(ctx: { support: string }, label?: string): SafeHtml {
  return html`<a href="mailto:${ctx.support}">${label ?? ctx.support}</a>`;
}

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
