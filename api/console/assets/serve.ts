// Owns where the console's built browser assets live and what they are called: `npm run build:console`
// (build.ts) writes them content-hashed into dist/console-assets/ and their manifest beside the folder (the
// server's index, not an asset); this module reads the manifest once and serves the folder with year-long
// immutable caching (a changed file gets a new name).
import fs from 'node:fs';
import path from 'node:path';
import express, { type RequestHandler } from 'express';
import { projectRoot } from '../../../shared/paths';

/** The build's output folder (the same from source and from dist/). */
export const CONSOLE_ASSETS_DIR = path.join(projectRoot, 'dist', 'console-assets');
/** The URL path the folder is served under. */
export const CONSOLE_ASSETS_URL = '/console/assets';
/** Asset name → built file name; outside the served folder, so only content-hashed names are ever served. */
export const CONSOLE_ASSETS_MANIFEST = path.join(projectRoot, 'dist', 'console-assets.json');

/** The source files the build emits, by the name pages ask for. */
export type AssetName = 'app.js' | 'app.css' | 'icon.svg' | 'try-it.css' | 'try-emotion.js' | 'try-liveness.js';

let manifest: Record<AssetName, string> | null = null;

function load(): Record<AssetName, string> {
  const file = CONSOLE_ASSETS_MANIFEST;
  if (!fs.existsSync(file)) throw new Error(`The console's browser assets are not built (no ${file}): run \`npm run build:console\``);
  return JSON.parse(fs.readFileSync(file, 'utf8')) as Record<AssetName, string>;
}

/** The URL of a built asset, e.g. /console/assets/app-1a2b3c4d5e.js. */
export function assetUrl(name: AssetName): string {
  manifest ??= load();
  return `${CONSOLE_ASSETS_URL}/${manifest[name]}`;
}

/** Serves the built assets (mount at /assets under /console); unknown names fall through to the 404 page. */
export function serveAssets(): RequestHandler {
  manifest ??= load();
  return express.static(CONSOLE_ASSETS_DIR, {
    index: false,
    redirect: false,
    // Set here, not by `maxAge`: static leaves an existing Cache-Control alone, and pages set no-store first.
    cacheControl: false,
    setHeaders: (res) => res.setHeader('Cache-Control', 'public, max-age=31536000, immutable'),
  });
}
