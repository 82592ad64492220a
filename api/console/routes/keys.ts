// Owns the API keys routes: the list, regenerating a key (confirmation page, then a POST that needs a recent
// proof of identity, step-up.ts) and the new key shown once after the redirect (POST → 303 → GET).
import { Router } from 'express';
import { NotFoundError } from '../../../shared/errors';
import { monthOf } from '../../../shared/billing/month';
import { requireStage } from '../http';
import { appContext, redirectToReveal, sendPage, signedInAccount, type ConsoleDeps } from '../context';
import { requireRecentProof } from '../auth/step-up';
import { keyViews, slotOf } from '../presenters/keys';
import { alreadyShownPage } from '../views/already-shown';
import { keyRevealedPage, keysPage, regenerateConfirmPage } from '../views/keys';

export function keysRoutes(d: ConsoleDeps): Router {
  const r = Router();
  const auth = requireStage('authenticated');

  r.get('/keys', auth, async (req, res) => {
    const a = await signedInAccount(d, req);
    const month = monthOf(d.clock());
    sendPage(res, keysPage(await appContext(d, req, res, a), { keys: await keyViews(d, a, month), month }));
  });

  r.get('/keys/:slot/regenerate', auth, async (req, res) => {
    const a = await signedInAccount(d, req);
    const slot = slotOf(req.params.slot as string);
    const key = (await d.apiKeys.keyPrefixes(a._id)).find((k) => k.slot === slot);
    if (!key) throw new NotFoundError('No such key');
    sendPage(res, regenerateConfirmPage(await appContext(d, req, res, a), { slot, prefix: key.prefix }));
  });

  r.post('/keys/:slot/regenerate', auth, requireRecentProof(d, { what: 'regenerate this key', nav: 'keys' }), async (req, res) => {
    const a = await signedInAccount(d, req);
    const slot = slotOf(req.params.slot as string);
    // regenerate() audits and replaces the stored hash: the old key answers 401 from now on.
    const key = await d.apiKeys.regenerate(a._id, slot);
    await redirectToReveal(d, req, res, `/console/keys/${slot}/new`, { kind: 'api-key', slot, key });
  });

  r.get('/keys/:slot/new', auth, async (req, res) => {
    const a = await signedInAccount(d, req);
    const slot = slotOf(req.params.slot as string);
    const reveal = await d.reveals.take(req.consoleSession?.id, 'api-key');
    const ctx = await appContext(d, req, res, a);
    if (!reveal || reveal.slot !== slot) {
      return sendPage(
        res,
        alreadyShownPage(ctx, {
          nav: 'keys',
          what: 'This key',
          back: { href: '/console/keys', label: 'Back to API keys' },
          again: 'Lost it? Regenerate the key again from the API keys page.',
        }),
      );
    }
    sendPage(res, keyRevealedPage(ctx, { slot, key: reveal.key }));
  });

  return r;
}
