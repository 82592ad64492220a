// Owns the plan page's notice of a console request waiting for the marketplace — a plan change, a cancellation
// or withdrawing a scheduled change: what was asked for, that nothing changes until the marketplace confirms
// it, and a way to withdraw the request.
import { PLANS, type PlanId } from '../../../shared/billing/plans';
import { html, type SafeHtml } from './html';
import type { AppContext } from './layout';
import { csrfField } from './components';
import { utc } from './format';

export type PendingPlanChange = { kind: 'plan'; plan: PlanId; requestedAt: Date | null } | { kind: 'cancel' | 'withdraw_scheduled'; requestedAt: Date | null };

function whatWaits(pending: PendingPlanChange): string {
  if (pending.kind === 'plan') return `your change to the ${PLANS[pending.plan]?.name ?? pending.plan} plan`;
  return pending.kind === 'cancel' ? 'your cancellation' : 'withdrawing the scheduled change';
}

function untilThen(pending: PendingPlanChange): string {
  if (pending.kind === 'cancel')
    return 'Your subscription continues unchanged until then; once confirmed, it ends at the end of that month and you can still withdraw it until then.';
  if (pending.kind === 'withdraw_scheduled') return 'The change stays scheduled until then; once confirmed, your current plan simply continues.';
  return 'Your current plan, limit and price stay until then; this page shows the new plan once it is confirmed.';
}

export function pendingPlanChangeNotice(ctx: AppContext, pending: PendingPlanChange | null): SafeHtml | string {
  if (!pending) return '';
  const asked = pending.requestedAt ? ` (asked for ${utc(pending.requestedAt)})` : '';
  return html`<div class="alert alert-info" role="status" id="pending-change" data-kind="${pending.kind}">
  <p><strong>Pending:</strong> ${whatWaits(pending)}${asked} waits for the marketplace to confirm it. ${untilThen(pending)}</p>
  <form method="post" action="/console/plan/pending/withdraw" class="inline">${csrfField(ctx.csrf)}<button class="btn btn-secondary btn-sm" type="submit">Withdraw the request</button></form>
</div>`;
}
