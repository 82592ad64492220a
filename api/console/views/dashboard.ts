// Owns the dashboard pages: overview (usage), API keys, plan & hard cap, emotion API tokens, activity.
import { PLANS, PLAN_IDS, type PlanId } from '../../../shared/billing/plans';
import { html, type SafeHtml } from './html';
import { appPage, csrfField, type AppContext } from './layout';
import { int, monthName, usd, usdPlain, utc } from './format';
import { dailyChart, meter } from './usage-chart';
import { keyBlock } from './onboarding';

export interface UsageView {
  month: string;
  used: number;
  monthlyLimit: number;
  remaining: number;
  overage: number;
  /** null on the free plan: overage is not available. */
  perCallUsd: number | null;
  overageCostUsd: number | null;
  resetAt: Date;
  daily: Record<string, number>;
}

export interface PlanState {
  plan: PlanId;
  monthlyLimit: number;
  hardCap: boolean;
  status: string;
  scheduled: { plan: PlanId | null; cancel: boolean; effectiveMonth: string } | null;
}

export interface KeyView {
  slot: 'primary' | 'secondary';
  prefix: string;
  rotatedAt: Date | null;
}

const SLOT_LABEL = { primary: 'Primary key', secondary: 'Secondary key' } as const;

function scheduledText(s: PlanState['scheduled']): string | null {
  if (!s) return null;
  const when = `1 ${monthName(s.effectiveMonth)}, 00:00 UTC`;
  return s.cancel ? `Your subscription ends at the end of this month (on ${when}).` : `Your plan changes to ${PLANS[s.plan!].name} on ${when}.`;
}

function usageStats(u: UsageView, hardCap: boolean): SafeHtml {
  return html`<div class="stats">
  <div class="stat"><div class="label">Calls this month</div><div class="value" id="usage-calls">${int(u.used)}</div><div class="hint">of ${int(u.monthlyLimit)} included</div></div>
  <div class="stat"><div class="label">Remaining credits</div><div class="value" id="usage-remaining">${int(u.remaining)}</div><div class="hint">reset ${utc(u.resetAt)}</div></div>
  <div class="stat"><div class="label">Overage calls</div><div class="value" id="usage-overage">${int(u.overage)}</div><div class="hint">${u.perCallUsd === null ? 'not available on this plan' : hardCap ? 'hard cap on: none accrue' : `at ${usd(u.perCallUsd)} per call`}</div></div>
  <div class="stat"><div class="label">Overage cost</div><div class="value" id="usage-overage-cost">${u.overageCostUsd === null ? '—' : usd(u.overageCostUsd)}</div><div class="hint">billed through the marketplace</div></div>
</div>`;
}

export function overviewPage(ctx: AppContext, o: { usage: UsageView; plan: PlanState; keys: KeyView[]; firstName: string }): string {
  const u = o.usage;
  const p = PLANS[o.plan.plan];
  const scheduled = scheduledText(o.plan.scheduled);
  const atLimit = u.remaining === 0;
  return appPage(ctx, {
    title: 'Overview',
    nav: 'overview',
    body: html`<div class="page-head"><div><h1>Welcome back${o.firstName ? `, ${o.firstName}` : ''}</h1><p>Usage for ${monthName(u.month)} (UTC). The same numbers as <code>GET /v1/usage</code>.</p></div>
<a class="btn btn-secondary" href="/console/plan">Plan & billing</a></div>
${atLimit && o.plan.hardCap ? html`<div class="alert alert-warn" role="status"><p><strong>Monthly limit reached.</strong> The hard cap is on, so detection requests answer 429 <code>quota_exceeded</code> until ${utc(u.resetAt)}.${o.plan.plan !== 'free' ? ' Upgrade or switch the hard cap off to continue.' : ' Upgrade to continue.'}</p></div>` : ''}
${scheduled ? html`<div class="alert alert-info" role="status"><p>${scheduled} <a href="/console/plan">Manage</a></p></div>` : ''}
<div class="grid">
  <section class="card span-8" aria-labelledby="usage-h">
    <div class="card-head"><h2 id="usage-h">Usage this month</h2><span class="muted small">Resets ${utc(u.resetAt)}</span></div>
    ${meter(u.used, u.monthlyLimit)}
    ${usageStats(u, o.plan.hardCap)}
    <h3>Calls per day</h3>
    ${dailyChart(u.month, u.daily)}
  </section>
  <div class="span-4 grid">
    <section class="card span-12" aria-labelledby="plan-h">
      <div class="card-head"><h2 id="plan-h">Plan</h2><span class="badge badge-primary" id="plan-name">${p.name}</span></div>
      <p>${int(o.plan.monthlyLimit)} calls a month · ${p.monthlyFeeUsd === 0 ? 'free' : `${usdPlain(p.monthlyFeeUsd)} / month`}</p>
      <p class="small">Hard cap: <strong id="hard-cap-state">${o.plan.hardCap ? 'ON' : 'OFF'}</strong> — ${o.plan.hardCap ? 'detection stops at the limit; nothing extra is billed.' : `calls past the limit continue and are billed at ${usd(p.overagePerCallUsd ?? 0)} each.`}</p>
      <a href="/console/plan">Change plan or hard cap</a>
    </section>
    <section class="card span-12" aria-labelledby="keys-h">
      <div class="card-head"><h2 id="keys-h">API keys</h2></div>
      <ul class="timeline">${o.keys.map((k) => html`<li><span>${SLOT_LABEL[k.slot]}</span><code class="prefix">${k.prefix}…</code></li>`)}</ul>
      <a href="/console/keys">Manage keys</a>
    </section>
  </div>
</div>`,
  });
}

