// Owns usage alert e-mails: a small in-process scheduler (never on a request's path) that looks at
// accounts which opted in and mails once per month per threshold (80 % and 100 % of the monthly
// limit). "Once" holds across replicas: each send is claimed with a Redis SET NX marker first.
import { usageAlertMail } from './mail/templates';
import type { ConsoleDeps } from './context';
import { usageOf } from './usage';

const ALERT_THRESHOLDS = [100, 80] as const;
/** Markers outlive their month (the longest month plus slack), then expire on their own. */
const MARKER_TTL_S = 40 * 24 * 3600;

/** One pass over the opted-in accounts; returns how many alert e-mails were sent. */
async function runUsageAlerts(d: ConsoleDeps): Promise<number> {
  let sent = 0;
  for (const stale of await d.accounts.withUsageAlerts()) {
    const account = await d.accounts.current(stale._id);
    if (!account || account.status !== 'active' || !account.usageAlerts) continue;
    const usage = await usageOf(d.accounts, d.ledger, d.clock, account);
    if (usage.monthlyLimit <= 0) continue;
    const percent = (usage.used / usage.monthlyLimit) * 100;
    // The highest threshold crossed is the one worth a message; lower ones are marked with it.
    const crossed = ALERT_THRESHOLDS.filter((t) => percent >= t);
    if (crossed.length === 0) continue;
    const markers = crossed.map((t) => `${d.config.QUEUE_PREFIX}:console:usage-alert:${account._id}:${usage.month}:${t}`);
    const claimed = await d.redis.set(markers[0]!, '1', 'EX', MARKER_TTL_S, 'NX');
    for (const m of markers.slice(1)) await d.redis.set(m, '1', 'EX', MARKER_TTL_S, 'NX');
    if (claimed !== 'OK') continue;
    const view = d.accounts.planView(account);
    try {
      await d.mailer.send(
        account.email,
        usageAlertMail({
          firstName: account.firstName || 'there',
          threshold: crossed[0]!,
          used: usage.used,
          limit: usage.monthlyLimit,
          month: usage.month,
          hardCap: view.hardCap,
          perCallUsd: usage.perCallUsd,
          resetAt: usage.resetAt,
          dashboardUrl: `${(d.config.PUBLIC_BASE_URL ?? `http://localhost:${d.config.LIVENESS_PORT}`).replace(/\/+$/, '')}/console/dashboard`,
        }),
      );
      sent++;
    } catch {
      await d.redis.del(markers[0]!); // try again on the next pass
    }
  }
  return sent;
}

/** Runs the pass every USAGE_ALERT_INTERVAL_MS (one at a time); stops when Redis is closed. */
export function startUsageAlerts(d: ConsoleDeps): () => void {
  let running = false;
  const timer = setInterval(async () => {
    if (running || d.redis.status !== 'ready') return;
    running = true;
    try {
      const sent = await runUsageAlerts(d);
      if (sent > 0) d.log.info({ sent }, 'usage alert e-mails sent');
    } catch (err) {
      d.log.warn({ err: (err as Error).message }, 'usage alert pass failed; the next pass retries');
    } finally {
      running = false;
    }
  }, d.config.USAGE_ALERT_INTERVAL_MS);
  timer.unref();
  const stop = () => clearInterval(timer);
  d.redis.once('end', stop);
  return stop;
}
