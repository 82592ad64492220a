// Owns the Emotion API routes: the tokens page with this month's use, creating a token (names unique per
// account, at most MAX_LIVE_TOKENS_PER_ACCOUNT active; needs a recent proof of identity, step-up.ts) shown once
// after the redirect, and revoking one after a confirmation page. Every change is audited.
import { Router } from 'express';
import { MAX_LIVE_TOKENS_PER_ACCOUNT } from '../../../shared/accounts/emotion-tokens';
import { monthOf } from '../../../shared/billing/month';
import { requireStage } from '../http';
import { appContext, emotionBaseUrl, formField, redirectToReveal, redirectWithFlash, sendPage, signedInAccount, type ConsoleDeps } from '../context';
import { requireRecentProof } from '../auth/step-up';
import { ownActiveToken, tokenViews } from '../presenters/emotion-tokens';
import { alreadyShownPage } from '../views/already-shown';
import { emotionPage, revokeConfirmPage, tokenRevealedPage } from '../views/emotion-tokens';

export function emotionTokenRoutes(d: ConsoleDeps): Router {
  const r = Router();
  const auth = requireStage('authenticated');

  r.get('/emotion', auth, async (req, res) => {
    const a = await signedInAccount(d, req);
    const month = monthOf(d.clock());
    sendPage(res, emotionPage(await appContext(d, req, res, a), { tokens: await tokenViews(d, a, month), month, apiBase: emotionBaseUrl(d, req) }));
  });

  r.post('/emotion/tokens', auth, requireRecentProof(d, { what: 'create an emotion API token', nav: 'emotion' }), async (req, res) => {
    const a = await signedInAccount(d, req);
    const name = formField(req, 'name').trim().slice(0, 80);
    const month = monthOf(d.clock());
    const again = async (error: string) =>
      sendPage(
        res,
        emotionPage(await appContext(d, req, res, a), {
          tokens: await tokenViews(d, a, month),
          month,
          apiBase: emotionBaseUrl(d, req),
          name,
          nameError: error,
        }),
        400,
      );
    if (!name) return again('Give the token a name.');
    // Names are unique per account (revoked tokens included), so the list and the activity log stay unambiguous.
    const held = await d.locks.holding(`token-name:${a._id}`, 10, async () => {
      const tokens = await d.emotionTokens.list(a._id);
      if (tokens.some((t) => t.name.toLowerCase() === name.toLowerCase()))
        return { ok: false as const, refused: `You already have a token named “${name}”. Choose another name.` };
      // Counted under the lock, so concurrent creations cannot pass the cap together.
      if (tokens.filter((t) => !t.revokedAt).length >= MAX_LIVE_TOKENS_PER_ACCOUNT) {
        return {
          ok: false as const,
          refused: `An account can hold at most ${MAX_LIVE_TOKENS_PER_ACCOUNT} active tokens. Revoke one you no longer use, then create the new one.`,
        };
      }
      return { ok: true as const, created: await d.emotionTokens.create(name, a._id) };
    });
    if (!held.held) return again('Another token is being created; try again in a moment.');
    if (!held.value.ok) return again(held.value.refused);
    const { created } = held.value;
    await d.audit.record(a._id, 'emotion_token.created', { name, prefix: created.prefix });
    await redirectToReveal(d, req, res, '/console/emotion/tokens/new', { kind: 'emotion-token', name, token: created.token });
  });

  r.get('/emotion/tokens/new', auth, async (req, res) => {
    const a = await signedInAccount(d, req);
    const reveal = await d.reveals.take(req.consoleSession?.id, 'emotion-token');
    const ctx = await appContext(d, req, res, a);
    if (!reveal) {
      return sendPage(
        res,
        alreadyShownPage(ctx, {
          nav: 'emotion',
          what: 'This token',
          back: { href: '/console/emotion', label: 'Back to Emotion API' },
          again: 'Lost it? Revoke it and create a new one.',
        }),
      );
    }
    sendPage(res, tokenRevealedPage(ctx, { name: reveal.name, token: reveal.token }));
  });

  r.get('/emotion/tokens/:id/revoke', auth, async (req, res) => {
    const a = await signedInAccount(d, req);
    sendPage(res, revokeConfirmPage(await appContext(d, req, res, a), { token: await ownActiveToken(d, a, req.params.id as string, monthOf(d.clock())) }));
  });

  r.post('/emotion/tokens/:id/revoke', auth, async (req, res) => {
    const a = await signedInAccount(d, req);
    const token = await ownActiveToken(d, a, req.params.id as string, monthOf(d.clock()));
    await d.emotionTokens.revoke(token.id, a._id);
    await d.audit.record(a._id, 'emotion_token.revoked', { name: token.name, prefix: token.prefix });
    await redirectWithFlash(d, req, res, '/console/emotion', { kind: 'success', text: `Token “${token.name}” is revoked; it stops working at once.` });
  });

  return r;
}
