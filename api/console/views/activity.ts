// Owns the Activity page: the account's audit entries in words.
import { PLANS, type PlanId } from '../../../shared/billing/plans';
import type { AuditEntry } from '../../../shared/accounts/audit-log';
import { html } from './html';
import { appPage, type AppContext } from './layout';
import { firstOf, utc } from './format';

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

export function activityPage(ctx: AppContext, o: { entries: AuditEntry[] }): string {
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
