// Owns the dashboard pages: overview (usage, charges, quickstart), API keys, plan & hard cap with their
// confirmations, emotion API tokens and usage, Security (password, authenticator app, recovery codes, usage alerts), activity, and
// the "shown once" pages — among them the recovery codes, whose body the first sign-in's TOTP setup reuses.
import { PLANS, PLAN_IDS, type PlanId } from '../../../shared/billing/plans';
import { MAX_LIVE_TOKENS_PER_ACCOUNT } from '../../../shared/accounts/emotion-tokens';
import { html, type SafeHtml } from './html';
import { appPage, csrfField, supportLink, type AppContext } from './layout';
import { calls, firstOf, int, monthName, plural, usd, usdPlain, utc } from './format';
import { dailyChart, meter } from './usage-chart';
import { keyBlock, passwordFields } from './onboarding';
import type { UsageView } from '../usage';
import { pendingPlanChangeNotice, type PendingPlanChange } from './plan-pending';

export type { UsageView } from '../usage';

export interface PlanState {
  plan: PlanId;
  monthlyLimit: number;
  hardCap: boolean;
  status: string;
  scheduled: { plan: PlanId | null; cancel: boolean; effectiveMonth: string } | null;
  /** A change asked for in the console, waiting for the marketplace's confirmation. */
  pending: PendingPlanChange | null;
}

export interface KeyView {
  id: string;
  slot: 'primary' | 'secondary';
  prefix: string;
  createdAt: Date | null;
  lastUsedAt: Date | null;
  callsThisMonth: number;
}

const SLOT_LABEL = { primary: 'Primary key', secondary: 'Secondary key' } as const;

function scheduledText(s: PlanState['scheduled']): string | null {
  if (!s) return null;
  const when = `${firstOf(s.effectiveMonth)}, 00:00 UTC`;
  return s.cancel ? `Your subscription ends at the end of this month (on ${when}).` : `Your plan changes to ${PLANS[s.plan!].name} on ${when}.`;
}

function usageStats(u: UsageView, hardCap: boolean): SafeHtml {
  return html`<div class="stats">
  <div class="stat"><div class="label">Calls this month</div><div class="value" id="usage-calls">${int(u.used)}</div><div class="hint">of ${int(u.monthlyLimit)} included</div></div>
  <div class="stat"><div class="label">Remaining credits</div><div class="value" id="usage-remaining">${int(u.remaining)}</div><div class="hint">reset ${utc(u.resetAt)}</div></div>
  <div class="stat"><div class="label">Overage calls</div><div class="value" id="usage-overage">${int(u.overage)}</div><div class="hint">${u.perCallUsd === null ? 'not available on this plan' : hardCap ? 'hard cap on: none accrue' : `at ${usd(u.perCallUsd)} per call`}</div></div>
  <div class="stat"><div class="label">Charges so far</div><div class="value" id="month-to-date">${usd(u.monthToDateUsd)}</div><div class="hint">${usdPlain(u.planFeeUsd)} plan fee + ${u.overageCostUsd === null ? '$0.00' : usd(u.overageCostUsd)} overage</div></div>
</div>`;
}

function quickstart(ctx: AppContext, o: { apiBase: string; keyPrefix: string | null }): SafeHtml {
  const key = o.keyPrefix ? `${o.keyPrefix}…` : 'YOUR_API_KEY';
  // Portable: GNU base64 wraps lines (and macOS lacks -w0), so the line breaks are removed by tr.
  const build = String.raw`{ printf '{"image_format":"jpeg","image":"'; base64 < selfie.jpg | tr -d '\n'; printf '"}'; } > body.json`;
  const call = `curl -sS ${o.apiBase}/v1/check/liveness \\\n  -H "X-API-Key: ${key}" \\\n  -H "Content-Type: application/json" \\\n  --data-binary @body.json`;
  return html`<section class="card span-12" aria-labelledby="qs-h" id="quickstart">
  <div class="card-head"><h2 id="qs-h">Quickstart</h2><span class="muted small">Replace <code>${key}</code> with your full key</span></div>
  <ol class="small steps-list">
    <li>Put a selfie into a JSON body (a file, so photos of any size work):<pre class="code" id="qs-body"><code>${build}</code></pre></li>
    <li>Send it:<pre class="code" id="qs-curl"><code>${call}</code></pre></li>
    <li>Check your month: <code>curl -sS ${o.apiBase}/v1/usage -H "X-API-Key: ${key}"</code></li>
  </ol>
  <p class="small muted">Lost the full key? <a href="/console/keys">Regenerate one</a>. Help: ${supportLink(ctx)}</p>
</section>`;
}

