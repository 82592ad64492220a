// Owns configuration: one zod schema, parsed once at start-up. No other module of api/, workers/ or shared/
// reads process.env (test/unit/shared/no-env-reads.test.ts holds that); dev/ (the local engines, the `npm start`
// supervisor, the harness) reads PATH and the engine cache and passes the environment on to the processes it starts.
import os from 'node:os';
import net from 'node:net';
import { z } from 'zod';
import { defaultModelsDir, varDir } from './paths';
import { clusterTarget, isClusterUrl } from './redis';

const bool = z.enum(['true', 'false', '1', '0', 'yes', 'no', 'on', 'off']).transform((v) => ['true', '1', 'yes', 'on'].includes(v));
const port = z.coerce.number().int().min(0).max(65535);
const positiveInt = z.coerce.number().int().positive();

/** A REDIS_URL's problems: a URL (redis://, rediss://), or a well-formed redis-cluster:// list of seed nodes. */
function redisUrlProblems(v: string, ctx: z.RefinementCtx): void {
  try {
    if (clusterTarget(v)) return;
  } catch (err) {
    ctx.addIssue({ code: 'custom', message: `redis-cluster:// URL: ${(err as Error).message}` });
    return;
  }
  if (!URL.canParse(v)) ctx.addIssue({ code: 'custom', message: 'must be a redis:// URL or a redis-cluster:// list of nodes' });
}

/** Words that mark an example value copied from documentation rather than a generated secret. */
const PLACEHOLDER_SECRET = /change[-_ ]?me|replace[-_ ]?me|example|placeholder|your[-_ ]?secret|x{8,}/i;

/** Express's names for address ranges, usable in TRUST_PROXY lists. */
const NAMED_RANGES = new Set(['loopback', 'linklocal', 'uniquelocal']);

/** One TRUST_PROXY list entry: an address, a CIDR block, or one of Express's named ranges. */
function isProxyEntry(entry: string): boolean {
  if (NAMED_RANGES.has(entry)) return true;
  const [address, bits, ...rest] = entry.split('/');
  const family = net.isIP(address ?? '');
  if (family === 0 || rest.length > 0) return false;
  if (bits === undefined) return true;
  if (!/^\d{1,3}$/.test(bits)) return false;
  return Number(bits) <= (family === 4 ? 32 : 128);
}

/**
 * Which peers may set X-Forwarded-For (so the client address is right behind a load balancer):
 * `loopback` (default), a hop count (`1` = the one proxy in front), or a list of addresses/CIDRs/named
 * ranges. The value is what Express's `trust proxy` takes. Never "every private range": a neighbour
 * on the same network could then claim any client address.
 */
const trustProxy = z
  .string()
  .trim()
  .default('loopback')
  .refine(
    (v) =>
      /^\d{1,2}$/.test(v) ||
      v
        .split(',')
        .map((e) => e.trim())
        .every(isProxyEntry),
    'must be "loopback", a hop count (0-99), or a comma-separated list of addresses, CIDR blocks or loopback/linklocal/uniquelocal',
  )
  .transform((v): number | string[] => (/^\d{1,2}$/.test(v) ? Number(v) : v.split(',').map((e) => e.trim())));

