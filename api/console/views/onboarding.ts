// Owns the onboarding pages: registration, "check your inbox", link problems, password setup and the
// one-time display of both API keys.
import { PLANS, type PlanId } from '../../../shared/billing/plans';
import type { MarketplaceSubscription } from '../links/registration-token';
import type { FieldErrors, RegistrationInput } from '../validation';
import { html, type SafeHtml } from './html';
import { authPage, type PageContext } from './layout';
import { csrfField, keyBlock, passwordFields, workEmailField } from './components';

function field(o: {
  id: keyof RegistrationInput;
  label: string;
  type: string;
  value: string;
  error?: string;
  rule: string;
  autocomplete: string;
  hint?: string;
  placeholder?: string;
}): SafeHtml {
  const describedBy = [o.hint ? `${o.id}-hint` : '', `${o.id}-error`].filter(Boolean).join(' ');
  return html`<div class="field">
  <label for="${o.id}">${o.label}</label>
  <input id="${o.id}" name="${o.id}" type="${o.type}" value="${o.value}" required autocomplete="${o.autocomplete}"
    data-rule="${o.rule}" aria-describedby="${describedBy}" aria-invalid="${o.error ? 'true' : 'false'}"${o.placeholder ? html` placeholder="${o.placeholder}"` : ''}>
  ${o.hint ? html`<div class="hint" id="${o.id}-hint">${o.hint}</div>` : ''}
  <div class="error-text" id="${o.id}-error" role="alert">${o.error ?? ''}</div>
</div>`;
}

export function registerPage(
  ctx: PageContext,
  o: { token: string; subscription: MarketplaceSubscription; values: RegistrationInput; errors: FieldErrors; formError?: string },
): string {
  const plan = PLANS[o.subscription.plan];
  const v = o.values;
  const e = o.errors;
  return authPage(ctx, {
    title: 'Create your account',
    step: 1,
    wide: true,
    body: html`<h1>Create your account</h1>
<p class="lead">Your <strong>${plan.name}</strong> subscription is confirmed. Tell us who looks after it; we'll send a link to confirm the e-mail address.</p>
${o.formError ? html`<div class="alert alert-error" role="alert"><p>${o.formError}</p></div>` : ''}
<form method="post" action="/console/register" data-validate novalidate>
  ${csrfField(ctx.csrf)}
  <input type="hidden" name="token" value="${o.token}">
  <fieldset>
    <legend>From your marketplace subscription (filled in automatically)</legend>
    <dl class="readonly-pairs">
      <dt>Marketplace account ID</dt><dd id="marketplace-account-id">${o.subscription.marketplaceAccountId}</dd>
      <dt>Subscription ID</dt><dd id="subscription-id">${o.subscription.subscriptionId}</dd>
      <dt>Plan</dt><dd>${plan.name}</dd>
    </dl>
  </fieldset>
  <div class="row">
    ${field({ id: 'firstName', label: 'First name', type: 'text', value: v.firstName, error: e.firstName, rule: 'name', autocomplete: 'given-name' })}
    ${field({ id: 'lastName', label: 'Last name', type: 'text', value: v.lastName, error: e.lastName, rule: 'name', autocomplete: 'family-name' })}
  </div>
  ${field({ id: 'email', label: 'Work e-mail', type: 'email', value: v.email, error: e.email, rule: 'email', autocomplete: 'email', hint: 'Your sign-in ID; notifications go here too.', placeholder: 'name@company.com' })}
  ${field({ id: 'company', label: 'Company name', type: 'text', value: v.company, error: e.company, rule: 'company', autocomplete: 'organization' })}
  ${field({ id: 'website', label: 'Company website', type: 'text', value: v.website, error: e.website, rule: 'website', autocomplete: 'url', hint: 'Your company domain, for example example.com (we add https://)', placeholder: 'example.com' })}
  <button class="btn btn-primary btn-block" type="submit">Continue</button>
</form>`,
  });
}

export function registrationLinkProblemPage(ctx: PageContext, reason: 'invalid' | 'expired' | 'used'): string {
  const text = {
    invalid: 'This registration link is not valid. It may have been copied incompletely.',
    expired: 'This registration link has expired.',
    used: 'This subscription is already registered.',
  }[reason];
  const next =
    reason === 'used'
      ? html`<p>If you registered but did not confirm your e-mail address yet, ask for a new confirmation link below. Otherwise, sign in.</p>
<div class="actions"><a class="btn btn-primary" href="/console/sign-in">Sign in</a><a class="btn btn-secondary" href="/console/verify/resend">Send a new confirmation link</a></div>`
      : html`<p>Open the console link again from your marketplace subscription page to get a fresh one, or contact support.</p>
<div class="actions"><a class="btn btn-secondary" href="/console/sign-in">I already have an account</a></div>`;
  return authPage(ctx, { title: 'Registration link', body: html`<h1>${text}</h1>${next}` });
}