export function overviewPage(
  ctx: AppContext,
  o: {
    usage: UsageView;
    plan: PlanState;
    keys: KeyView[];
    firstName: string;
    firstVisit: boolean;
    recoveryCodesLeft: number;
    apiBase: string;
    usageAlerts: boolean;
  },
): string {
  const u = o.usage;
  const p = PLANS[o.plan.plan];
  const scheduled = scheduledText(o.plan.scheduled);
  const atLimit = u.remaining === 0;
  const greeting = `${o.firstVisit ? 'Welcome' : 'Welcome back'}${o.firstName ? `, ${o.firstName}` : ''}`;
  return appPage(ctx, {
    title: 'Overview',
    nav: 'overview',
    body: html`<div class="page-head"><div><h1>${greeting}</h1><p>Usage for ${monthName(u.month)} (UTC). The same numbers as <code>GET /v1/usage</code>.</p></div>
<a class="btn btn-secondary" href="/console/plan">Plan & billing</a></div>
${atLimit && o.plan.hardCap ? html`<div class="alert alert-warn" role="status"><p><strong>Monthly limit reached.</strong> The hard cap is on, so detection requests answer 429 <code>quota_exceeded</code> until ${utc(u.resetAt)}.${o.plan.plan !== 'free' ? ' Upgrade or switch the hard cap off to continue.' : ' Upgrade to continue.'}</p></div>` : ''}
${scheduled ? html`<div class="alert alert-info" role="status"><p>${scheduled} <a href="/console/plan">Manage</a></p></div>` : ''}
${o.recoveryCodesLeft <= 2 ? html`<div class="alert alert-warn" role="status"><p>${o.recoveryCodesLeft === 0 ? 'You have no recovery codes left.' : `Only ${plural(o.recoveryCodesLeft, 'recovery code')} left.`} <a href="/console/security#recovery">Make new ones</a> so a lost phone does not lock you out.</p></div>` : ''}
<div class="grid">
  <section class="card span-8" aria-labelledby="usage-h">
    <div class="card-head"><h2 id="usage-h">Usage this month</h2><span class="muted small">Resets ${utc(u.resetAt)}</span></div>
    ${meter(u.used, u.monthlyLimit)}
    ${usageStats(u, o.plan.hardCap)}
    <div class="card-head"><h3>Calls per day</h3><a class="small" href="/console/usage.csv?month=${u.month}" download id="csv-link">Download CSV</a></div>
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
      <div class="card-head"><h2 id="keys-h">Calls per key</h2></div>
      <ul class="timeline" id="key-usage">${o.keys.map((k) => html`<li data-slot="${k.slot}"><span>${SLOT_LABEL[k.slot]} <code class="prefix">${k.prefix}…</code></span><span class="num" data-key-calls="${k.slot}">${calls(k.callsThisMonth)}</span></li>`)}</ul>
      <a href="/console/keys">Manage keys</a>
    </section>
    <section class="card span-12" aria-labelledby="sec-h">
      <div class="card-head"><h2 id="sec-h">Account security</h2></div>
      <p class="small">Recovery codes left: <strong id="recovery-left">${int(o.recoveryCodesLeft)}</strong> of 10</p>
      <p class="small">Usage alert e-mails: <strong>${o.usageAlerts ? 'on (80 % and 100 %)' : 'off'}</strong></p>
      <a href="/console/security">Password, recovery codes, alerts</a>
    </section>
  </div>
  ${quickstart(ctx, { apiBase: o.apiBase, keyPrefix: o.keys.find((k) => k.slot === 'primary')?.prefix ?? null })}
</div>`,
  });
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
  if (target === 'enterprise') return html`<a class="btn btn-secondary btn-sm" href="mailto:${ctx.support}?subject=Enterprise%20plan">Contact sales</a>`;
  const up = PLANS[target].rank > PLANS[current].rank;
  return html`<a class="btn ${up ? 'btn-primary' : 'btn-secondary'} btn-sm" href="/console/plan/change?plan=${target}">${up ? 'Upgrade…' : 'Downgrade…'}</a>`;
}

