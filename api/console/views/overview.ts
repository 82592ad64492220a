// Owns the Overview page (/console/dashboard): this month's usage and charges with the daily chart, calls per
// key, recovery codes left, the welcome line and the quickstart card.
import { PLANS } from '../../../shared/billing/plans';
import { html, type SafeHtml } from './html';
import { appPage, type AppContext } from './layout';
import { calls, int, monthName, plural, usd, usdPlain, utc } from './format';
import { dailyChart, meter } from './usage-chart';
import { SLOT_LABEL, supportLink } from './components';
import type { UsageView } from '../usage';
import { scheduledText, type PlanState } from './plan';
import type { KeyView } from './keys';

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
