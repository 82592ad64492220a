// Owns the daily usage chart: server-rendered SVG (attributes only, no inline styles or script) in two
// shapes — a wide one for desktops and a taller, larger-text one for phones (CSS shows one) — with
// the same numbers as a table (the accessible fallback) and as the CSV export.
import { html, type SafeHtml } from './html';
import { calls, day, int, monthName } from './format';
import { dailySeries } from '../usage';

interface Shape {
  cls: string;
  W: number;
  H: number;
  left: number;
  bottom: number;
  font: number;
  /** Label every n-th day. */
  every: number;
}

const WIDE: Shape = { cls: 'chart chart-wide', W: 720, H: 180, left: 40, bottom: 24, font: 11, every: 5 };
const NARROW: Shape = { cls: 'chart chart-narrow', W: 340, H: 240, left: 38, bottom: 28, font: 13, every: 7 };

function svg(s: Shape, month: string, values: number[], idSuffix: string): SafeHtml {
  const max = Math.max(1, ...values);
  const top = 12;
  const plotH = s.H - top - s.bottom;
  const slot = (s.W - s.left) / values.length;
  const barW = Math.max(2, slot * 0.68);
  const gridValues = [max, Math.round(max / 2)].filter((v, i, a) => v > 0 && a.indexOf(v) === i);
  const total = values.reduce((a, b) => a + b, 0);
  return html`<svg class="${s.cls}" viewBox="0 0 ${s.W} ${s.H}" role="img" aria-labelledby="chart-title-${idSuffix} chart-desc-${idSuffix}" font-size="${s.font}">
  <title id="chart-title-${idSuffix}">Calls per day, ${monthName(month)}</title>
  <desc id="chart-desc-${idSuffix}">${calls(total)} this month; busiest day ${calls(Math.max(...values))}. The table below lists every day.</desc>
  ${gridValues.map((v) => {
    const yv = top + plotH - (v / max) * plotH;
    return html`<line class="grid-line" x1="${s.left}" x2="${s.W}" y1="${yv.toFixed(1)}" y2="${yv.toFixed(1)}"></line><text class="axis" x="${s.left - 6}" y="${(yv + s.font / 3).toFixed(1)}" text-anchor="end">${int(v)}</text>`;
  })}
  <line class="grid-line" x1="${s.left}" x2="${s.W}" y1="${top + plotH}" y2="${top + plotH}"></line>
  ${values.map((v, i) => {
    const h = v === 0 ? 2 : Math.max(3, (v / max) * plotH);
    const x = s.left + i * slot + (slot - barW) / 2;
    const date = `${month}-${String(i + 1).padStart(2, '0')}`;
    return html`<rect class="bar${v === 0 ? ' zero' : ''}" x="${x.toFixed(1)}" y="${(top + plotH - h).toFixed(1)}" width="${barW.toFixed(1)}" height="${h.toFixed(1)}" rx="1.5" data-day="${date}" data-label="${day(date)}" data-calls="${v}"><title>${day(date)}: ${calls(v)}</title></rect>`;
  })}
  ${values.map((_, i) =>
    i === 0 || (i + 1) % s.every === 0
      ? html`<text class="axis" x="${(s.left + i * slot + slot / 2).toFixed(1)}" y="${s.H - 8}" text-anchor="middle">${i + 1}</text>`
      : '',
  )}
</svg>`;
}

export function dailyChart(month: string, daily: Record<string, number>): SafeHtml {
  const series = dailySeries(month, daily);
  const values = series.map((r) => r.calls);
  return html`<figure class="chart-box" data-chart>
  ${svg(WIDE, month, values, 'w')}
  ${svg(NARROW, month, values, 'n')}
  <figcaption class="small muted" id="chart-readout" aria-live="polite">Tap or hover a bar to see its day.</figcaption>
</figure>
<details class="small" id="daily-table-box"><summary>Show calls per day as a table</summary>
  <table id="daily-table" class="compact"><caption class="sr-only">Calls per day, ${monthName(month)}</caption>
    <thead><tr><th scope="col">Date (UTC)</th><th scope="col" class="num">Calls</th></tr></thead>
    <tbody>${series.map((r) => html`<tr><th scope="row"><time datetime="${r.date}">${day(r.date)}</time></th><td class="num">${int(r.calls)}</td></tr>`)}</tbody>
  </table>
</details>`;
}

/** A thin progress bar of used / limit. */
export function meter(used: number, limit: number): SafeHtml {
  const pct = limit > 0 ? Math.min(100, (used / limit) * 100) : 100;
  return html`<div class="meter" role="progressbar" aria-valuemin="0" aria-valuemax="${limit}" aria-valuenow="${Math.min(used, limit)}" aria-label="Credits used">
  <svg viewBox="0 0 100 8" preserveAspectRatio="none" width="100%" height="8" aria-hidden="true"><rect x="0" y="0" width="${pct.toFixed(2)}" height="8" fill="${pct >= 100 ? '#c62f3c' : pct >= 80 ? '#d48806' : '#2f5bea'}"></rect></svg>
</div>`;
}
