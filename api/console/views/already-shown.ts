// Owns the page a shown-once secret (API key, emotion token, recovery codes) leads to when it is opened again.
import { html } from './html';
import { appPage, type AppContext } from './layout';

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
