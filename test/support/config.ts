// A validated Config for tests: real engines, isolated queue prefix, ephemeral ports, quiet logs.
import { parseConfig, type Config } from '../../shared/config';
import { createLogger, type Logger } from '../../shared/logger';
import { testMongoUri, testRedisUrl } from './engines';

export function testConfig(prefix: string, overrides: Record<string, string> = {}): Config {
  return parseConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: 'silent',
    HOST: '127.0.0.1',
    LIVENESS_PORT: '0',
    EMOTION_PORT: '0',
    WORKER_METRICS_PORT: '-1',
    REDIS_URL: testRedisUrl(),
    MONGODB_URI: testMongoUri(),
    QUEUE_PREFIX: prefix,
    APP_SECRET: 'test-secret-test-secret-test-secret-0123',
    // Tests send many deliberate failures from 127.0.0.1; the brute-force tests set their own limits.
    AUTH_FAILURE_BURST: '100000',
    // (and share credential prefixes among them)
    AUTH_PREFIX_FAILURE_BURST: '100000',
    ...overrides,
  });
}

export const quietLog: Logger = createLogger('test', process.env.TEST_LOG_LEVEL ?? 'silent');
