// Owns the Activity route: the account's last 100 audit entries, newest first.
import { Router } from 'express';
import { requireStage } from '../http';
import { appContext, sendPage, signedInAccount, type ConsoleDeps } from '../context';
import { activityPage } from '../views/activity';

/** How many audit entries the page lists. */
const ACTIVITY_ENTRIES = 100;

export function activityRoutes(d: ConsoleDeps): Router {
  const r = Router();
  const auth = requireStage('authenticated');

  r.get('/activity', auth, async (req, res) => {
    const a = await signedInAccount(d, req);
    const entries = await d.audit.recent(a._id, ACTIVITY_ENTRIES);
    sendPage(res, activityPage(await appContext(d, req, res, a), { entries }));
  });

  return r;
}
