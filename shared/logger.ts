// Owns structured logging: one pino root logger, secrets redacted, child loggers per request or job.
import os from 'node:os';
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

/** `destination` defaults to stdout; tests pass a stream to read what was logged. */
export function createLogger(name: string, level = 'info', destination?: pino.DestinationStream): Logger {
  const options: pino.LoggerOptions = {
    name,
    level,
    // The host beside the pid: a pid names a process only on its own host (every container's is 1 or 7).
    base: { pid: process.pid, host: os.hostname(), svc: name },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: { paths: REDACT, censor: '[redacted]' },
  };
  return destination ? pino(options, destination) : pino(options);
}