function hardCapExplain(o: PlanState): SafeHtml {
  const p = PLANS[o.plan];
  if (o.plan === 'free') {
    return html`<div class="explain"><div class="active"><strong>ON — stop at the limit.</strong> After ${int(o.monthlyLimit)} calls, detection answers 429 <code>quota_exceeded</code> until the month resets. Nothing is ever charged.</div><div><strong>Need more?</strong> Upgrade to a paid plan to get more calls and the choice of metered overage.</div></div>`;
  }
  return html`<div class="explain">
    <div class="${o.hardCap ? 'active' : ''}"><strong>ON — stop at the limit.</strong> After ${int(o.monthlyLimit)} calls, detection answers 429 <code>quota_exceeded</code> until the month resets. You are never billed beyond your plan fee.</div>
    <div class="${o.hardCap ? '' : 'active'}"><strong>OFF — keep going.</strong> Calls past the limit are processed and billed as overage at ${p.overagePerCallUsd === null ? 'the plan price' : `${usd(p.overagePerCallUsd)} per call`}, reported to the marketplace hourly.</div>
  </div>`;
}

export function planPage(ctx: AppContext, o: { plan: PlanState; usage: UsageView }): string {
  const free = o.plan.plan === 'free';
  const scheduled = scheduledText(o.plan.scheduled);
  // Switching ON is safe and immediate; switching OFF can cost money, so it goes through a confirmation.
  const switchForm = o.plan.hardCap
    ? html`<form method="get" action="/console/hard-cap/off">`
    : html`<form method="post" action="/console/hard-cap">${csrfField(ctx.csrf)}<input type="hidden" name="on" value="on">`;
  return appPage(ctx, {
    title: 'Plan & billing',
    nav: 'plan',
    body: html`<div class="page-head"><div><h1>Plan & billing</h1><p>Prices are the public marketplace prices in USD. A change applies once the marketplace confirms it: an upgrade at once, a downgrade or cancellation at the end of the month. Plan changes, cancellation and switching the hard cap off ask you to confirm first; switching the hard cap on applies at once, since it can only lower your bill.</p></div></div>
${pendingPlanChangeNotice(ctx, o.plan.pending)}
${
  scheduled
    ? html`<div class="alert alert-info" role="status" id="scheduled-change"><p><strong>Scheduled.</strong> ${scheduled} Until then nothing changes.</p>
  ${
    o.plan.pending?.kind === 'withdraw_scheduled'
      ? ''
      : html`<form method="post" action="/console/plan/scheduled/withdraw" class="actions">${csrfField(ctx.csrf)}<button class="btn btn-secondary btn-sm" type="submit">Withdraw this change</button></form>`
  }</div>`
    : ''
}
<div class="grid">
  <section class="card span-12" aria-labelledby="hard-cap-h">
    <div class="switch-row">
      <div><h2 id="hard-cap-h">Hard cap</h2>
        <p class="muted small">${free ? 'Always on for the Free (evaluation) plan: it has no overage.' : "Decide what happens when this month's included calls are used up. You can switch at any time."}</p></div>
      ${switchForm}
        <button class="switch" type="submit" role="switch" id="hard-cap-switch" aria-checked="${o.plan.hardCap ? 'true' : 'false'}" aria-labelledby="hard-cap-h hard-cap-state"${free ? html` disabled aria-disabled="true"` : ''}>
          <span class="track" aria-hidden="true"></span><span id="hard-cap-state">${o.plan.hardCap ? 'ON' : 'OFF'}${free ? ' (locked)' : ''}</span>
        </button>
      </form>
    </div>
    ${hardCapExplain(o.plan)}
  </section>
  <section class="card span-12" aria-labelledby="plans-h">
    <div class="card-head"><h2 id="plans-h">Plans</h2><span class="muted small">This month so far: ${calls(o.usage.used)} · ${usd(o.usage.monthToDateUsd)}</span></div>
    <table class="stack" id="plans-table">
      <thead><tr><th scope="col">Plan</th><th scope="col" class="num">Monthly calls</th><th scope="col" class="num">Monthly fee</th><th scope="col" class="num">Overage per call</th><th scope="col" class="num">Change</th></tr></thead>
      <tbody>
      ${PLAN_IDS.map((id) => {
        const plan = PLANS[id];
        return html`<tr class="${id === o.plan.plan ? 'current' : ''}" data-plan="${id}">
          <th scope="row">${plan.name}</th>
          <td class="num" data-label="Monthly calls">${id === 'enterprise' ? `${int(plan.monthlyCalls)} or more` : int(plan.monthlyCalls)}</td>
          <td class="num" data-label="Monthly fee">${plan.monthlyFeeUsd === 0 ? 'Free' : `${id === 'enterprise' ? 'from ' : ''}${usdPlain(plan.monthlyFeeUsd)}`}</td>
          <td class="num" data-label="Overage per call">${plan.overagePerCallUsd === null ? 'not available' : usd(plan.overagePerCallUsd)}</td>
          <td class="num action">${planAction(ctx, o.plan.plan, id)}</td>
        </tr>`;
      })}
      </tbody>
    </table>
    ${
      !o.plan.scheduled?.cancel && o.plan.pending?.kind !== 'cancel' && o.plan.status === 'active'
        ? html`<details class="small"><summary>Cancel the subscription</summary>
      <p>Once the marketplace confirms the cancellation, your keys keep working until the end of that month; the subscription then ends. You can withdraw it until then.</p>
      <form method="post" action="/console/plan/cancel">${csrfField(ctx.csrf)}<button class="btn btn-danger btn-sm" type="submit">Cancel at month end</button></form></details>`
        : ''
    }
  </section>
</div>`,
  });
}

