// Owns the Emotion API pages: this month's calls and audio minutes, the tokens with their use, creating one
// (shown once) and the revoke confirmation.
import { MAX_LIVE_TOKENS_PER_ACCOUNT, REVOKED_TOKENS_LISTED } from '../../../shared/accounts/emotion-tokens';
import { html, type SafeHtml } from './html';
import { appPage, type AppContext } from './layout';
import { int, monthName, plural, utc } from './format';
import { csrfField, keyBlock } from './components';

export interface TokenView {
  id: string;
  name: string;
  prefix: string;
  createdAt: Date | null;
  revokedAt: Date | null;
  lastUsedAt: Date | null;
  calls: number;
  audioSeconds: number;
}

const minutes = (seconds: number) => (seconds / 60).toLocaleString('en-US', { maximumFractionDigits: 1 });

/** How to call the emotion API: its address, the Bearer header and a curl line that sends a WAV file. */
function emotionQuickstart(apiBase: string): SafeHtml {
  const call = `curl -sS ${apiBase}/feelings/v3/analysis \\\n  -H "Authorization: Bearer YOUR_TOKEN" \\\n  -H "Content-Type: audio/wav" \\\n  --data-binary @speech.wav`;
  return html`<section class="card span-12" aria-labelledby="emo-qs-h" id="emotion-quickstart">
  <h2 id="emo-qs-h">Calling the API</h2>
  <p class="small">Send the audio file's bytes to <code class="wrap" id="emotion-endpoint">POST ${apiBase}/feelings/v3/analysis</code> with the header
    <code class="wrap">Authorization: Bearer YOUR_TOKEN</code> and the file's type as <code class="wrap">Content-Type: audio/…</code>.</p>
  <pre class="code" id="emotion-curl"><code>${call}</code></pre>
  <p class="small muted">The answer holds <code>rough</code> and <code>soft</code> (0–1) for every 5 s of audio. Replace <code>YOUR_TOKEN</code> with a token created below.</p>
</section>`;
}

export function emotionPage(ctx: AppContext, o: { tokens: TokenView[]; month: string; apiBase: string; nameError?: string; name?: string }): string {
  const active = o.tokens.filter((t) => !t.revokedAt);
  const totalCalls = o.tokens.reduce((a, t) => a + t.calls, 0);
  const totalSeconds = o.tokens.reduce((a, t) => a + t.audioSeconds, 0);
  return appPage(ctx, {
    title: 'Emotion API',
    nav: 'emotion',
    body: html`<div class="page-head"><div><h1>Emotion API</h1><p>The voice emotion API authenticates with an access token. A token is shown in full only when it is created.</p></div></div>
<div class="grid">
  <section class="card span-12" aria-labelledby="emo-usage-h">
    <h2 id="emo-usage-h">Usage in ${monthName(o.month)}</h2>
    <div class="stats">
      <div class="stat"><div class="label">Calls</div><div class="value" id="emotion-calls">${int(totalCalls)}</div></div>
      <div class="stat"><div class="label">Audio minutes</div><div class="value" id="emotion-minutes">${minutes(totalSeconds)}</div></div>
      <div class="stat"><div class="label">Active tokens</div><div class="value">${int(active.length)}</div></div>
    </div>
  </section>
  ${emotionQuickstart(o.apiBase)}
  <section class="card span-8" aria-labelledby="tokens-h">
    <h2 id="tokens-h">Tokens</h2>
    ${
      o.tokens.length === 0
        ? html`<p class="muted">No tokens yet. Create one to call the emotion API.</p>`
        : html`<table class="stack" id="tokens-table"><thead><tr><th scope="col">Name</th><th scope="col">Token</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col" class="num">Calls / minutes</th><th scope="col">Status</th><th scope="col" class="num">Action</th></tr></thead><tbody>
      ${o.tokens.map(
        (
          t,
        ) => html`<tr data-token-id="${t.id}"><th scope="row">${t.name}</th><td data-label="Token"><code>${t.prefix}…</code></td><td class="small" data-label="Created">${utc(t.createdAt)}</td>
        <td class="small" data-label="Last used">${t.lastUsedAt ? utc(t.lastUsedAt) : 'never'}</td>
        <td class="num" data-label="Calls / minutes">${int(t.calls)} / ${minutes(t.audioSeconds)}</td>
        <td data-label="Status">${t.revokedAt ? html`<span class="badge">Revoked</span>` : html`<span class="badge badge-success">Active</span>`}</td>
        <td class="num action">${t.revokedAt ? '' : html`<a class="btn btn-secondary btn-sm" href="/console/emotion/tokens/${t.id}/revoke">Revoke…</a>`}</td></tr>`,
      )}</tbody></table>`
    }
  </section>
  <section class="card span-4" aria-labelledby="new-token-h">
    <h2 id="new-token-h">Create a token</h2>
    <form method="post" action="/console/emotion/tokens" data-validate novalidate data-once>
      ${csrfField(ctx.csrf)}
      <div class="field"><label for="token-name">Name</label>
        <input id="token-name" name="name" type="text" required maxlength="80" placeholder="e.g. call-center-prod" data-rule="required" value="${o.name ?? ''}" aria-invalid="${o.nameError ? 'true' : 'false'}" aria-describedby="token-name-hint token-name-error">
        <div class="hint" id="token-name-hint">Unique among your tokens; helps you recognise it later.</div><div class="error-text" id="token-name-error" role="alert">${o.nameError ?? ''}</div></div>
      <button class="btn btn-primary" type="submit">Create token</button>
    </form>
    <p class="small muted">${plural(active.length, 'active token')} of at most ${int(MAX_LIVE_TOKENS_PER_ACCOUNT)}; all of them share one fair-use allowance. Revoked tokens stop working at once; the list keeps the ${int(REVOKED_TOKENS_LISTED)} most recently revoked.</p>
  </section>
</div>`,
  });
}

export function revokeConfirmPage(ctx: AppContext, o: { token: TokenView }): string {
  return appPage(ctx, {
    title: 'Revoke token',
    nav: 'emotion',
    body: html`<section class="card narrow" aria-labelledby="confirm-h" id="revoke-confirm">
  <h1 id="confirm-h">Revoke the token “${o.token.name}”?</h1>
  <p>The token starting with <code>${o.token.prefix}</code> <strong>stops working immediately</strong>: calls that still send it get 403 (the spec's answer for a wrong token). This cannot be undone; create a new token if you need one.</p>
  <p class="muted small">Last used: ${o.token.lastUsedAt ? utc(o.token.lastUsedAt) : 'never'}.</p>
  <form method="post" action="/console/emotion/tokens/${o.token.id}/revoke" data-once class="actions">
    ${csrfField(ctx.csrf)}
    <button class="btn btn-danger" type="submit">Revoke “${o.token.name}”</button>
    <a class="btn btn-secondary" href="/console/emotion">Cancel</a>
  </form>
</section>`,
  });
}

export function tokenRevealedPage(ctx: AppContext, o: { name: string; token: string }): string {
  return appPage(ctx, {
    title: 'New token',
    nav: 'emotion',
    body: html`<section class="card" aria-labelledby="tok-h">
  <h1 id="tok-h">Token “${o.name}” created</h1>
  <div class="alert alert-warn" role="note"><p><strong>Copy it now: it is shown only this once.</strong></p></div>
  ${keyBlock('new-token', 'Access token', o.token)}
  <div class="actions"><a class="btn btn-primary" href="/console/emotion">I have saved it</a></div>
</section>`,
  });
}
