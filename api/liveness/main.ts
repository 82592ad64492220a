// Entry point of a liveness front-end process (`node dist/api/liveness/main.js`).
import { loadConfig } from '../../shared/config';
import { createLogger } from '../../shared/logger';
import { runUntilSignal } from '../../shared/process';
import { startLivenessApi } from './server';

const config = loadConfig();
const log = createLogger('liveness-api', config.LOG_LEVEL);
runUntilSignal(log, () => startLivenessApi({ config, log, console: true }));
