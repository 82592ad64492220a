// Owns what both OpenAPI documents share: the response headers both front-ends set, and the
// conventions the contract tests rely on (NotFound for unlisted paths, MethodNotAllowed for unlisted methods).
import { OpenApiGeneratorV31, type OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import type { HeaderObject, OpenAPIObject, TagObject } from 'openapi3-ts/oas31';
import type { z } from 'zod';

/** The OpenAPI version our documents declare (its schemas are JSON Schema 2020-12). */
const OPENAPI_VERSION = '3.1.0';

/** Response components every document has: the contract tests use them for unlisted paths and methods. */
export const UNLISTED_PATH_RESPONSE = 'NotFound';
export const UNLISTED_METHOD_RESPONSE = 'MethodNotAllowed';

const seconds = { type: 'integer', minimum: 0 } as const;

export const COMMON_HEADERS = {
  'X-Request-Id': {
    description: 'Our id of this request (a UUID we generate, whatever the caller sent): quote it to support.',
    schema: { type: 'string', format: 'uuid' },
    example: '3f1c2a9e-6a55-4c51-9d7e-0b8f7a1d2c3e',
  },
  'X-Client-Request-Id': {
    description: "The caller's own `X-Request-Id` echoed back, when it was 8–64 characters of `[A-Za-z0-9._-]`; logged beside ours, never used as a key.",
    schema: { type: 'string', minLength: 8, maxLength: 64, pattern: '^[A-Za-z0-9._-]+$' },
    example: 'order-4711-try-1',
  },
  'Retry-After': { description: 'Seconds to wait before retrying.', schema: seconds, example: 5 },
  Allow: { description: 'The methods this path accepts.', schema: { type: 'string' }, example: 'POST' },
} satisfies Record<string, HeaderObject>;

/**
 * Response headers by name from `catalog`; a name ending in `?` is optional (set only in some cases),
 * every other one is required on that response.
 */
export function headers(catalog: Record<string, HeaderObject>, names: string[]): Record<string, HeaderObject> {
  // Every answer that carries our X-Request-Id may echo the caller's own one.
  const all = names.includes('X-Request-Id') ? [...names, 'X-Client-Request-Id?'] : names;
  return Object.fromEntries(
    all.map((n) => {
      const optional = n.endsWith('?');
      const name = optional ? n.slice(0, -1) : n;
      const header = catalog[name];
      if (!header) throw new Error(`OpenAPI: no header ${name} in the catalog`);
      return [name, { ...header, required: !optional }];
    }),
  );
}

/** GET of the document itself: public, no credential. */
export function registerDocumentPath(registry: OpenAPIRegistry, path: string, tag: string, catalog: Record<string, HeaderObject>): void {
  registry.registerPath({
    method: 'get',
    path,
    operationId: 'getOpenApi',
    tags: [tag],
    summary: 'This document',
    description: 'The OpenAPI 3.1 description of this API. A rendered reference is at `/docs`.',
    security: [],
    responses: {
      200: {
        description: 'The document.',
        headers: headers(catalog, ['X-Request-Id', 'Access-Control-Allow-Origin']),
        content: { 'application/json': { schema: { type: 'object' } } },
      },
    },
  });
}

/** The document from the registry, with schemas no path names (error bodies of unlisted paths and methods). */
export function generateDocument(
  registry: OpenAPIRegistry,
  unlistedSchemas: z.ZodType[],
  info: { title: string; version: string; description: string },
  tags: TagObject[],
): OpenAPIObject {
  return new OpenApiGeneratorV31([...registry.definitions, ...unlistedSchemas.map((schema) => ({ type: 'schema' as const, schema }))]).generateDocument({
    openapi: OPENAPI_VERSION,
    info,
    servers: [{ url: '/', description: 'This server' }],
    tags,
  });
}
