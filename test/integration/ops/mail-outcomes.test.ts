import { expect } from 'chai';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createMailer } from '../../../api/console/mail/mailer';
import { verificationMail } from '../../../api/console/mail/templates';
import { startLocalMail, type LocalMail } from '../../../dev/engines/local-mail';
import { quietLog, testConfig } from '../../support/config';

/** A port with nothing listening: SMTP delivery to it fails at once. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

describe('console mail: every hand-over to SMTP is counted, so failing mail can alert (lc_mail_sent_total)', () => {
  let sink: LocalMail;
  let dir: string;
  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mail-outcomes-'));
    sink = await startLocalMail({ dir });
  });
  after(async () => {
    await sink.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const mail = verificationMail({ firstName: 'Ada', link: 'http://127.0.0.1/console/verify?token=x', validHours: 24 });

  it('counts a delivered mail as sent', async () => {
    const outcomes: string[] = [];
    const mailer = createMailer(testConfig('{t-mail}', { SMTP_URL: sink.url }), quietLog, (o) => outcomes.push(o));
    await mailer.send('ada@example.com', mail);
    mailer.close();
    expect(outcomes).to.deep.equal(['sent']);
  });

  it('counts a refused hand-over as failed and answers 503 mail_unavailable', async () => {
    const outcomes: string[] = [];
    const mailer = createMailer(testConfig('{t-mail}', { SMTP_URL: `smtp://127.0.0.1:${await closedPort()}` }), quietLog, (o) => outcomes.push(o));
    const err = await mailer.send('ada@example.com', mail).then(
      () => null,
      (e: unknown) => e as { code?: string; httpStatus?: number },
    );
    mailer.close();
    expect(err).to.include({ code: 'mail_unavailable', httpStatus: 503 });
    expect(outcomes).to.deep.equal(['failed']);
  });
});
