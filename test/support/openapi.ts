// Checks HTTP responses against our OpenAPI documents (ajv, JSON Schema 2020-12): the status must be
// documented for the operation, the body must match its schema, every documented required header must be
// there and valid, and no API header may appear that the response does not document. The test stacks
// register their ports, and the request helpers (http(), stack.analyze/request) check every answer.
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import type { HeaderObject, OpenAPIObject, OperationObject, ReferenceObject, ResponseObject } from 'openapi3-ts/oas31';
import { livenessOpenApi } from '../../api/openapi/liveness-document';
import { emotionOpenApi } from '../../api/openapi/emotion-document';
import { UNLISTED_METHOD_RESPONSE, UNLISTED_PATH_RESPONSE } from '../../api/openapi/common';

export type ContractName = 'liveness' | 'emotion';

const DOCUMENTS: Record<ContractName, () => OpenAPIObject> = { liveness: livenessOpenApi, emotion: emotionOpenApi };

/**
 * Paths on an API port that are not the public API: operator endpoints, the browser console, the
 * rendered reference. Their answers are not checked.
 */
const OUTSIDE_THE_API = [/^\/livez$/, /^\/readyz$/, /^\/metrics$/, /^\/docs(\/|$)/, /^\/console(\/|$)/];

/**
 * Headers that are transport or browser hardening (helmet), the same on every answer and not part of
 * either contract. Any other header must be documented on the response that carries it.
 */
/**
 * OpenAPI's own keywords: in schemas they are annotations (example, discriminator, xml, externalDocs); at
 * the top of the document they only make ajv accept the document as the root its fragments resolve in.
 */
export const OPENAPI_KEYWORDS = [
  'example',
  'discriminator',
  'xml',
  'externalDocs',
  'openapi',
  'info',
  'servers',
  'paths',
  'components',
  'tags',
  'security',
  'webhooks',
  'jsonSchemaDialect',
];

const GENERIC_HEADERS = new Set([
  'date',
  'connection',
  'keep-alive',
  'transfer-encoding',
  'content-length',
  'content-type',
  'cache-control',
  'content-security-policy',
  'cross-origin-opener-policy',
  'cross-origin-resource-policy',
  'origin-agent-cluster',
  'referrer-policy',
  'strict-transport-security',
  'x-content-type-options',
  'x-dns-prefetch-control',
  'x-download-options',
  'x-frame-options',
  'x-permitted-cross-domain-policies',
  'x-xss-protection',
]);

export interface ObservedResponse {
  method: string;
  /** The request path, with or without a query string. */
  path: string;
  status: number;
  headers: Headers;
  text: string;
}

class ContractChecker {
  private readonly ajv = new Ajv2020({ strict: true, allErrors: true });
  private readonly doc: OpenAPIObject;

  constructor(readonly name: ContractName) {
    this.doc = DOCUMENTS[name]();
    addFormats(this.ajv);
    // OpenAPI's own schema keywords: annotations, not assertions.
    this.ajv.addVocabulary(OPENAPI_KEYWORDS);
    this.ajv.addSchema(this.doc, name);
  }

