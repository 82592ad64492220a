// Owns the static asset table: content-hashed URLs (cache forever, change name on change).
import crypto from 'node:crypto';
import { CLIENT_JS } from './client';
import { STYLES } from './styles';

const ICON =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><defs><linearGradient id="g" x1="0" y1="0" x2="1" y2="1"><stop offset="0" stop-color="#2f5bea"/><stop offset="1" stop-color="#7b5cff"/></linearGradient></defs><rect width="32" height="32" rx="8" fill="url(#g)"/><circle cx="16" cy="14" r="6" fill="none" stroke="#fff" stroke-width="2.5"/><path d="M8 26c2-4 5-5 8-5s6 1 8 5" fill="none" stroke="#fff" stroke-width="2.5" stroke-linecap="round"/></svg>';

export interface Asset {
  path: string;
  body: string;
  type: string;
}

function asset(name: string, ext: string, body: string, type: string): Asset {
  const hash = crypto.createHash('sha256').update(body).digest('hex').slice(0, 10);
  return { path: `/console/assets/${name}-${hash}.${ext}`, body, type };
}

export const ASSETS = {
  css: asset('app', 'css', STYLES, 'text/css; charset=utf-8'),
  js: asset('app', 'js', CLIENT_JS, 'text/javascript; charset=utf-8'),
  icon: asset('icon', 'svg', ICON, 'image/svg+xml'),
};
