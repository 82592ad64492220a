// `npm run -s admin -- <command> …`: the operator CLI. With --json it prints one JSON object on stdout,
// a contract other tools rely on. Works against the running service's database (the embedded one too).
import { AppError } from '../../shared/errors';
import { parseArgs } from '../../shared/cli-args';
import { openContext, UsageError, type Command } from './context';
import { account } from './commands/account';
import { key } from './commands/key';
import { usage } from './commands/usage';
import { emotionToken } from './commands/emotion-token';
import { metering } from './commands/metering';
import { marketplace } from './commands/marketplace';
import { mail } from './commands/mail';
import { retention } from './commands/retention';

const COMMANDS: Record<string, Command> = {
  account,
  key,
  usage,
  'emotion-token': emotionToken,
  metering,
  marketplace,
  mail,
  retention,
};

const HELP = `usage: npm run -s admin -- <command> [--json | --get FIELD]
  account create --email E --plan P [--company C] [--hard-cap on|off] [--monthly-limit N]
  account set --customer ID [--plan P] [--hard-cap on|off] [--monthly-limit N] [--status active|suspended|cancelled]
  account show --customer ID
  account reset-2fa --customer ID      (after verifying the customer: clears TOTP and recovery codes, ends sessions)
  key regenerate --customer ID --which primary|secondary
  key backfill-digests          (after a rolling upgrade: digest documents for keys and tokens that have none)
  usage show --customer ID
  usage backfill                (once after upgrading: counts the usage events written before usage counters)
  emotion-token create --name N [--customer ID] | emotion-token revoke --id ID
  metering rollup [--hour YYYY-MM-DDTHH | --since YYYY-MM-DDTHH]
  metering pending | metering mark-reported --hour YYYY-MM-DDTHH --customer ID
  marketplace subscribe --plan P [--account ID] [--subscription ID]
  marketplace entitle --subscription ID --plan P [--event ID] [--at TIME] [--url BASE]   (a signed entitlement event, as the marketplace sends)
  marketplace unsubscribe --subscription ID [--ended] [--event ID] [--at TIME] [--url BASE]   (unsubscribe.pending, or .success with --ended)
  marketplace backfill-subscriptions   (after a rolling upgrade: the top-level subscription id of accounts that have none)
  mail list [--to ADDRESS]
  retention prune --keep-months N [--dry-run]`;

async function main(): Promise<number> {
  const [name, ...rest] = process.argv.slice(2);
  const command = name ? COMMANDS[name] : undefined;
  if (!command) {
    process.stderr.write(`${HELP}\n`);
    return name ? 64 : 0;
  }
  const { words, flags } = parseArgs(rest);
  const get = typeof flags.get === 'string' ? flags.get : undefined;
  const json = flags.json === true || get !== undefined;
  let ctx;
  try {
    ctx = await openContext(json, get);
    await command(ctx, words, flags);
    return 0;
  } catch (err) {
    const message = err instanceof UsageError || err instanceof AppError ? err.message : String((err as Error)?.message ?? err);
    if (json) process.stdout.write(`${JSON.stringify({ error: { code: err instanceof AppError ? err.code : 'usage', message } })}\n`);
    process.stderr.write(`admin: ${message}\n`);
    return err instanceof UsageError ? 64 : 1;
  } finally {
    await ctx?.close();
  }
}

void main().then((code) => process.exit(code));
