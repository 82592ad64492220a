// Entry point of an emotion front-end process (`node dist/api/emotion/main.js`).
import { loadConfig } from '../../shared/config';
import { createLogger } from '../../shared/logger';
import { runUntilSignal } from '../../shared/process';
import { startEmotionApi } from './server';

const config = loadConfig();
const log = createLogger('emotion-api', config.LOG_LEVEL);
runUntilSignal(log, () => startEmotionApi({ config, log }));