/** What a plan change does, in money and time, before it is made. */
export function planChangeConfirmPage(ctx: AppContext, o: { from: PlanState; to: PlanId; usage: UsageView; effectiveMonth: string | null }): string {
  const from = PLANS[o.from.plan];
  const to = PLANS[o.to];
  const up = o.effectiveMonth === null;
  const u = o.usage;
  const overageNow = u.overageCostUsd ?? 0;
  const effects = up
    ? [
        html`<li><strong>When:</strong> immediately once the marketplace confirms it (until then the change shows as pending).</li>`,
        html`<li><strong>New price:</strong> ${usdPlain(to.monthlyFeeUsd)} a month for ${int(to.monthlyCalls)} calls${to.overagePerCallUsd === null ? '' : html`, overage ${usd(to.overagePerCallUsd)} per call`}.</li>`,
        html`<li><strong>This month's credits:</strong> ${u.used === 0 ? `no calls made yet; all ${int(to.monthlyCalls)} are available after the change.` : `the ${calls(u.used)} already made count towards the new limit of ${int(to.monthlyCalls)}; ${int(Math.max(0, to.monthlyCalls - u.used))} remain after the change.`}</li>`,
        html`<li><strong>Overage:</strong> ${u.overage === 0 ? 'none so far this month.' : `the ${calls(u.overage)} already billed as overage (${usd(overageNow)}) stay billed; calls from now on use the new limit.`}</li>`,
        html`<li><strong>This month's charges:</strong> shown with the ${to.name} fee (${usdPlain(to.monthlyFeeUsd)}) instead of ${usdPlain(from.monthlyFeeUsd)} from now on; the marketplace bills the change under its own proration rules.</li>`,
      ]
    : [
        html`<li><strong>When:</strong> ${firstOf(o.effectiveMonth!)}, 00:00 UTC, once the marketplace confirms it. Until then nothing changes: your ${from.name} limit and price stay.</li>`,
        html`<li><strong>New price from then:</strong> ${to.monthlyFeeUsd === 0 ? 'free' : `${usdPlain(to.monthlyFeeUsd)} a month`} for ${int(to.monthlyCalls)} calls${to.overagePerCallUsd === null ? ', no overage (the hard cap is always on)' : html`, overage ${usd(to.overagePerCallUsd)} per call`}.</li>`,
        html`<li><strong>This month's credits and overage:</strong> unchanged (${calls(u.used)} used of ${int(u.monthlyLimit)}; overage so far ${usd(overageNow)}).</li>`,
        html`<li>You can withdraw the change on the plan page until it takes effect.</li>`,
      ];
  return appPage(ctx, {
    title: `${up ? 'Upgrade' : 'Downgrade'} to ${to.name}`,
    nav: 'plan',
    body: html`<section class="card narrow" aria-labelledby="confirm-h" id="plan-confirm">
  <h1 id="confirm-h">${up ? 'Upgrade' : 'Downgrade'} from ${from.name} to ${to.name}?</h1>
  <ul class="effects">${effects}</ul>
  <form method="post" action="/console/plan/change" data-once class="actions">
    ${csrfField(ctx.csrf)}<input type="hidden" name="plan" value="${o.to}">
    <button class="btn ${up ? 'btn-primary' : 'btn-danger'}" type="submit" id="confirm-plan">${up ? `Upgrade now to ${to.name}` : `Downgrade on ${firstOf(o.effectiveMonth!)}`}</button>
    <a class="btn btn-secondary" href="/console/plan">Keep ${from.name}</a>
  </form>
</section>`,
  });
}

