// Owns outgoing mail: one nodemailer SMTP transport to SMTP_URL. Callers hand it a rendered template.
import nodemailer, { type Transporter } from 'nodemailer';
import type { Config } from '../../../shared/config';
import { ServiceUnavailableError } from '../../../shared/errors';
import type { Logger } from '../../../shared/logger';
import type { RenderedMail } from './templates';

export interface Mailer {
  send(to: string, mail: RenderedMail): Promise<void>;
  close(): void;
}

/** `onOutcome` counts each hand-over to SMTP (lc_mail_sent_total), so failing mail can alert. */
export function createMailer(config: Config, log: Logger, onOutcome: (outcome: 'sent' | 'failed') => void = () => undefined): Mailer {
  let transport: Transporter | null = null;
  if (config.SMTP_URL) transport = nodemailer.createTransport(config.SMTP_URL);
  else log.warn('SMTP_URL is not set: the console cannot send verification or welcome e-mail');
  return {
    async send(to, mail) {
      if (!transport) throw new ServiceUnavailableError('e-mail is not configured (SMTP_URL)', 60, 'mail_unavailable');
      try {
        const info = await transport.sendMail({ from: config.MAIL_FROM, to, subject: mail.subject, text: mail.text, html: mail.html });
        // The message id and template name only: the body carries single-use links.
        log.info({ template: mail.template, messageId: info.messageId }, 'mail sent');
        onOutcome('sent');
      } catch (err) {
        log.error({ template: mail.template, err: (err as Error).message }, 'mail delivery failed');
        onOutcome('failed');
        throw new ServiceUnavailableError('we could not send the e-mail just now; try again in a minute', 60, 'mail_unavailable');
      }
    },
    close() {
      transport?.close();
    },
  };
}
