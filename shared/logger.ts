// Owns structured logging: one pino root logger, secrets redacted, child loggers per request or job.
import pino, { type Logger } from 'pino';

export type { Logger };

const REDACT = [
  'req.headers["x-api-key"]',
  'req.headers.authorization',
  'req.headers.cookie',
  'res.headers["set-cookie"]',
  '*.password',
  '*.totpSecret',
  '*.apiKey',
  '*.token',
  '*.image',
];

export function createLogger(name: string, level = 'info'): Logger {
  return pino({
    name,
    level,
    base: { pid: process.pid, svc: name },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: { paths: REDACT, censor: '[redacted]' },
  });
}