export function hardCapOffConfirmPage(ctx: AppContext, o: { plan: PlanState; usage: UsageView }): string {
  const p = PLANS[o.plan.plan];
  return appPage(ctx, {
    title: 'Switch the hard cap off',
    nav: 'plan',
    body: html`<section class="card narrow" aria-labelledby="confirm-h" id="hard-cap-confirm">
  <h1 id="confirm-h">Switch the hard cap off?</h1>
  <p>Calls past your ${int(o.plan.monthlyLimit)} included calls will <strong>continue and be billed as overage at ${usd(p.overagePerCallUsd ?? 0)} per call</strong>, reported to the marketplace hourly. There is no upper limit.</p>
  <p class="muted">This month so far: ${calls(o.usage.used)}, ${int(o.usage.remaining)} included calls left. You can switch it back on at any time.</p>
  <form method="post" action="/console/hard-cap" data-once class="actions">
    ${csrfField(ctx.csrf)}<input type="hidden" name="on" value="off">
    <button class="btn btn-danger" type="submit">Switch off: bill overage at ${usd(p.overagePerCallUsd ?? 0)} per call</button>
    <a class="btn btn-secondary" href="/console/plan">Keep it on</a>
  </form>
</section>`,
  });
}

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
    <p class="small muted">${plural(active.length, 'active token')} of at most ${int(MAX_LIVE_TOKENS_PER_ACCOUNT)}; all of them share one fair-use allowance. Revoked tokens stop working at once.</p>
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

