// Owns configuration: one zod schema, parsed once at start-up. No other module reads process.env.
import path from 'node:path';
import { z } from 'zod';
import { defaultModelsDir, varDir } from './paths';

const bool = z
  .enum(['true', 'false', '1', '0', 'yes', 'no', 'on', 'off'])
  .transform((v) => ['true', '1', 'yes', 'on'].includes(v));
const port = z.coerce.number().int().min(0).max(65535);
const positiveInt = z.coerce.number().int().positive();

export const configSchema = z.object({
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),

  HOST: z.string().default('0.0.0.0'),
  LIVENESS_PORT: port.default(8080),
  EMOTION_PORT: port.default(8081),
  /** Port of a worker's /metrics and /health endpoints; 0 picks a free one, -1 disables. */
  WORKER_METRICS_PORT: z.coerce.number().int().min(-1).max(65535).default(0),

  /** Unset: `npm start` runs a private redis-server. Production: Redis 7 with maxmemory-policy noeviction. */
  REDIS_URL: z.string().url().optional(),
  /** Unset: `npm start` runs a private FerretDB (SQLite) under var/. Production: MongoDB 7. */
  MONGODB_URI: z.string().regex(/^mongodb(\+srv)?:\/\//, 'must be a mongodb:// URI').optional(),
  /** BullMQ and result-bus key prefix; the braces are a Redis Cluster hash tag. */
  QUEUE_PREFIX: z.string().min(1).default('{lc}'),
  VAR_DIR: z.string().default(varDir),

  LIVENESS_WORKERS: z.coerce.number().int().min(0).max(64).default(1),
  EMOTION_WORKERS: z.coerce.number().int().min(0).max(64).default(1),
  /** How long the liveness API waits for a worker's answer before 503 (the issue's default: 10 s). */
  LIVENESS_BUDGET_MS: positiveInt.default(10_000),
  /** The emotion spec's processing time-out is 5 s. */
  EMOTION_BUDGET_MS: positiveInt.default(5_000),
  /** On SIGTERM a front-end answers /readyz 503 for this long before it stops accepting (for load balancers without a preStop hook). */
  SHUTDOWN_DELAY_MS: z.coerce.number().int().min(0).max(60_000).default(0),
  /** Reject new jobs with 503 when this many are already waiting per worker process. */
  MAX_BACKLOG_PER_WORKER: positiveInt.default(32),
  /** How many worker processes serve a queue, for backlog shedding; default: the workers connected to the queue. */
  EXPECTED_LIVENESS_WORKERS: positiveInt.optional(),
  EXPECTED_EMOTION_WORKERS: positiveInt.optional(),

  MODELS_DIR: z.string().default(defaultModelsDir),
  ORT_INTRA_OP_THREADS: positiveInt.default(1),
  FAKE_THRESHOLD: z.coerce.number().min(0).max(1).default(0.15),
  /** JSON array of extra spoof models: [{path, inputSize, scale, channelOrder, liveIndex, weight}] */
  EXTRA_SPOOF_MODELS: z.string().optional(),

  /** Threads an emotion worker splits one long file's analysis across; default: one per core. */
  EMOTION_ANALYSIS_THREADS: positiveInt.max(16).optional(),

  FFMPEG_PATH: z.string().default('ffmpeg'),
  FFPROBE_PATH: z.string().default('ffprobe'),

  /** Fair-use throttle per API key: a token bucket (burst, refill per second). */
  THROTTLE_BURST: positiveInt.default(60),
  THROTTLE_RATE_PER_SEC: z.coerce.number().positive().default(20),

  /** Failed authentications allowed per client address (a token bucket): brute force against keys and tokens. */
  AUTH_FAILURE_BURST: positiveInt.default(30),
  AUTH_FAILURE_RATE_PER_SEC: z.coerce.number().positive().default(0.5),

  /** Secret for console sessions, CSRF and registration tokens (32+ chars). Local default: generated into var/. */
  APP_SECRET: z.string().min(32).optional(),
  PUBLIC_BASE_URL: z.string().url().optional(),
  SMTP_URL: z.string().optional(),
  MAIL_FROM: z.string().default('Liveness Console <no-reply@localhost>'),
  SECURE_COOKIES: bool.default(false),
  /** Folder of the local mail sink's mailbox (`npm start` sets it when SMTP_URL is unset); enables /console/dev/mailbox outside production. */
  MAILBOX_DIR: z.string().optional(),
  /** Where the console tells customers to write for help (recovery when both password and phone are lost). */
  SUPPORT_EMAIL: z.string().email().default('support@localhost'),
  /** How often the console's scheduler looks for accounts past 80 % / 100 % of their monthly limit. */
  USAGE_ALERT_INTERVAL_MS: positiveInt.default(5 * 60_000),
});

export type Config = z.infer<typeof configSchema>;

/** Parses the environment; on failure prints every bad key and exits, as a service should at boot. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const result = configSchema.safeParse(env);
  if (result.success) return result.data;
  const lines = result.error.issues.map((i) => `  ${i.path.join('.') || '(root)'}: ${i.message}`);
  process.stderr.write(`Invalid environment variables:\n${lines.join('\n')}\n`);
  process.exit(78); // EX_CONFIG
}

/** Like loadConfig but throws instead of exiting (tests, tools). */
export function parseConfig(env: Record<string, string | undefined>): Config {
  return configSchema.parse(env);
}

export function requireUrl(cfg: Config, key: 'REDIS_URL' | 'MONGODB_URI'): string {
  const value = cfg[key];
  if (!value) {
    process.stderr.write(`Invalid environment variables:\n  ${key}: required for this process (npm start sets it)\n`);
    process.exit(78);
  }
  return value;
}

export const localDataDir = (cfg: Config, ...parts: string[]) => path.join(cfg.VAR_DIR, ...parts);
