// Entry point of a liveness worker process (`node dist/workers/liveness/main.js`); scale by running more.
import { loadConfig } from '../../shared/config';
import { createLogger } from '../../shared/logger';
import { runUntilSignal } from '../../shared/process';
import { startLivenessWorker } from './worker';

const config = loadConfig();
const log = createLogger('liveness-worker', config.LOG_LEVEL);
runUntilSignal(log, () => startLivenessWorker({ config, log }));
