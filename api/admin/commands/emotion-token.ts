// admin emotion-token create --name N [--customer ID] | revoke --id ID
import { optional, output, required, UsageError, type Command } from '../context';

export const emotionToken: Command = async (ctx, words, flags) => {
  if (words[0] === 'create') {
    const t = await ctx.emotionTokens.create(required(flags, 'name'), optional(flags, 'customer') ?? null);
    output(ctx, { id: t.id, token: t.token }, `token ${t.id}: ${t.token}\n(shown only now)`);
    return;
  }
  if (words[0] === 'revoke') {
    const id = required(flags, 'id');
    await ctx.emotionTokens.revoke(id);
    output(ctx, { id, revoked: true }, `token ${id} revoked`);
    return;
  }
  throw new UsageError('emotion-token create --name N | revoke --id ID');
};
