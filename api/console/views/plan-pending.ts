// Owns the plan page's notice of a plan change waiting for the marketplace: what was asked for, that nothing
// changes until the marketplace confirms it, and a way to withdraw the request.
import { PLANS, type PlanId } from '../../../shared/billing/plans';
import { html, type SafeHtml } from './html';
import { csrfField, type AppContext } from './layout';
import { utc } from './format';

export interface PendingPlanChange {
  plan: PlanId;
  requestedAt: Date | null;
}

export function pendingPlanChangeNotice(ctx: AppContext, pending: PendingPlanChange | null): SafeHtml | string {
  if (!pending) return '';
  const to = PLANS[pending.plan]?.name ?? pending.plan;
  return html`<div class="alert alert-info" role="status" id="pending-change">
  <p><strong>Pending:</strong> your change to the ${to} plan${pending.requestedAt ? ` (asked for ${utc(pending.requestedAt)})` : ''} waits for the marketplace to confirm it. Your current plan, limit and price stay until then; this page shows the new plan once it is confirmed.</p>
  <form method="post" action="/console/plan/pending/withdraw" class="inline">${csrfField(ctx.csrf)}<button class="btn btn-secondary btn-sm" type="submit">Withdraw the request</button></form>
</div>`;
}
