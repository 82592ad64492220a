// admin key regenerate --customer ID --which primary|secondary
// admin key backfill-digests: adds the digest documents of API keys and emotion tokens that have none (front-ends
//   do it once per store at start-up; run this after a rolling upgrade, when instances of the earlier version may
//   have written keys after that). Idempotent.
import { backfillCredentialDigests } from '../../../shared/accounts/credential-digests';
import { output, required, UsageError, type Command } from '../context';

export const key: Command = async (ctx, words, flags) => {
  if (words[0] === 'backfill-digests') {
    const r = await backfillCredentialDigests(ctx.models, true);
    output(ctx, { added: r.added }, `${r.added} credential digest(s) added`);
    return;
  }
  if (words[0] !== 'regenerate') throw new UsageError('key regenerate --customer ID --which primary|secondary | key backfill-digests');
  const which = required(flags, 'which');
  if (which !== 'primary' && which !== 'secondary') throw new UsageError('--which takes primary or secondary');
  const newKey = await ctx.apiKeys.regenerate(required(flags, 'customer'), which);
  output(ctx, { key: newKey }, `${which} key: ${newKey}\n(the old key no longer works; this key is shown only now)`);
};