export function keysPage(ctx: AppContext, o: { keys: KeyView[] }): string {
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
          <span class="muted small">&nbsp;created ${utc(k.rotatedAt)}</span></div>
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
    <p class="small muted">Regenerating makes the old key fail with 401 <code>invalid_api_key</code> at once.</p>
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

function planAction(ctx: AppContext, current: PlanId, target: PlanId): SafeHtml {
  if (target === current) return html`<span class="badge badge-primary">Current plan</span>`;
  if (target === 'enterprise') return html`<span class="muted small">Contact sales</span>`;
  const up = PLANS[target].rank > PLANS[current].rank;
  return html`<form method="post" action="/console/plan/change" class="inline">
    ${csrfField(ctx.csrf)}<input type="hidden" name="plan" value="${target}">
    <button class="btn ${up ? 'btn-primary' : 'btn-secondary'} btn-sm" type="submit">${up ? 'Upgrade now' : 'Downgrade at month end'}</button>
  </form>`;
}

export function planPage(ctx: AppContext, o: { plan: PlanState; usage: UsageView }): string {
  const p = PLANS[o.plan.plan];
  const free = o.plan.plan === 'free';
  const scheduled = scheduledText(o.plan.scheduled);
  const hardCapExplain = html`<div class="explain">
    <div class="${o.plan.hardCap ? 'active' : ''}"><strong>ON — stop at the limit.</strong> After ${int(o.plan.monthlyLimit)} calls, detection answers 429 <code>quota_exceeded</code> until the month resets. You are never billed beyond your plan fee.</div>
    <div class="${o.plan.hardCap ? '' : 'active'}"><strong>OFF — keep going.</strong> Calls past the limit are processed and billed as overage at ${p.overagePerCallUsd === null ? 'the plan price' : `${usd(p.overagePerCallUsd)} per call`}, reported to the marketplace hourly.</div>
  </div>`;
  return appPage(ctx, {
    title: 'Plan & billing',
    nav: 'plan',
    body: html`<div class="page-head"><div><h1>Plan & billing</h1><p>Prices are the public marketplace prices in USD. Upgrades apply immediately; downgrades and cancellation at the end of the month.</p></div></div>
${scheduled ? html`<div class="alert alert-info" role="status" id="scheduled-change"><p>${scheduled}</p>
  <form method="post" action="/console/plan/scheduled/withdraw" class="inline">${csrfField(ctx.csrf)}<button class="btn btn-secondary btn-sm" type="submit">Withdraw this change</button></form></div>` : ''}
<div class="grid">
  <section class="card span-12" aria-labelledby="hard-cap-h">
    <div class="switch-row">
      <div><h2 id="hard-cap-h">Hard cap</h2>
        <p class="muted small">${free ? 'Always on for the Free (evaluation) plan: it has no overage.' : 'Decide what happens when this month\'s included calls are used up. You can switch at any time.'}</p></div>
      <form method="post" action="/console/hard-cap">
        ${csrfField(ctx.csrf)}<input type="hidden" name="on" value="${o.plan.hardCap ? 'off' : 'on'}">
        <button class="switch" type="submit" role="switch" id="hard-cap-switch" aria-checked="${o.plan.hardCap ? 'true' : 'false'}" aria-labelledby="hard-cap-h hard-cap-state"${free ? html` disabled aria-disabled="true"` : ''}>
          <span class="track" aria-hidden="true"></span><span id="hard-cap-state">${o.plan.hardCap ? 'ON' : 'OFF'}${free ? ' (locked)' : ''}</span>
        </button>
      </form>
    </div>
    ${free ? html`<div class="explain"><div class="active"><strong>ON — stop at the limit.</strong> After 50 calls, detection answers 429 <code>quota_exceeded</code> until the month resets. Nothing is ever charged.</div><div><strong>Need more?</strong> Upgrade to a paid plan to get more calls and the choice of metered overage.</div></div>` : hardCapExplain}
  </section>
  <section class="card span-12" aria-labelledby="plans-h">
    <div class="card-head"><h2 id="plans-h">Plans</h2><span class="muted small">This month so far: ${int(o.usage.used)} calls</span></div>
    <div class="table-wrap"><table>
      <thead><tr><th scope="col">Plan</th><th scope="col" class="num">Monthly calls</th><th scope="col" class="num">Monthly fee</th><th scope="col" class="num">Overage per call</th><th scope="col"><span class="sr-only">Action</span></th></tr></thead>
      <tbody>
      ${PLAN_IDS.map((id) => {
        const plan = PLANS[id];
        return html`<tr class="${id === o.plan.plan ? 'current' : ''}" data-plan="${id}">
          <th scope="row">${plan.name}</th>
          <td class="num">${id === 'enterprise' ? `${int(plan.monthlyCalls)} or more` : int(plan.monthlyCalls)}</td>
          <td class="num">${plan.monthlyFeeUsd === 0 ? 'Free' : `${id === 'enterprise' ? 'from ' : ''}${usdPlain(plan.monthlyFeeUsd)}`}</td>
          <td class="num">${plan.overagePerCallUsd === null ? 'not available' : usd(plan.overagePerCallUsd)}</td>
          <td class="num">${planAction(ctx, o.plan.plan, id)}</td>
        </tr>`;
      })}
      </tbody>
    </table></div>
    ${!o.plan.scheduled?.cancel && o.plan.status === 'active'
      ? html`<details class="small"><summary>Cancel the subscription</summary>
      <p>Your keys keep working until the end of this month; the subscription then ends. You can withdraw the cancellation until then.</p>
      <form method="post" action="/console/plan/cancel">${csrfField(ctx.csrf)}<button class="btn btn-danger btn-sm" type="submit">Cancel at month end</button></form></details>`
      : ''}
  </section>
</div>`,
  });
}

export interface TokenView {
  id: string;
  name: string;
  prefix: string;
  createdAt: Date | null;
  revokedAt: Date | null;
}

export function emotionPage(ctx: AppContext, o: { tokens: TokenView[] }): string {
  const active = o.tokens.filter((t) => !t.revokedAt);
  return appPage(ctx, {
    title: 'Emotion API',
    nav: 'emotion',
    body: html`<div class="page-head"><div><h1>Emotion API access tokens</h1><p>The voice emotion API authenticates with an access token. A token is shown in full only when it is created.</p></div></div>
<div class="grid">
  <section class="card span-8" aria-labelledby="tokens-h">
    <h2 id="tokens-h">Tokens</h2>
    ${o.tokens.length === 0
      ? html`<p class="muted">No tokens yet. Create one to call the emotion API.</p>`
      : html`<div class="table-wrap"><table><thead><tr><th scope="col">Name</th><th scope="col">Token</th><th scope="col">Created</th><th scope="col">Status</th><th scope="col"><span class="sr-only">Action</span></th></tr></thead><tbody>
      ${o.tokens.map(
        (t) => html`<tr data-token-id="${t.id}"><td>${t.name}</td><td><code>${t.prefix}…</code></td><td class="small">${utc(t.createdAt)}</td>
        <td>${t.revokedAt ? html`<span class="badge">Revoked</span>` : html`<span class="badge badge-success">Active</span>`}</td>
        <td class="num">${t.revokedAt ? '' : html`<form method="post" action="/console/emotion/tokens/${t.id}/revoke" class="inline">${csrfField(ctx.csrf)}<button class="btn btn-secondary btn-sm" type="submit">Revoke</button></form>`}</td></tr>`,
      )}</tbody></table></div>`}
  </section>
  <section class="card span-4" aria-labelledby="new-token-h">
    <h2 id="new-token-h">Create a token</h2>
    <form method="post" action="/console/emotion/tokens" data-validate novalidate data-once>
      ${csrfField(ctx.csrf)}
      <div class="field"><label for="token-name">Name</label>
        <input id="token-name" name="name" type="text" required maxlength="80" placeholder="e.g. call-center-prod" data-rule="required" aria-describedby="token-name-hint token-name-error">
        <div class="hint" id="token-name-hint">Helps you recognise it later.</div><div class="error-text" id="token-name-error" role="alert"></div></div>
      <button class="btn btn-primary" type="submit">Create token</button>
    </form>
    <p class="small muted">${active.length} active token${active.length === 1 ? '' : 's'}. Revoked tokens stop working at once.</p>
  </section>
</div>`,
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

export interface AuditView {
  action: string;
  detail: Record<string, unknown> | null;
  at: Date;
}

const ACTIONS: Record<string, (d: Record<string, unknown>) => string> = {
  'key.regenerated': (d) => `Regenerated the ${String(d.slot)} key`,
  'plan.upgraded': (d) => `Upgraded from ${PLANS[d.from as PlanId]?.name ?? d.from} to ${PLANS[d.to as PlanId]?.name ?? d.to}`,
  'plan.downgrade_scheduled': (d) => `Scheduled a downgrade to ${PLANS[d.to as PlanId]?.name ?? d.to} for ${monthName(String(d.effectiveMonth))}`,
  'plan.cancellation_scheduled': (d) => `Scheduled cancellation for ${monthName(String(d.effectiveMonth))}`,
  'plan.scheduled_change_withdrawn': () => 'Withdrew the scheduled plan change',
  'hard_cap.on': () => 'Switched the hard cap ON',
  'hard_cap.off': () => 'Switched the hard cap OFF',
  'console.sign_in': () => 'Signed in',
  'console.sign_in_failed': () => 'Failed sign-in attempt',
  'console.two_factor_enabled': () => 'Enabled two-factor sign-in',
  'console.activated': () => 'Activated the account and received both keys',
  'console.registered': () => 'Registered from the marketplace',
  'emotion_token.created': (d) => `Created emotion API token “${String(d.name)}”`,
  'emotion_token.revoked': (d) => `Revoked emotion API token ${String(d.prefix ?? '')}`,
  'status.active': () => 'Account activated',
  'status.suspended': () => 'Account suspended by an operator',
  'status.cancelled': () => 'Subscription ended',
};

export function activityPage(ctx: AppContext, o: { entries: AuditView[] }): string {
  return appPage(ctx, {
    title: 'Activity',
    nav: 'activity',
    body: html`<div class="page-head"><div><h1>Activity</h1><p>Sign-ins, key regenerations and plan changes on this account, newest first (last 100).</p></div></div>
<section class="card" aria-label="Activity">
  ${o.entries.length === 0
    ? html`<p class="muted">Nothing yet.</p>`
    : html`<ul class="timeline" id="audit-list">${o.entries.map((e) => {
        const describe = ACTIONS[e.action];
        const ip = e.detail && typeof e.detail.ip === 'string' ? ` · from ${e.detail.ip}` : '';
        return html`<li data-action="${e.action}"><span>${describe ? describe(e.detail ?? {}) : e.action}<span class="muted small">${ip}</span></span><time datetime="${e.at.toISOString()}">${utc(e.at)}</time></li>`;
      })}</ul>`}
</section>`,
  });
}