export const configSchema = z
  .object({
    NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
    LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),

    /** Address the front-ends listen on: loopback unless told otherwise (containers set 0.0.0.0). */
    HOST: z.string().default('127.0.0.1'),
    TRUST_PROXY: trustProxy,
    /** Serve a front-end's /metrics on this port (on HOST) instead of the customer port; unset: the customer port. */
    METRICS_PORT: port.optional(),
    LIVENESS_PORT: port.default(8080),
    EMOTION_PORT: port.default(8081),
    /** Where customers reach the emotion API (the console's examples); unset: the console's host on EMOTION_PORT. */
    EMOTION_PUBLIC_BASE_URL: z.string().url().optional(),
    /** Port of a worker's /metrics and /health endpoints; 0 picks a free one, -1 disables. */
    WORKER_METRICS_PORT: z.coerce.number().int().min(-1).max(65535).default(0),

    /**
     * Unset: `npm start` runs a private redis-server. Production: Redis 7 with maxmemory-policy noeviction, at a
     * redis:// URL, or a Redis Cluster at redis-cluster://[[user]:password@]host:port[,host:port...] (its seed nodes).
     */
    REDIS_URL: z.string().superRefine(redisUrlProblems).optional(),
    /** Unset: `npm start` runs a private FerretDB (SQLite) under var/. Production: MongoDB 7. */
    MONGODB_URI: z
      .string()
      .regex(/^mongodb(\+srv)?:\/\//, 'must be a mongodb:// URI')
      .optional(),
    /**
     * The embedded document store `npm start` runs when MONGODB_URI is unset: FerretDB on SQLite under var/
     * ('sqlite'), or FerretDB on the PostgreSQL database at this postgres:// URL (bench:field compares the two).
     */
    LOCAL_DOCSTORE: z
      .string()
      .regex(/^(sqlite|postgres(ql)?:\/\/.+)$/, 'must be "sqlite" or a postgres:// URL')
      .default('sqlite'),
    /** BullMQ and result-bus key prefix; the braces are a Redis Cluster hash tag. */
    QUEUE_PREFIX: z.string().min(1).default('{lc}'),
    VAR_DIR: z.string().default(varDir),

    /** Default: one per CPU core, at least 2, so one crashed worker never leaves the queue without a worker. */
    LIVENESS_WORKERS: z.coerce.number().int().min(0).max(64).default(Math.max(2, os.availableParallelism())),
    EMOTION_WORKERS: z.coerce.number().int().min(0).max(64).default(1),
    /** How long the liveness API waits for a worker's answer before 503 (the issue's default: 10 s). */
    LIVENESS_BUDGET_MS: positiveInt.default(10_000),
    /** The emotion spec's processing time-out is 5 s. */
    EMOTION_BUDGET_MS: positiveInt.default(5_000),
    /** On SIGTERM a front-end answers /readyz 503 for this long before it stops accepting (for load balancers without a preStop hook). */
    SHUTDOWN_DELAY_MS: z.coerce.number().int().min(0).max(60_000).default(0),
    /**
     * Admission is by time (a job is shed only when backlog x measured service time / workers would not fit
     * the request's remaining budget); this count is only a ceiling on top: 10 s budget / ~20 ms for the
     * fastest liveness job = the most one worker could ever serve in time. Also the only bound before the
     * first job's service time has been measured.
     */
    MAX_BACKLOG_PER_WORKER: positiveInt.default(500),
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

    /** Fair-use throttle per account (all its keys): a token bucket (burst, refill per second). */
    THROTTLE_BURST: positiveInt.default(60),
    THROTTLE_RATE_PER_SEC: z.coerce.number().positive().default(20),
    /**
     * Liveness worker time one fair-use token pays for: a call takes one token, and a job that held a worker longer
     * owes one more per started 100 ms (a selfie takes 20–40 ms; a 40 MP image without a face 100–220 ms).
     */
    THROTTLE_WORK_MS_PER_TOKEN: positiveInt.default(100),
    /** Declared body bytes one liveness fair-use token pays for, taken before the body is read (a 10 MB body: 11 tokens). */
    THROTTLE_BYTES_PER_TOKEN: positiveInt.default(1024 * 1024),
    /** Milliseconds of the API's own parse work one liveness fair-use token pays for, charged after the parse (a debt). */
    THROTTLE_PARSE_MS_PER_TOKEN: positiveInt.default(5),
    /**
     * Emotion fair use per account, in seconds of audio: only an abuse ceiling (the workers are shared by fair
     * queueing, and a lone customer gets all of them; docs/emotion-api.md). The bucket holds 10 h of audio, ten
     * times a batch of 60 one-minute recordings, and refills 10 s of audio per second (36,000 s an hour, the whole
     * bucket); a call takes 1 s before the work and the rest of its decoded duration after it.
     */
    EMOTION_FAIR_USE_BURST_SECONDS: positiveInt.default(36_000),
    EMOTION_FAIR_USE_SECONDS_PER_SEC: z.coerce.number().positive().default(10),
    EMOTION_FAIR_USE_UPFRONT_SECONDS: positiveInt.default(1),
    /**
     * What a refused emotion job (corrupt, out of time: no decoded duration) is charged, in seconds of audio per second
     * of its worker time: the engine analyses 200–400 s of audio per worker second (600 s in ~3 s on a loaded 2-core
     * machine, 30 min within the 5 s budget on an idle one); 100, the low end with margin, so a job that ran out its
     * 5 s budget costs about 500 s, near the whole burst.
     */
    EMOTION_FAIR_USE_SECONDS_PER_WORKER_SECOND: positiveInt.default(100),

    /**
     * Request body bytes in flight per account (all its keys and tokens, and its console try-its) and in total per API
     * process, counted before a body is read (api/http/upload-gate.ts, docs/reliability.md "Upload room and fair
     * use"). Per account: at least one largest body (10 MB) and at most a quarter of the total.
     */
    UPLOAD_BYTES_PER_CALLER: positiveInt.min(11 * 1024 * 1024).default(12 * 1024 * 1024),
    UPLOAD_BYTES_TOTAL: positiveInt.min(44 * 1024 * 1024).default(48 * 1024 * 1024),
    /** A body must arrive at this many bytes a second once UPLOAD_GRACE_MS have passed, or it is cut (400). */
    UPLOAD_FLOOR_BYTES_PER_SEC: positiveInt.default(64 * 1024),
    UPLOAD_GRACE_MS: positiveInt.default(2_000),

    /** Failed authentications allowed per client address (a token bucket): brute force against keys and tokens. */
    AUTH_FAILURE_BURST: positiveInt.default(30),
    AUTH_FAILURE_RATE_PER_SEC: z.coerce.number().positive().default(0.5),
    /** Failed authentications per presented credential prefix, all addresses together (a distributed guess at one key). */
    AUTH_PREFIX_FAILURE_BURST: positiveInt.default(30),
    AUTH_PREFIX_FAILURE_RATE_PER_SEC: z.coerce.number().positive().default(0.5),

    /** Accounts that never confirmed their e-mail are deleted after this many days (a sweep; see docs/security.md). */
    PENDING_ACCOUNT_DAYS: positiveInt.max(365).default(7),

    /** Secret for console sessions, CSRF and registration tokens (32+ chars). Local default: generated into var/. */
    APP_SECRET: z
      .string()
      .min(32)
      .refine((v) => !PLACEHOLDER_SECRET.test(v), 'is a placeholder from an example: generate one with `openssl rand -base64 48`')
      .optional(),
    /**
     * The APP_SECRET before the last rotation, kept for one sign-in per account: TOTP secrets sealed with it still
     * open (and are sealed again with APP_SECRET when that account next signs in). Sessions and links are not kept.
     */
    APP_SECRET_PREVIOUS: z.string().min(32).optional(),
    /** https:// in production (start-up refuses http://): links in e-mails and the console's origin check. */
    PUBLIC_BASE_URL: z.string().url().optional(),
    /**
     * Shared secret the marketplace signs entitlement events with (POST /marketplace/entitlements; docs/billing.md).
     * Required in production; elsewhere a key derived from APP_SECRET, so local tools agree without setup.
     */
    MARKETPLACE_SECRET: z
      .string()
      .min(32)
      .refine((v) => !PLACEHOLDER_SECRET.test(v), 'is a placeholder from an example: generate one with `openssl rand -base64 48`')
      .optional(),
    SMTP_URL: z.string().optional(),
    MAIL_FROM: z.string().default('Liveness Console <no-reply@localhost>'),
    /** Secure, __Host- console cookie. Production refuses false (the console is served over HTTPS there). */
    SECURE_COOKIES: bool.default(false),
    /** Folder of the local mail sink's mailbox (`npm start` sets it when SMTP_URL is unset); enables /console/dev/mailbox outside production. */
    MAILBOX_DIR: z.string().optional(),

    /** A usage-outbox entry read by a consumer that has not acknowledged it for this long is claimed by another drainer. */
    OUTBOX_CLAIM_IDLE_MS: positiveInt.default(10_000),
    /** Test-only fault hook: a worker SIGKILLs itself the first time it reaches this step. Refused in production. */
    FAULT_KILL_AT: z.enum(['after_engine', 'after_commit', 'after_publish', 'in_drainer']).optional(),
    /** Where the console tells customers to write for help (recovery when both password and phone are lost). */
    SUPPORT_EMAIL: z.string().email().default('support@localhost'),
    /**
     * What one console request (a page, a form, the try-it routes up to their job) may spend from its arrival at the
     * console's router: every database call it makes gets the time left, so a hung store answers the 503 page in time.
     * The try-it jobs themselves have their API's budget (LIVENESS_BUDGET_MS, EMOTION_BUDGET_MS) from admission.
     */
    CONSOLE_BUDGET_MS: positiveInt.default(10_000),
    /** How often the console's scheduler looks for accounts past 80 % / 100 % of their monthly limit. */
    USAGE_ALERT_INTERVAL_MS: positiveInt.default(5 * 60_000),
  })
  .superRefine((cfg, ctx) => {
    if (cfg.NODE_ENV === 'production' && cfg.FAULT_KILL_AT !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['FAULT_KILL_AT'], message: 'a test-only fault hook; never set in production' });
    }
    // Production serves customers over HTTPS only: a session cookie without Secure, or e-mail links and an
    // origin check on http://, would hand sessions and one-time links to anyone on the path.
    if (cfg.NODE_ENV === 'production' && !cfg.SECURE_COOKIES) {
      ctx.addIssue({ code: 'custom', path: ['SECURE_COOKIES'], message: 'must be true in production (console cookies only over HTTPS)' });
    }
    if (cfg.UPLOAD_BYTES_PER_CALLER * 4 > cfg.UPLOAD_BYTES_TOTAL) {
      ctx.addIssue({
        code: 'custom',
        path: ['UPLOAD_BYTES_PER_CALLER'],
        message: 'must be at most a quarter of UPLOAD_BYTES_TOTAL (one account never holds more)',
      });
    }
    // On a cluster every key's slot comes from the prefix's hash tag (shared/redis-partitions.ts): it must be one.
    if (cfg.REDIS_URL && isClusterUrl(cfg.REDIS_URL) && !/^\{[^{}]+\}$/.test(cfg.QUEUE_PREFIX)) {
      ctx.addIssue({ code: 'custom', path: ['QUEUE_PREFIX'], message: 'must be one hash tag such as {lc} when REDIS_URL is a redis-cluster:// URL' });
    }
    if (cfg.NODE_ENV === 'production' && cfg.PUBLIC_BASE_URL && !cfg.PUBLIC_BASE_URL.startsWith('https://')) {
      ctx.addIssue({ code: 'custom', path: ['PUBLIC_BASE_URL'], message: 'must be an https:// address in production' });
    }
  });