  private resolve<T extends object>(obj: T | ReferenceObject): T {
    if (!('$ref' in obj)) return obj;
    const pointer = obj.$ref
      .replace(/^#\//, '')
      .split('/')
      .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
    let at: unknown = this.doc;
    for (const part of pointer) at = (at as Record<string, unknown>)[part];
    if (!at) throw new Error(`${this.name}: unresolved ${obj.$ref}`);
    return at as T;
  }

  private validate(pointer: string[], value: unknown, what: string): string[] {
    const ref = `${this.name}#/${pointer.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/')}`;
    const check = this.ajv.getSchema(ref);
    if (!check) throw new Error(`${this.name}: no schema at ${ref}`);
    if (check(value)) return [];
    return (check.errors ?? []).map((e) => `${what}${e.instancePath} ${e.message}${e.params ? ` ${JSON.stringify(e.params)}` : ''}`);
  }

  /** The problems of one response against the document; empty when it conforms. */
  problems(r: ObservedResponse): string[] {
    const path = r.path.split('?')[0]!;
    if (OUTSIDE_THE_API.some((re) => re.test(path))) return [];
    const method = r.method.toLowerCase();
    const template = Object.keys(this.doc.paths ?? {}).find((t) => new RegExp(`^${t.replace(/\{[^}]+\}/g, '[^/]+')}$`).test(path));

    let responses: Record<string, ResponseObject | ReferenceObject>;
    let base: string[];
    if (!template) {
      responses = { 404: { $ref: `#/components/responses/${UNLISTED_PATH_RESPONSE}` } };
      base = [];
    } else {
      const item = this.doc.paths![template]! as Record<string, OperationObject>;
      // Express answers HEAD with the GET route, without a body.
      const op = item[method] ?? (method === 'head' ? item.get : undefined);
      if (op) {
        responses = op.responses as Record<string, ResponseObject | ReferenceObject>;
        base = ['paths', template, item[method] ? method : 'get', 'responses'];
      } else {
        responses = { 405: { $ref: `#/components/responses/${UNLISTED_METHOD_RESPONSE}` } };
        base = [];
      }
    }

    const key = [String(r.status), `${String(r.status)[0]}XX`, 'default'].find((k) => k in responses);
    const where = `${this.name}: ${r.method} ${path} → ${r.status}`;
    if (!key) return [`${where}: status not documented (documented: ${Object.keys(responses).join(', ')})`];
    const entry = responses[key]!;
    let pointer = [...base, key];
    if ('$ref' in entry) pointer = entry.$ref.replace(/^#\//, '').split('/');
    const response = this.resolve(entry);
    const out: string[] = [];

    // Body.
    const contentType = (r.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
    const content = response.content ?? {};
    if (Object.keys(content).length === 0) {
      if (r.text.length > 0 && method !== 'head') out.push(`${where}: body not documented (${r.text.slice(0, 80)})`);
    } else if (method !== 'head') {
      const media = Object.keys(content).find((m) => m === contentType || (m.endsWith('/*') && contentType.startsWith(m.slice(0, -1))));
      if (!media) out.push(`${where}: Content-Type ${contentType || '(none)'} not documented (${Object.keys(content).join(', ')})`);
      else if (content[media]!.schema) {
        let body: unknown = r.text;
        if (media.endsWith('json')) {
          try {
            body = JSON.parse(r.text);
          } catch {
            out.push(`${where}: body is not JSON: ${r.text.slice(0, 80)}`);
          }
        }
        out.push(...this.validate([...pointer, 'content', media, 'schema'], body, `${where}: body`));
      }
    }

    // Headers: documented required ones present and valid; nothing else beyond the generic ones.
    const documented = new Map(Object.entries(response.headers ?? {}).map(([n, h]) => [n.toLowerCase(), { name: n, header: this.resolve<HeaderObject>(h) }]));
    for (const [lower, { name, header }] of documented) {
      const value = r.headers.get(lower);
      if (value === null) {
        if (header.required) out.push(`${where}: required header ${name} missing`);
        continue;
      }
      if (!header.schema) continue;
      // Header values are text: a number-typed header is compared as the number it spells.
      const type = 'type' in header.schema ? header.schema.type : undefined;
      const parsed = (type === 'integer' || type === 'number') && /^-?\d+(\.\d+)?$/.test(value) ? Number(value) : value;
      out.push(...this.validate([...pointer, 'headers', name, 'schema'], parsed, `${where}: header ${name}`));
    }
    r.headers.forEach((_v, lower) => {
      if (!GENERIC_HEADERS.has(lower) && !documented.has(lower)) out.push(`${where}: header ${lower} not documented`);
    });
    return out;
  }
}

const checkers = new Map<ContractName, ContractChecker>();

/** The checker of one document (compiled once per process). */
export function contract(name: ContractName): { problems(r: ObservedResponse): string[] } {
  let c = checkers.get(name);
  if (!c) checkers.set(name, (c = new ContractChecker(name)));
  return c;
}

const byPort = new Map<number, ContractName>();

/** Every later answer from `port` is checked against `name`'s document (until unregistered). */
export function registerContractPort(port: number, name: ContractName): void {
  byPort.set(port, name);
}

export function unregisterContractPort(port: number): void {
  byPort.delete(port);
}

/** Throws, naming every difference, when `port` serves a documented API and `r` does not conform. */
export function assertConforms(port: number, r: ObservedResponse): void {
  const name = byPort.get(port);
  if (!name) return;
  const problems = contract(name).problems(r);
  if (problems.length > 0) throw new Error(`The answer differs from the OpenAPI document:\n  ${problems.join('\n  ')}`);
}

/** fetch() against a local port whose answer is checked like http()'s; the body stays readable. */
export async function checkedFetch(port: number, path: string, init: RequestInit = {}): Promise<Response> {
  const res = await fetch(`http://127.0.0.1:${port}${path}`, init);
  const text = await res.clone().text();
  assertConforms(port, { method: init.method ?? 'GET', path, status: res.status, headers: res.headers, text });
  return res;
}

/** A fetch for the typed client (clients/typescript): every answer from a registered port is checked like http()'s. */
export async function contractFetch(input: string | URL | Request, init?: RequestInit): Promise<Response> {
  const request = new Request(input, init);
  const res = await fetch(request);
  const url = new URL(request.url);
  assertConforms(Number(url.port), {
    method: request.method,
    path: `${url.pathname}${url.search}`,
    status: res.status,
    headers: res.headers,
    text: await res.clone().text(),
  });
  return res;
}
