// admin key regenerate --customer ID --which primary|secondary
import { output, required, UsageError, type Command } from '../context';

export const key: Command = async (ctx, words, flags) => {
  if (words[0] !== 'regenerate') throw new UsageError('key regenerate --customer ID --which primary|secondary');
  const which = required(flags, 'which');
  if (which !== 'primary' && which !== 'secondary') throw new UsageError('--which takes primary or secondary');
  const newKey = await ctx.accounts.regenerate(required(flags, 'customer'), which);
  output(ctx, { key: newKey }, `${which} key: ${newKey}\n(the old key no longer works; this key is shown only now)`);
};
