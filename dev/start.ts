// `npm start`: the local supervisor. Starts the embedded engines when REDIS_URL / MONGODB_URI are unset,
// then the liveness API, the emotion API and their workers as separate OS processes (counts from config),
// restarts a process that dies (at once after a healthy run, with a growing back-off only in a crash loop),
// and on SIGINT/SIGTERM stops front-ends, then workers, then engines.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { consoleConfigProblems, loadConfig } from '../shared/config';
import { createLogger } from '../shared/logger';
import { entryPoint } from '../shared/paths';
import { describeDocstore, startLocalDocstore, startRedis, type Engine } from './engines/local-engines';
import { clearLocalState, ensureLocalSecret, writeLocalState } from '../shared/local-state';
import { startLocalMail, type LocalMail } from './engines/local-mail';
import { HEALTHY_RUN_MS, restartDelayMs } from './restart-policy';

const config = loadConfig();
const log = createLogger('supervisor', config.LOG_LEVEL);

interface Managed {
  name: string;
  script: string;
  env: Record<string, string>;
  proc: ChildProcess | null;
  /** Consecutive crashes without a healthy run in between: the back-off exponent. */
  restarts: number;
  startedAt: number;
  tier: 'front' | 'worker';
}

let stopping = false;
const engines: Engine[] = [];
const children: Managed[] = [];
let mailSink: LocalMail | null = null;

function launch(m: Managed): void {
  // Own process group: a terminal's Ctrl-C reaches only the supervisor, which stops the tiers in order.
  // The IPC channel tells a child when the supervisor is gone, even after a SIGKILL.
  const proc = spawn(process.execPath, [...process.execArgv, m.script], {
    env: { ...process.env, ...m.env },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    detached: true,
  });
  m.proc = proc;
  m.startedAt = Date.now();
  proc.on('exit', (code, signal) => {
    m.proc = null;
    if (stopping) return;
    const ranMs = Date.now() - m.startedAt;
    if (ranMs >= HEALTHY_RUN_MS) {
      if (m.restarts > 0) log.info({ child: m.name, ranMs, crashesBefore: m.restarts }, 'child ran healthily; back-off reset');
      m.restarts = 0;
    } else {
      m.restarts++;
    }
    const delay = restartDelayMs(m.restarts);
    if (m.restarts > 1)
      log.error(
        { child: m.name, code, signal, ranMs, crashLoop: m.restarts, restartInMs: delay },
        'process exited again soon after start: crash loop, backing off',
      );
    else log.error({ child: m.name, code, signal, ranMs, restartInMs: delay }, 'process exited; restarting');
    setTimeout(() => !stopping && launch(m), delay);
  });
}

function stopTier(tier: Managed['tier'], graceMs: number): Promise<void> {
  const running = children.filter((c) => c.tier === tier && c.proc);
  return Promise.all(
    running.map(
      (c) =>
        new Promise<void>((resolve) => {
          const proc = c.proc!;
          const timer = setTimeout(() => proc.kill('SIGKILL'), graceMs);
          proc.once('exit', () => {
            clearTimeout(timer);
            resolve();
          });
          proc.kill('SIGTERM');
        }),
    ),
  ).then(() => undefined);
}

async function shutdown(signal: string, exitCode = 0): Promise<void> {
  if (stopping) return;
  stopping = true;
  log.info({ signal }, 'stopping: front-ends drain, workers finish their job, engines go last');
  await stopTier('front', Math.max(config.LIVENESS_BUDGET_MS, config.EMOTION_BUDGET_MS) + 3000);
  await stopTier('worker', 30_000);
  for (const e of engines.reverse()) await e.stop();
  await mailSink?.stop();
  clearLocalState(config.VAR_DIR);
  log.info('stopped');
  process.exit(exitCode);
}

