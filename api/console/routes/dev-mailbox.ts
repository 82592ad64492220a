// Owns /console/dev/mailbox: the local mail sink's messages in the browser. Mounted only in local mode
// (MAILBOX_DIR set by `npm start`, and never when NODE_ENV=production).
import { Router } from 'express';
import { listMessages } from '../../../shared/mail/mailbox';
import { mailboxPage } from '../views/mailbox';
import { pageContext, sendPage, type ConsoleDeps } from '../context';

export function devMailboxRoutes(d: ConsoleDeps, dir: string): Router {
  const r = Router();
  r.get('/dev/mailbox', async (req, res) => {
    sendPage(res, mailboxPage(await pageContext(d, req, res), { messages: listMessages(dir).slice(0, 50), dir }));
  });
  return r;
}
