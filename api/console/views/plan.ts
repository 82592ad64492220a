// Owns the Plan & billing pages: the plan table with the scheduled and pending changes, the plan change
// confirmation, and the hard cap with its OFF confirmation.
import { PLANS, PLAN_IDS, type PlanId } from '../../../shared/billing/plans';
import { html, type SafeHtml } from './html';
import { appPage, type AppContext } from './layout';
import { csrfField } from './components';
import { calls, firstOf, int, usd, usdPlain } from './format';
import type { UsageView } from '../usage';
import { pendingPlanChangeNotice, type PendingPlanChange } from './plan-pending';

export interface PlanState {
  plan: PlanId;
  monthlyLimit: number;
  hardCap: boolean;
  status: string;
  scheduled: { plan: PlanId | null; cancel: boolean; effectiveMonth: string } | null;
  /** A change asked for in the console, waiting for the marketplace's confirmation. */
  pending: PendingPlanChange | null;
}

export function scheduledText(s: PlanState['scheduled']): string | null {
  if (!s) return null;
  const when = `${firstOf(s.effectiveMonth)}, 00:00 UTC`;
  return s.cancel ? `Your subscription ends at the end of this month (on ${when}).` : `Your plan changes to ${PLANS[s.plan!].name} on ${when}.`;
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
