// Owns the test-only fault hook: with FAULT_KILL_AT naming a step, the worker SIGKILLs itself the first time it
// reaches that step, so the suite can prove that a crash at any step bills nothing unanswered and loses or doubles
// no usage event. Off unless the variable is set; shared/config.ts refuses it when NODE_ENV=production.
import type { Config } from '../../shared/config';
import type { Logger } from '../../shared/logger';

export type FaultStep = NonNullable<Config['FAULT_KILL_AT']>;
export type FaultHook = (step: FaultStep) => void;

export function faultHook(armed: FaultStep | undefined, log: Logger): FaultHook {
  if (!armed) return () => undefined;
  log.warn({ step: armed }, 'test fault hook armed: this process will SIGKILL itself at that step');
  return (step) => {
    if (step !== armed) return;
    // Synchronous write: the test reads this line to know where the process died.
    process.stderr.write(`${JSON.stringify({ msg: 'fault hook: SIGKILL', step })}\n`);
    process.kill(process.pid, 'SIGKILL');
  };
}
