// Owns a process's life: start, then on SIGTERM/SIGINT stop once, cleanly, and exit.
import type { Logger } from './logger';

export function runUntilSignal(log: Logger, start: () => Promise<{ stop(): Promise<void> }>): void {
  let stopping = false;
  start()
    .then((running) => {
      const shutdown = (signal: string) => {
        if (stopping) return;
        stopping = true;
        log.info({ signal }, 'stopping');
        running.stop().then(
          () => process.exit(0),
          (err) => {
            log.error({ err }, 'unclean stop');
            process.exit(1);
          },
        );
      };
      process.on('SIGTERM', () => shutdown('SIGTERM'));
      process.on('SIGINT', () => shutdown('SIGINT'));
      // Started by the local supervisor: stop when it is gone, whatever killed it.
      if (process.send) process.on('disconnect', () => shutdown('supervisor-gone'));
    })
    .catch((err) => {
      log.fatal({ err }, 'failed to start');
      process.exit(1);
    });
  process.on('unhandledRejection', (err) => log.error({ err }, 'unhandled rejection'));
}
