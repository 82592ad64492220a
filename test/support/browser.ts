// Owns how the browser tests start Debian's chromium (never a downloaded browser) and where they keep their
// screenshots.
import path from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { projectRoot } from '../../shared/paths';

export const SCREENSHOTS_DIR = path.join(projectRoot, 'test-artifacts', 'console');

const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

/** Headless /usr/bin/chromium with the project's flags, plus `extraArgs` (fake camera and microphone, …). */
export function launchChromium(extraArgs: string[] = []): Promise<Browser> {
  return chromium.launch({ executablePath: '/usr/bin/chromium', args: [...CHROMIUM_ARGS, ...extraArgs] });
}
