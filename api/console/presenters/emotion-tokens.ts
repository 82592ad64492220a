// Owns the emotion API tokens' view model: the tokens the console lists (the active ones and the most recently
// revoked, EmotionTokenService.listed) with their calls and audio minutes this month and last use (usage.ts),
// as views/emotion-tokens.ts draws them.
import { NotFoundError } from '../../../shared/errors';
import type { Account } from '../../../shared/accounts/account-service';
import type { EmotionToken, EmotionTokenService } from '../../../shared/accounts/emotion-tokens';
import type { Models } from '../../../shared/db/models';
import { usageByToken } from '../usage';
import type { TokenView } from '../views/emotion-tokens';

type Deps = { emotionTokens: EmotionTokenService; models: Models };

export async function tokenViews(d: Deps, a: Account, month: string): Promise<TokenView[]> {
  return await viewsOf(d, await d.emotionTokens.listed(a._id), month);
}

async function viewsOf(d: Deps, tokens: EmotionToken[], month: string): Promise<TokenView[]> {
  const byToken = await usageByToken(
    d.models,
    month,
    tokens.map((t) => t._id),
  );
  return tokens.map((t) => {
    const u = byToken.get(t._id);
    return {
      id: t._id,
      name: t.name,
      prefix: t.prefix,
      createdAt: (t as { createdAt?: Date }).createdAt ?? null,
      revokedAt: t.revokedAt ?? null,
      lastUsedAt: u?.lastUsedAt ?? null,
      calls: u?.calls ?? 0,
      audioSeconds: u?.audioSeconds ?? 0,
    };
  });
}

/** The account's active token with this id, or 404. */
export async function ownActiveToken(d: Deps, a: Account, id: string, month: string): Promise<TokenView> {
  const own = await d.models.EmotionToken.findOne({ _id: id, customerId: a._id, revokedAt: null }).lean();
  if (!own) throw new NotFoundError('There is no active token with this id on your account.');
  return (await viewsOf(d, [own], month))[0]!;
}
