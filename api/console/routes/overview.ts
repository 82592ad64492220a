// Owns the Overview routes: /console (→ the dashboard), /console/dashboard (usage, charges, calls per key,
// recovery codes left, quickstart) and /console/usage.csv (the daily series the chart and its table draw).
import { Router } from 'express';
import { requireStage } from '../http';
import { appContext, baseUrl, sendPage, signedInAccount, type ConsoleDeps } from '../context';
import { dailyCsv, usageOf } from '../usage';
import { keyViews } from '../presenters/keys';
import { planState } from '../presenters/plan';
import { overviewPage } from '../views/overview';

export function overviewRoutes(d: ConsoleDeps): Router {
  const r = Router();
  const auth = requireStage('authenticated');

  r.get('/', auth, (_req, res) => res.redirect(303, '/console/dashboard'));

  r.get('/dashboard', auth, async (req, res) => {
    const a = await signedInAccount(d, req);
    const u = await usageOf(d.accounts, d.ledger, d.clock, a);
    const [keys, signIns] = await Promise.all([keyViews(d, a, u.month), d.audit.count(a._id, 'console.sign_in')]);
    sendPage(
      res,
      overviewPage(await appContext(d, req, res, a), {
        usage: u,
        plan: planState(d.accounts, a),
        keys,
        firstName: a.firstName ?? '',
        firstVisit: signIns <= 1,
        recoveryCodesLeft: await d.recoveryCodes.unspent(a),
        apiBase: baseUrl(d, req),
        usageAlerts: !!a.usageAlerts,
      }),
    );
  });

  /** The daily chart's numbers as CSV (this month; the same series the chart and its table draw). */
  r.get('/usage.csv', auth, async (req, res) => {
    const a = await signedInAccount(d, req);
    const u = await usageOf(d.accounts, d.ledger, d.clock, a);
    res.setHeader('Content-Disposition', `attachment; filename="usage-${u.month}.csv"`);
    res.type('text/csv; charset=utf-8').send(dailyCsv(u.month, u.daily));
  });

  return r;
}
