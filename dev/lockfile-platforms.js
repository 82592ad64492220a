#!/usr/bin/env node
// Adds lock entries for optional platform packages the registry here does not serve, so `npm ci` sees a lock
// in sync with package.json; on this platform npm skips them (os/cpu mismatch) without fetching.
const fs = require('fs');
const lock = JSON.parse(fs.readFileSync('package-lock.json', 'utf8'));
const add = {
  'darwin-arm64': { os: ['darwin'], cpu: ['arm64'] },
  'darwin-x64': { os: ['darwin'], cpu: ['x64'] },
  'linux-arm': { os: ['linux'], cpu: ['arm'] },
  'win32-x64': { os: ['win32'], cpu: ['x64'] },
};
for (const [suffix, platform] of Object.entries(add)) {
  const key = `node_modules/@msgpackr-extract/msgpackr-extract-${suffix}`;
  if (!lock.packages[key]) lock.packages[key] = { version: '3.0.7', ...platform, license: 'MIT', optional: true };
}
const sorted = {};
for (const k of Object.keys(lock.packages).sort((a, b) => (a === '' ? -1 : b === '' ? 1 : a.localeCompare(b)))) sorted[k] = lock.packages[k];
lock.packages = sorted;
fs.writeFileSync('package-lock.json', JSON.stringify(lock, null, 2) + '\n');
