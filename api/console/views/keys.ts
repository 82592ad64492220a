// Owns the API keys pages: the keys by prefix with created, last used and calls this month, the regenerate
// confirmation, and the new key shown once.
import { html } from './html';
import { appPage, type AppContext } from './layout';
import { calls, monthName, utc } from './format';
import { csrfField, keyBlock, SLOT_LABEL } from './components';

export interface KeyView {
  id: string;
  slot: 'primary' | 'secondary';
  prefix: string;
  createdAt: Date | null;
  lastUsedAt: Date | null;
  callsThisMonth: number;
}

export function keysPage(ctx: AppContext, o: { keys: KeyView[]; month: string }): string {
  return appPage(ctx, {
    title: 'API keys',
    nav: 'keys',
    body: html`<div class="page-head"><div><h1>API keys</h1><p>Send a key in the <code>X-API-Key</code> header. Full keys are shown only when they are created.</p></div></div>
<div class="grid">
  <section class="card span-8" aria-labelledby="keys-h">
    <h2 id="keys-h">Your keys</h2>
    <div class="keys">
      ${o.keys.map(
        (k) => html`<div class="key-row" id="key-${k.slot}">
        <div><div class="key-label">${SLOT_LABEL[k.slot]}</div>
          <code class="prefix" data-key-prefix="${k.slot}">${k.prefix}…</code>
          <dl class="facts small">
            <div><dt>Created</dt><dd>${utc(k.createdAt)}</dd></div>
            <div><dt>Last used</dt><dd data-key-last-used="${k.slot}">${k.lastUsedAt ? utc(k.lastUsedAt) : 'never'}</dd></div>
            <div><dt>${monthName(o.month)}</dt><dd data-key-calls="${k.slot}">${calls(k.callsThisMonth)}</dd></div>
          </dl></div>
        <a class="btn btn-secondary btn-sm" href="/console/keys/${k.slot}/regenerate">Regenerate</a>
      </div>`,
      )}
    </div>
  </section>
  <section class="card span-4" aria-labelledby="rotate-h">
    <h2 id="rotate-h">Rotating without downtime</h2>
    <ol class="small">
      <li>Switch your callers to the <strong>Secondary</strong> key.</li>
      <li>Regenerate the <strong>Primary</strong> key and deploy it.</li>
      <li>Later, do the same the other way round.</li>
    </ol>
    <p class="small muted">Regenerating makes the old key fail with 401 <code>invalid_api_key</code> at once. "Last used" is the last billed call.</p>
  </section>
</div>`,
  });
}

export function regenerateConfirmPage(ctx: AppContext, o: { slot: 'primary' | 'secondary'; prefix: string }): string {
  const other = o.slot === 'primary' ? 'Secondary' : 'Primary';
  return appPage(ctx, {
    title: `Regenerate ${SLOT_LABEL[o.slot].toLowerCase()}`,
    nav: 'keys',
    body: html`<section class="card" aria-labelledby="confirm-h">
  <h1 id="confirm-h">Regenerate the ${SLOT_LABEL[o.slot].toLowerCase()}?</h1>
  <p>The key starting with <code>${o.prefix}</code> <strong>stops working immediately</strong>: every request that still sends it gets 401 <code>invalid_api_key</code>.</p>
  <p class="muted">To avoid downtime, move your callers to the ${other} key first.</p>
  <form method="post" action="/console/keys/${o.slot}/regenerate" data-once class="actions">
    ${csrfField(ctx.csrf)}
    <button class="btn btn-danger" type="submit">Regenerate ${SLOT_LABEL[o.slot].toLowerCase()}</button>
    <a class="btn btn-secondary" href="/console/keys">Cancel</a>
  </form>
</section>`,
  });
}

export function keyRevealedPage(ctx: AppContext, o: { slot: 'primary' | 'secondary'; key: string }): string {
  return appPage(ctx, {
    title: 'New key',
    nav: 'keys',
    body: html`<section class="card" aria-labelledby="new-h">
  <h1 id="new-h">Your new ${SLOT_LABEL[o.slot].toLowerCase()}</h1>
  <div class="alert alert-warn" role="note"><p><strong>Copy it now: it is shown only this once.</strong> The previous key no longer works.</p></div>
  ${keyBlock('new-key', SLOT_LABEL[o.slot], o.key)}
  <div class="actions"><a class="btn btn-primary" href="/console/keys">I have saved it</a></div>
</section>`,
  });
}
