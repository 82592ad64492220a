// Owns how the browser tests start Debian's chromium (never a downloaded browser), where they keep their
// screenshots, and the checks every console page passes at desktop and phone width.
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { chromium, type Browser, type Page } from 'playwright-core';
import { projectRoot } from '../../shared/paths';

export const SCREENSHOTS_DIR = path.join(projectRoot, 'test-artifacts', 'console');
export const DESKTOP = { width: 1280, height: 860 };
export const PHONE = { width: 390, height: 844 };

const AXE_SOURCE = fs.readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

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

/** axe-core's serious and critical findings on the page as it is now, one line each. */
async function axeSerious(page: Page): Promise<string[]> {
  // Evaluated through the DevTools protocol, which the page's CSP (no inline script) does not apply to.
  if (!(await page.evaluate("'axe' in window"))) await page.evaluate(AXE_SOURCE);
  const found = await page.evaluate<Array<{ id: string; impact: string | null; nodes: string[] }>>(
    "axe.run({ resultTypes: ['violations'] }).then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n) => n.target.join(' ')) })))",
  );
  return found.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id} (${v.impact}): ${v.nodes.join(', ')}`);
}

/**
 * The cards (`.card`, `.auth-card`) whose content is wider than they are at the page's current width (text
 * running past the card's edge: scrollWidth > clientWidth), each named by its heading.
 */
export async function cardsOverflowing(page: Page): Promise<string[]> {
  return await page.evaluate<string[]>(
    "Array.from(document.querySelectorAll('.card, .auth-card')).filter((c) => c.scrollWidth > c.clientWidth).map((c) => `${(c.querySelector('h1, h2') || c).textContent.trim().slice(0, 60)}: ${c.scrollWidth} > ${c.clientWidth} px`)",
  );
}

/**
 * The page as it is now, at 1280 and 390 px: a full-page screenshot of each under test-artifacts/console/
 * (`<file>-1280.png`, `<file>-390.png`), no sideways scroll, no serious or critical axe-core finding, and on
 * the signed-in pages a top navigation on one row at desktop width. Leaves the page at desktop width.
 */
export async function checkBothWidths(page: Page, file: string): Promise<void> {
  for (const viewport of [DESKTOP, PHONE]) {
    const at = `${file} at ${viewport.width} px`;
    await page.setViewportSize(viewport);
    await page.screenshot({ path: path.join(SCREENSHOTS_DIR, `${file}-${viewport.width}.png`), fullPage: true });
    const widths = await page.evaluate<{ doc: number; view: number }>('({ doc: document.documentElement.scrollWidth, view: window.innerWidth })');
    expect(widths.doc, `${at} scrolls sideways`).to.be.at.most(widths.view);
    expect(await axeSerious(page), at).to.deep.equal([]);
    if (viewport === DESKTOP) {
      const rows = await page.evaluate<number>("new Set(Array.from(document.querySelectorAll('nav.nav a')).map((a) => a.getBoundingClientRect().top)).size");
      expect(rows, `${at}: rows of the top navigation`).to.be.at.most(1);
    }
  }
  await page.setViewportSize(DESKTOP);
}
