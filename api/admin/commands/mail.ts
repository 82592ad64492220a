// admin mail list: the local mail sink's mailbox (embedded default only; with a real SMTP_URL mail
// leaves this machine and there is nothing to list).
import path from 'node:path';
import { linksIn, listMessages } from '../../../shared/mail/mailbox';
import { readLocalState } from '../../../shared/local-state';
import { optional, output, UsageError, type Command } from '../context';

export const mail: Command = async (ctx, words, flags) => {
  if (words[0] !== 'list') throw new UsageError('mail list [--to ADDRESS] [--json]');
  const dir = ctx.config.MAILBOX_DIR ?? readLocalState(ctx.config.VAR_DIR)?.mailDir ?? path.join(ctx.config.VAR_DIR, 'mailbox');
  const to = optional(flags, 'to')?.toLowerCase();
  const messages = listMessages(dir)
    .filter((m) => !to || m.to.some((t) => t.toLowerCase() === to))
    .map((m) => ({ id: m.id, receivedAt: m.receivedAt, from: m.from, to: m.to, subject: m.subject, text: m.text, links: linksIn(m) }));
  const human =
    messages.length === 0
      ? `No messages in ${dir}`
      : messages.map((m) => `${m.receivedAt}  ${m.to.join(', ')}  ${m.subject}\n  ${m.links.join('\n  ')}`).join('\n');
  output(ctx, { mailbox: dir, messages }, human);
};
