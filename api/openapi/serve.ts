// Owns serving an API's reference: the OpenAPI document as JSON and a rendered page under /docs (Redoc's
// standalone bundle from npm, served by us: no CDN). The page gets its own CSP, on /docs only.
import fs from 'node:fs';
import path from 'node:path';
import type { Express, Request, Response } from 'express';
import type { OpenAPIObject } from 'openapi3-ts/oas31';
import { MethodNotAllowedError } from '../../shared/errors';

const DOCS_PATH = '/docs';
const BUNDLE_NAME = 'redoc.standalone.js';
const BUNDLE_PATH = `${DOCS_PATH}/${BUNDLE_NAME}`;

/**
 * Redoc injects its styles as <style> elements and runs its search index in a blob: worker; everything
 * else stays as strict as the API's own policy. Scripts only from this origin.
 */
export const DOCS_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  'worker-src blob:',
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * The bundle: next to this module when the build copied it there (production images carry no
 * devDependencies), else from node_modules (development and tests).
 */
function redocBundlePath(): string | null {
  const copied = path.join(__dirname, BUNDLE_NAME);
  if (fs.existsSync(copied)) return copied;
  try {
    return require.resolve(`redoc/bundles/${BUNDLE_NAME}`);
  } catch {
    return null;
  }
}

function page(title: string, documentPath: string): string {
  const esc = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(title)} reference</title>
</head>
<body>
<redoc spec-url="${esc(documentPath)}" hide-download-button="false"></redoc>
<script src="${BUNDLE_PATH}"></script>
</body>
</html>
`;
}

export interface ApiReference {
  /** Where the JSON document is served, e.g. /v1/openapi.json. */
  documentPath: string;
  document: () => OpenAPIObject;
}

/** Serves the document at `documentPath` and the rendered reference at /docs. */
export function mountApiReference(app: Express, ref: ApiReference): void {
  const json = JSON.stringify(ref.document());
  const title = ref.document().info.title;
  app.get(ref.documentPath, (_req: Request, res: Response) => {
    // Public and the same for everyone: tools in other origins (editors, generators) may fetch it.
    res.setHeader('Access-Control-Allow-Origin', '*');
    res.setHeader('Cache-Control', 'public, max-age=300');
    res.type('application/json').send(json);
  });
  app.all(ref.documentPath, () => {
    throw new MethodNotAllowedError(['GET']);
  });

  const html = page(title, ref.documentPath);
  app.get(DOCS_PATH, (_req, res) => {
    res.setHeader('Content-Security-Policy', DOCS_CSP);
    res.setHeader('Cache-Control', 'no-cache');
    res.type('html').send(html);
  });
  app.get(BUNDLE_PATH, (_req, res) => {
    const bundle = redocBundlePath();
    if (!bundle) {
      res.status(404).type('text/plain').send('The reference renderer is not installed (npm ci, then npm run build).');
      return;
    }
    res.setHeader('Cache-Control', 'public, max-age=86400');
    res.type('application/javascript').sendFile(bundle);
  });
}