async function main(): Promise<void> {
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));

  // NODE_ENV=production is the switch away from the development conveniences: no local mail sink (and so no
  // mailbox page), no links from the Host header. Refuse here rather than let the console restart in a loop.
  if (config.NODE_ENV === 'production') {
    const problems = consoleConfigProblems(config);
    if (!config.SMTP_URL) problems.push('SMTP_URL: required in production (the local mail sink is for development)');
    if (problems.length > 0) {
      process.stderr.write(`Invalid environment variables:\n  ${problems.join('\n  ')}\n`);
      process.exit(78);
    }
  }
  let redisUrl = config.REDIS_URL;
  let mongoUri = config.MONGODB_URI;
  if (!redisUrl) {
    const redis = await startRedis({ dir: path.join(config.VAR_DIR, 'redis') });
    engines.push(redis);
    redisUrl = redis.url;
    log.info({ url: redis.url }, 'embedded redis-server started (maxmemory-policy noeviction)');
  }
  if (!mongoUri) {
    const mongo = await startLocalDocstore(config.LOCAL_DOCSTORE, path.join(config.VAR_DIR, 'ferretdb'));
    engines.push(mongo);
    mongoUri = `${mongo.url}liveness`;
    log.info({ url: mongo.url }, `embedded document store started: ${describeDocstore(config.LOCAL_DOCSTORE)}`);
  }
  let smtpUrl = config.SMTP_URL;
  if (!smtpUrl) {
    // The embedded mail sink: verification and welcome mail land in var/mailbox (admin mail list, /console/dev/mailbox).
    mailSink = await startLocalMail({ dir: path.join(config.VAR_DIR, 'mailbox') });
    smtpUrl = mailSink.url;
    log.info({ url: mailSink.url, dir: mailSink.dir }, 'local mail sink started (nothing is relayed)');
  }
  const env: Record<string, string> = {
    REDIS_URL: redisUrl,
    MONGODB_URI: mongoUri,
    SMTP_URL: smtpUrl,
    ...(mailSink ? { MAILBOX_DIR: mailSink.dir } : {}),
    APP_SECRET: config.APP_SECRET ?? ensureLocalSecret(config.VAR_DIR),
  };
  const add = (name: string, script: string, tier: Managed['tier'], extra: Record<string, string> = {}) =>
    children.push({ name, script: entryPoint(script), env: { ...env, ...extra }, proc: null, restarts: 0, startedAt: 0, tier });
  // METRICS_PORT is per process: the liveness API takes it, the emotion API the next one (0: each a free port).
  const metricsPorts =
    config.METRICS_PORT === undefined
      ? [{}, {}]
      : [{ METRICS_PORT: String(config.METRICS_PORT) }, { METRICS_PORT: String(config.METRICS_PORT === 0 ? 0 : config.METRICS_PORT + 1) }];
  add('liveness-api', 'api/liveness/main', 'front', metricsPorts[0]);
  add('emotion-api', 'api/emotion/main', 'front', metricsPorts[1]);
  for (let i = 1; i <= config.LIVENESS_WORKERS; i++) add(`liveness-worker-${i}`, 'workers/liveness/main', 'worker');
  for (let i = 1; i <= config.EMOTION_WORKERS; i++) add(`emotion-worker-${i}`, 'workers/emotion/main', 'worker');
  for (const c of children) launch(c);
  writeLocalState(config.VAR_DIR, {
    redisUrl,
    mongoUri,
    livenessPort: config.LIVENESS_PORT,
    emotionPort: config.EMOTION_PORT,
    supervisorPid: process.pid,
    ...(mailSink ? { smtpUrl: mailSink.url, mailDir: mailSink.dir } : {}),
  });
  log.info(
    {
      host: config.HOST,
      mode: config.NODE_ENV,
      liveness: `http://127.0.0.1:${config.LIVENESS_PORT}/v1/health`,
      emotion: `http://127.0.0.1:${config.EMOTION_PORT}${'/feelings/v3/analysis'}`,
      console: `http://127.0.0.1:${config.LIVENESS_PORT}/console/dashboard`,
      livenessWorkers: config.LIVENESS_WORKERS,
      emotionWorkers: config.EMOTION_WORKERS,
    },
    'supervisor running; Ctrl-C stops everything',
  );
}

main().catch((err) => {
  log.fatal({ err }, 'supervisor failed to start');
  void shutdown('start-failure', 1);
});
