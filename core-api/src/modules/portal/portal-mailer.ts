import { createTransport } from 'nodemailer';
import type { Logger } from 'pino';

/** Where invite and reset links go: e-mail when `PTS_SMTP_URL` is set, the log otherwise. */
export interface PortalMailer {
  /** `mail`: the person receives the link; `log`: only the operator's log (and the CLI's answer) holds it. */
  readonly kind: 'mail' | 'log';
  send(message: { to: string; subject: string; text: string; link: string }): Promise<void>;
}

export function createPortalMailer(options: {
  smtpUrl?: string | undefined;
  from: string;
  logger: Logger;
}): PortalMailer {
  const { logger } = options;
  if (!options.smtpUrl) {
    return {
      kind: 'log',
      async send({ to, subject, link }) {
        // No mail server configured (local development): the operator passes the link on.
        logger.info({ to, subject, link }, 'portal link (set PTS_SMTP_URL to e-mail it)');
      },
    };
  }
  const transport = createTransport(options.smtpUrl);
  return {
    kind: 'mail',
    async send({ to, subject, text }) {
      await transport.sendMail({ from: options.from, to, subject, text });
      logger.info({ to, subject }, 'portal link e-mailed');
    },
  };
}
