// Owns the rendering of deploy/prometheus/local-template.yml: a Prometheus config for processes on loopback,
// for tests and laptops. Values are written as JSON (valid YAML), so no target or path needs YAML quoting.
import fs from 'node:fs';
import path from 'node:path';

export const PROMETHEUS_DIR = __dirname;
export const LOCAL_TEMPLATE = path.join(PROMETHEUS_DIR, 'local-template.yml');
export const ALERTS_FILE = path.join(PROMETHEUS_DIR, 'alerts.yml');

export interface LocalTargets {
  /** host:port of each liveness API process, e.g. ['127.0.0.1:8080'] */
  livenessApi: string[];
  /** host:port of each emotion API process */
  emotionApi: string[];
  /** host:port of each liveness worker's metrics server (WORKER_METRICS_PORT) */
  livenessWorkers: string[];
  /** host:port of each emotion worker's metrics server */
  emotionWorkers: string[];
  /** Scrape and rule evaluation interval; default 15s (tests want 1s). */
  scrapeInterval?: string;
  /** Rule file to load; default deploy/prometheus/alerts.yml. */
  alertsFile?: string;
}

const TARGET = /^[A-Za-z0-9.\-[\]:]+:\d{1,5}$/;
const DURATION = /^(\d+(ms|s|m|h|d|w|y))+$/;

/** Returns the config text; throws on a malformed target or interval, or a placeholder it does not know. */
export function renderLocalPrometheusConfig(t: LocalTargets, template = fs.readFileSync(LOCAL_TEMPLATE, 'utf8')): string {
  const lists = {
    LIVENESS_API_TARGETS: t.livenessApi,
    EMOTION_API_TARGETS: t.emotionApi,
    LIVENESS_WORKER_TARGETS: t.livenessWorkers,
    EMOTION_WORKER_TARGETS: t.emotionWorkers,
  };
  for (const [name, targets] of Object.entries(lists)) {
    for (const target of targets) {
      if (!TARGET.test(target)) throw new Error(`${name}: "${target}" is not host:port`);
    }
  }
  const scrapeInterval = t.scrapeInterval ?? '15s';
  if (!DURATION.test(scrapeInterval)) throw new Error(`scrapeInterval "${scrapeInterval}" is not a Prometheus duration`);
  const values: Record<string, string> = {
    SCRAPE_INTERVAL: scrapeInterval,
    ALERTS_FILE: JSON.stringify(path.resolve(t.alertsFile ?? ALERTS_FILE)),
    ...Object.fromEntries(Object.entries(lists).map(([k, v]) => [k, JSON.stringify(v)])),
  };
  // Placeholders only appear outside comments in the template's body; comments document them and stay as they are.
  return template
    .split('\n')
    .map((line) => {
      const hash = line.indexOf('#');
      const code = hash === -1 ? line : line.slice(0, hash);
      const comment = hash === -1 ? '' : line.slice(hash);
      return (
        code.replace(/\$\{([A-Z_]+)\}/g, (m, name: string) => {
          const v = values[name];
          if (v === undefined) throw new Error(`local-template.yml: unknown placeholder ${m}`);
          return v;
        }) + comment
      );
    })
    .join('\n');
}

/** Writes the rendered config to `file` and returns its path (Prometheus resolves nothing relative to it). */
export function writeLocalPrometheusConfig(file: string, t: LocalTargets): string {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, renderLocalPrometheusConfig(t));
  return file;
}