export function securityPage(
  ctx: AppContext,
  o: {
    recoveryCodesLeft: number;
    usageAlerts: boolean;
    /** When the password was last set: changed (or reset), or else chosen at activation. */
    password: { at: Date; how: 'changed' | 'activation' } | null;
    error?: { form: 'password' | 'codes'; text: string };
  },
): string {
  const err = (form: 'password' | 'codes') => (o.error?.form === form ? html`<div class="alert alert-error" role="alert"><p>${o.error.text}</p></div>` : '');
  return appPage(ctx, {
    title: 'Security',
    nav: 'security',
    body: html`<div class="page-head"><div><h1>Security</h1><p>Your password, authenticator app, two-factor recovery codes and usage alert e-mails.</p></div></div>
<div class="grid">
  <section class="card span-6" aria-labelledby="pw-h" id="change-password">
    <h2 id="pw-h">Change password</h2>
    <p class="small muted" id="password-set">${
      o.password === null ? '' : o.password.how === 'changed' ? `Last changed ${utc(o.password.at)}.` : `Set at activation, ${utc(o.password.at)}.`
    } Changing it signs out every other session.</p>
    ${err('password')}
    <form method="post" action="/console/security/password" data-once>
      ${csrfField(ctx.csrf)}
      <input type="email" name="username" value="${ctx.email}" autocomplete="username" hidden>
      <div class="field"><label for="current">Current password</label><input id="current" name="current" type="password" required autocomplete="current-password"></div>
      ${newPasswordFields()}
      <div class="field"><label for="sec-code">Code from your authenticator app (or a recovery code)</label>
        <input id="sec-code" name="code" type="text" required autocomplete="one-time-code" inputmode="text" maxlength="16" class="mono"></div>
      <button class="btn btn-primary" type="submit">Change password</button>
    </form>
  </section>
  <div class="span-6 grid">
    <section class="card span-12" aria-labelledby="rc-h" id="recovery">
      <h2 id="rc-h">Recovery codes</h2>
      <p>Codes left: <strong id="recovery-left">${int(o.recoveryCodesLeft)}</strong> of 10. Each one signs you in once in place of a code from your phone.</p>
      ${err('codes')}
      <form method="post" action="/console/security/recovery-codes" data-once>
        ${csrfField(ctx.csrf)}
        <div class="field"><label for="rc-code">6-digit code from your authenticator app</label>
          <input id="rc-code" name="code" class="code-input" inputmode="numeric" autocomplete="one-time-code" maxlength="6" required></div>
        <button class="btn btn-secondary" type="submit">Make ten new codes</button>
      </form>
      <p class="small muted">New codes replace all the old ones.</p>
    </section>
    <section class="card span-12" aria-labelledby="authenticator-h" id="authenticator">
      <h2 id="authenticator-h">Authenticator app</h2>
      <p class="small">New phone, or the old one lost? Replace the app that makes your 6-digit codes. You confirm it is you first; the current app keeps working until a code from the new one is accepted.</p>
      <form method="post" action="/console/security/authenticator" data-once>
        ${csrfField(ctx.csrf)}<button class="btn btn-secondary" type="submit" id="replace-authenticator-start">Replace authenticator app</button>
      </form>
    </section>
    <section class="card span-12" aria-labelledby="alerts-h" id="alerts">
      <h2 id="alerts-h">Usage alert e-mails</h2>
      <p class="small">An e-mail to ${ctx.email} when this month's calls reach 80 % and 100 % of your limit (each at most once a month).</p>
      <form method="post" action="/console/security/alerts">
        ${csrfField(ctx.csrf)}<input type="hidden" name="on" value="${o.usageAlerts ? 'off' : 'on'}">
        <p>Alerts are <strong id="alerts-state">${o.usageAlerts ? 'on' : 'off'}</strong>.</p>
        <button class="btn ${o.usageAlerts ? 'btn-secondary' : 'btn-primary'}" type="submit" id="alerts-toggle">${o.usageAlerts ? 'Turn alerts off' : 'Turn alerts on'}</button>
      </form>
    </section>
  </div>
</div>`,
  });
}

/** New password + repeat, with the live rule list (shared by activation, reset and change). */
const newPasswordFields = passwordFields;

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

export function recoveryCodesAppPage(ctx: AppContext, o: { codes: string[] }): string {
  return appPage(ctx, {
    title: 'Recovery codes',
    nav: 'security',
    body: html`<section class="card narrow" aria-labelledby="codes-h">${recoveryCodesBody({ codes: o.codes, next: '/console/security' })}</section>`,
  });
}

export interface AuditView {
  action: string;
  detail: Record<string, unknown> | null;
  at: Date;
}

/** An audit detail field as text (details are stored as free-form JSON). */
function detailText(v: unknown): string {
  return typeof v === 'string' || typeof v === 'number' ? String(v) : '';
}

