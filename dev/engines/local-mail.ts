// Owns the embedded local mail sink: a real SMTP server on 127.0.0.1 (smtp-server) that parses each
// message (mailparser) into the local mailbox folder. `npm start` runs it when SMTP_URL is unset;
// tests run their own. It accepts any sender and recipient and relays nothing.
import { randomUUID } from 'node:crypto';
import { SMTPServer } from 'smtp-server';
import { simpleParser, type AddressObject } from 'mailparser';
import { storeMessage } from '../../shared/mail/mailbox';

export interface LocalMail {
  /** smtp://127.0.0.1:<port> for nodemailer. */
  url: string;
  port: number;
  dir: string;
  stop(): Promise<void>;
}

const MAX_MESSAGE_BYTES = 1024 * 1024;

function addresses(a: AddressObject | AddressObject[] | undefined): string[] {
  const list = Array.isArray(a) ? a : a ? [a] : [];
  return list.flatMap((x) => x.value.map((v) => v.address ?? '')).filter(Boolean);
}

export function startLocalMail(opts: { dir: string; port?: number }): Promise<LocalMail> {
  const server = new SMTPServer({
    // Loopback only and no relaying: plain SMTP without auth or TLS is what a sink needs.
    authOptional: true,
    disabledCommands: ['AUTH', 'STARTTLS'],
    size: MAX_MESSAGE_BYTES,
    logger: false,
    onData(stream, session, callback) {
      simpleParser(stream)
        .then((parsed) => {
          const envelopeTo = session.envelope.rcptTo.map((r) => r.address);
          storeMessage(opts.dir, {
            id: randomUUID(),
            receivedAt: new Date().toISOString(),
            from: parsed.from?.text ?? (session.envelope.mailFrom ? session.envelope.mailFrom.address : ''),
            to: envelopeTo.length > 0 ? envelopeTo : addresses(parsed.to),
            subject: parsed.subject ?? '',
            text: parsed.text ?? '',
            html: typeof parsed.html === 'string' ? parsed.html : null,
          });
          callback();
        })
        .catch((err: Error) => callback(err));
    },
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, '127.0.0.1', () => {
      server.off('error', reject);
      const address = server.server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      resolve({
        url: `smtp://127.0.0.1:${port}`,
        port,
        dir: opts.dir,
        stop: () => new Promise<void>((done) => server.close(() => done())),
      });
    });
  });
}