export type Config = z.infer<typeof configSchema>;

/**
 * The development vs production switch (NODE_ENV): problems that make a configuration unfit to serve
 * customers. Production refuses the local mail sink's mailbox page, e-mail links built from the request's
 * Host header (the console needs PUBLIC_BASE_URL) and a derived marketplace secret (it must be the one the
 * marketplace holds). Empty when the configuration is fine. (Insecure cookies and an http:// base URL are
 * refused by the schema itself, for every process.)
 */
export function consoleConfigProblems(cfg: Config): string[] {
  if (cfg.NODE_ENV !== 'production') return [];
  const problems: string[] = [];
  if (cfg.APP_SECRET && new Set(cfg.APP_SECRET).size < 16) {
    problems.push('APP_SECRET: too repetitive for production (fewer than 16 different characters); generate one with `openssl rand -base64 48`');
  }
  if (!cfg.PUBLIC_BASE_URL) problems.push('PUBLIC_BASE_URL: required in production (links in e-mails are never built from the request Host)');
  if (!cfg.MARKETPLACE_SECRET) problems.push('MARKETPLACE_SECRET: required in production (the secret the marketplace signs entitlement events with)');
  if (cfg.MAILBOX_DIR) problems.push('MAILBOX_DIR: the development mailbox is refused in production (set SMTP_URL to a real relay)');
  return problems;
}

/**
 * onnxruntime 1.30 on Linux collects telemetry unless ORT_DISABLE_TELEMETRY is set, and reads the variable when it
 * opens its first session: a device id and an event store under $HOME/.cache/Microsoft, `.ses` and
 * `mat-debug-<pid>.log` in the temporary folder (one `.ses` for every worker of a host), and HTTPS uploads. Every
 * session is opened through workers/runtime/onnx-session.ts, which calls this first.
 */
export function disableOnnxRuntimeTelemetry(): void {
  process.env.ORT_DISABLE_TELEMETRY = '1';
}

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
