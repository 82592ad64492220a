// Small HTTP helpers for tests: JSON requests against a server on 127.0.0.1. Answers from a port that
// serves a documented API (registered by the test stacks) are checked against its OpenAPI document.
import { assertConforms } from './openapi';

export interface HttpResult<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export async function http<T = any>(port: number, path: string, init: RequestInit & { json?: unknown } = {}): Promise<HttpResult<T>> {
  const headers = new Headers(init.headers);
  let body = init.body;
  if (init.json !== undefined) {
    headers.set('content-type', 'application/json');
    body = JSON.stringify(init.json);
  }
  const res = await fetch(`http://127.0.0.1:${port}${path}`, { ...init, headers, body });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // not JSON: tests assert on text
  }
  assertConforms(port, { method: init.method ?? 'GET', path, status: res.status, headers: res.headers, text });
  return { status: res.status, headers: res.headers, body: parsed as T, text };
}
