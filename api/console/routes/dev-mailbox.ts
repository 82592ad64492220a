// Owns /console/dev/mailbox: the local mail sink's messages in the browser. Mounted only in local mode
// (MAILBOX_DIR set by `npm start`, and never when NODE_ENV=production). Answers loopback clients only:
// verification mail must not be readable from the network even when HOST opens the port to it. And only under
// a loopback Host name: a page on another site whose name a DNS-rebinding attack points at 127.0.0.1 reaches
// this port from the developer's own browser (a loopback peer) but sends its own name as Host.
import { Router } from 'express';
import net from 'node:net';
import { NotFoundError } from '../../../shared/errors';
import { listMessages } from '../../../shared/mail/mailbox';
import { mailboxPage } from '../views/mailbox';
import { hasLoopbackHostHeader, pageContext, sendPage, type ConsoleDeps } from '../context';

export function devMailboxRoutes(d: ConsoleDeps, dir: string): Router {
  const r = Router();
  r.get('/dev/mailbox', async (req, res) => {
    // Both the peer and the client it speaks for (a trusted proxy's X-Forwarded-For) must be this machine.
    if (!isLoopbackAddress(req.socket.remoteAddress) || !isLoopbackAddress(req.ip) || !hasLoopbackHostHeader(req)) {
      throw new NotFoundError('There is no console page at this address.');
    }
    sendPage(res, mailboxPage(await pageContext(d, req, res), { messages: listMessages(dir).slice(0, 50), dir }));
  });
  return r;
}

function isLoopbackAddress(address: string | undefined): boolean {
  if (!address) return false;
  const v4 = address.startsWith('::ffff:') ? address.slice(7) : address;
  return address === '::1' || (net.isIPv4(v4) && v4.startsWith('127.'));
}
