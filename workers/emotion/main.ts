// Entry point of an emotion worker process (`node dist/workers/emotion/main.js`); scale by running more.
import { loadConfig } from '../../shared/config';
import { createLogger } from '../../shared/logger';
import { runUntilSignal } from '../../shared/process';
import { startEmotionWorker } from './worker';

const config = loadConfig();
const log = createLogger('emotion-worker', config.LOG_LEVEL);
runUntilSignal(log, () => startEmotionWorker({ config, log }));