export function checkInboxPage(ctx: PageContext, email: string): string {
  return authPage(ctx, {
    title: 'Check your inbox',
    step: 2,
    body: html`<h1>Check your inbox</h1>
<p class="lead">We sent a confirmation link to <strong id="sent-to">${email}</strong>. Open it within 24 hours to choose your password.</p>
<p class="muted small">Nothing there after a few minutes? Check the spam folder, or ask for a new link.</p>
<form method="post" action="/console/verify/resend" data-once>
  ${csrfField(ctx.csrf)}
  <input type="hidden" name="email" value="${email}">
  <button class="btn btn-secondary" type="submit">Send a new link</button>
</form>`,
  });
}

export function verifyProblemPage(ctx: PageContext, o: { reason: 'invalid' | 'expired' | 'used' | 'active' | 'request'; email?: string }): string {
  const copy = {
    request: {
      h: 'Get a new confirmation link',
      p: 'Enter the work e-mail you registered with. If a registration is waiting for confirmation, we send a new link.',
    },
    expired: { h: 'This link has expired', p: 'Confirmation links work for 24 hours. We can send you a new one.' },
    used: { h: 'This link was already used', p: 'Each confirmation link works once. If you did not finish setting your password, ask for a new link.' },
    invalid: { h: 'This link is not valid', p: 'It may have been copied incompletely. Enter your work e-mail to get a new one.' },
    active: { h: 'Your account is already active', p: 'You have set a password already. Sign in to continue.' },
  }[o.reason];
  const body =
    o.reason === 'active'
      ? html`<div class="actions"><a class="btn btn-primary" href="/console/sign-in">Sign in</a></div>`
      : html`<form method="post" action="/console/verify/resend" data-validate novalidate data-once>
  ${csrfField(ctx.csrf)}
  ${workEmailField(o.email, 'email')}
  <button class="btn btn-primary" type="submit">Send a new link</button>
</form>`;
  return authPage(ctx, { title: copy.h, body: html`<h1>${copy.h}</h1><p class="lead">${copy.p}</p>${body}` });
}

export function resendPage(ctx: PageContext, email = ''): string {
  return verifyProblemPage(ctx, { reason: 'request', email });
}

export function resendDonePage(ctx: PageContext, email: string): string {
  return authPage(ctx, {
    title: 'Link sent',
    step: 2,
    body: html`<h1>Check your inbox</h1>
<p class="lead">If <strong>${email}</strong> has a registration waiting for confirmation, a new link is on its way. It works for 24 hours; older links stop mattering once you finish.</p>
<div class="actions"><a class="btn btn-secondary" href="/console/sign-in">Back to sign in</a></div>`,
  });
}

export function passwordPage(ctx: PageContext, o: { email: string; problems?: string[] }): string {
  return authPage(ctx, {
    title: 'Choose a password',
    step: 3,
    body: html`<h1>Choose a password</h1>
<p class="lead">Your e-mail address <strong>${o.email}</strong> is confirmed. Choose the password you will sign in with.</p>
<form method="post" action="/console/activate" data-once>
  ${csrfField(ctx.csrf)}
  <input type="email" name="username" value="${o.email}" autocomplete="username" hidden>
  ${passwordFields(o.problems)}
  <button class="btn btn-primary btn-block" type="submit">Activate account</button>
</form>`,
  });
}

export function keysOncePage(ctx: PageContext, o: { primaryKey: string; secondaryKey: string; plan: PlanId }): string {
  return authPage(ctx, {
    title: 'Your API keys',
    step: 4,
    wide: true,
    body: html`<h1>Your account is active</h1>
<p class="lead">These are your API keys for the <strong>${PLANS[o.plan].name}</strong> plan. Send one in the <code>X-API-Key</code> header.</p>
<div class="alert alert-warn" role="note"><p><strong>Copy them now: they are shown only this once.</strong> Later the dashboard shows only their first characters. If you lose one, regenerate it there.</p></div>
${keyBlock('primary-key', 'Primary key', o.primaryKey)}
${keyBlock('secondary-key', 'Secondary key', o.secondaryKey)}
<form method="post" action="/console/activate/done">
  ${csrfField(ctx.csrf)}
  <label class="check"><input type="checkbox" name="saved" value="yes" required data-enables="saved-continue"> I have saved my keys somewhere safe.</label>
  <button class="btn btn-primary btn-block" type="submit" id="saved-continue">Continue to sign in</button>
</form>`,
  });
}

/** The activation keys page opened again: they were shown once; say how to get new ones. */
export function keysAlreadyShownPage(ctx: PageContext): string {
  return authPage(ctx, {
    title: 'Keys already shown',
    step: 4,
    body: html`<h1 id="already-shown">Your keys were already shown</h1>
<p class="lead">For your safety they are displayed only once. If you did not save them, sign in and regenerate a key on the API keys page: the old one stops working at once.</p>
<div class="actions"><a class="btn btn-primary" href="/console/sign-in">Sign in</a></div>`,
  });
}