const ACTIONS: Record<string, (d: Record<string, unknown>) => string> = {
  'key.regenerated': (d) => `Regenerated the ${String(d.slot)} key`,
  'plan.upgraded': (d) => `Upgraded from ${PLANS[d.from as PlanId]?.name ?? d.from} to ${PLANS[d.to as PlanId]?.name ?? d.to}`,
  'plan.downgrade_scheduled': (d) => `Scheduled a downgrade to ${PLANS[d.to as PlanId]?.name ?? d.to} for ${firstOf(String(d.effectiveMonth))}`,
  'plan.cancellation_scheduled': (d) => `Scheduled cancellation for ${firstOf(String(d.effectiveMonth))}`,
  'plan.cancellation_requested': () => "Asked to cancel the subscription (pending the marketplace's confirmation)",
  'plan.scheduled_change_withdrawn': () => 'Withdrew the scheduled plan change',
  'plan.scheduled_change_withdrawal_requested': () => "Asked to withdraw the scheduled plan change (pending the marketplace's confirmation)",
  'plan.change_requested': (d) => `Asked for a change to ${PLANS[d.to as PlanId]?.name ?? d.to} (pending the marketplace's confirmation)`,
  'plan.change_request_withdrawn': () => 'Withdrew the pending request to the marketplace',
  'hard_cap.on': () => 'Switched the hard cap ON',
  'hard_cap.off': () => 'Switched the hard cap OFF',
  'console.sign_in': () => 'Signed in',
  'console.sign_in_failed': () => 'Failed sign-in attempt',
  'console.step_up': (d) => `Confirmed it was you (${d.with === 'totp' ? 'authenticator code' : 'password'}) for a sensitive action`,
  'console.step_up_failed': () => 'Wrong password when confirming a sensitive action',
  'console.two_factor_enabled': () => 'Enabled two-factor sign-in',
  'console.activated': () => 'Activated the account and received both keys',
  'console.registered': () => 'Registered from the marketplace',
  'console.registration_with_known_address': () => 'Someone tried to register a new account with this address (we mailed you)',
  'console.password_reset': () => 'Reset the password by e-mail (all sessions ended)',
  'console.password_changed': () => 'Changed the password (other sessions ended)',
  'console.password_reset_requested': () => 'Asked for a password reset link',
  'console.recovery_code_used': () => 'Signed in with a recovery code',
  'console.two_factor_failed': (d) =>
    d.kind === 'recovery_code'
      ? 'A recovery code that is not valid or was already used was refused'
      : d.kind === 'new_authenticator'
        ? 'A wrong code from the new authenticator app was refused'
        : 'A wrong two-factor code was refused',
  'console.recovery_codes_regenerated': () => 'Made new recovery codes',
  'console.authenticator_replacement_started': () => 'Started replacing the authenticator app',
  'console.authenticator_replaced': () => 'Replaced the authenticator app (other sessions ended, new recovery codes)',
  'usage_alerts.on': () => 'Turned usage alert e-mails on',
  'usage_alerts.off': () => 'Turned usage alert e-mails off',
  'emotion_token.created': (d) => `Created emotion API token “${detailText(d.name)}”`,
  'emotion_token.revoked': (d) => `Revoked emotion API token “${detailText(d.name ?? d.prefix)}”`,
  'status.active': () => 'Account activated',
  'status.suspended': () => 'Account suspended by an operator',
  'status.cancelled': () => 'Subscription ended',
};

export function activityPage(ctx: AppContext, o: { entries: AuditView[] }): string {
  return appPage(ctx, {
    title: 'Activity',
    nav: 'activity',
    body: html`<div class="page-head"><div><h1>Activity</h1><p>Sign-ins, key regenerations, security and plan changes on this account, newest first (last 100).</p></div></div>
<section class="card" aria-label="Activity">
  ${
    o.entries.length === 0
      ? html`<p class="muted">Nothing yet.</p>`
      : html`<ul class="timeline" id="audit-list">${o.entries.map((e) => {
          const describe = ACTIONS[e.action];
          const ip = e.detail && typeof e.detail.ip === 'string' ? ` · from ${e.detail.ip}` : '';
          return html`<li data-action="${e.action}"><span>${describe ? describe(e.detail ?? {}) : e.action}<span class="muted small">${ip}</span></span><time datetime="${e.at.toISOString()}">${utc(e.at)}</time></li>`;
        })}</ul>`
  }
</section>`,
  });
}
