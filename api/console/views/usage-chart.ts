// Owns the daily usage chart: a server-rendered SVG (attributes only, no inline styles or script).
import { html, type SafeHtml } from './html';
import { int } from './format';

export function dailyChart(month: string, daily: Record<string, number>): SafeHtml {
  const [y, m] = month.split('-').map(Number) as [number, number];
  const days = new Date(Date.UTC(y, m, 0)).getUTCDate();
  const values = Array.from({ length: days }, (_, i) => daily[String(i + 1).padStart(2, '0')] ?? 0);
  const max = Math.max(1, ...values);
  const W = 720;
  const H = 170;
  const top = 10;
  const bottom = 22;
  const left = 34;
  const plotH = H - top - bottom;
  const slot = (W - left) / days;
  const barW = Math.max(2, slot * 0.68);
  const gridValues = [max, Math.round(max / 2)].filter((v, i, a) => v > 0 && a.indexOf(v) === i);
  const total = values.reduce((a, b) => a + b, 0);
  return html`<svg class="chart" viewBox="0 0 ${W} ${H}" role="img" aria-labelledby="chart-title chart-desc" preserveAspectRatio="none">
  <title id="chart-title">Calls per day</title>
  <desc id="chart-desc">${int(total)} calls this month; busiest day ${int(Math.max(...values))} calls.</desc>
  ${gridValues.map((v) => {
    const yv = top + plotH - (v / max) * plotH;
    return html`<line class="grid-line" x1="${left}" x2="${W}" y1="${yv.toFixed(1)}" y2="${yv.toFixed(1)}"></line><text class="axis" x="${left - 6}" y="${(yv + 3).toFixed(1)}" text-anchor="end">${int(v)}</text>`;
  })}
  <line class="grid-line" x1="${left}" x2="${W}" y1="${top + plotH}" y2="${top + plotH}"></line>
  ${values.map((v, i) => {
    const h = v === 0 ? 2 : Math.max(3, (v / max) * plotH);
    const x = left + i * slot + (slot - barW) / 2;
    return html`<rect class="bar${v === 0 ? ' zero' : ''}" x="${x.toFixed(1)}" y="${(top + plotH - h).toFixed(1)}" width="${barW.toFixed(1)}" height="${h.toFixed(1)}" rx="1.5"><title>${month}-${String(i + 1).padStart(2, '0')}: ${int(v)} calls</title></rect>`;
  })}
  ${values.map((_, i) =>
    i === 0 || (i + 1) % 5 === 0
      ? html`<text class="axis" x="${(left + i * slot + slot / 2).toFixed(1)}" y="${H - 6}" text-anchor="middle">${i + 1}</text>`
      : '',
  )}
</svg>`;
}

/** A thin progress bar of used / limit. */
export function meter(used: number, limit: number): SafeHtml {
  const pct = limit > 0 ? Math.min(100, (used / limit) * 100) : 100;
  return html`<div class="meter" role="progressbar" aria-valuemin="0" aria-valuemax="${limit}" aria-valuenow="${Math.min(used, limit)}" aria-label="Credits used">
  <svg viewBox="0 0 100 8" preserveAspectRatio="none" width="100%" height="8"><rect x="0" y="0" width="${pct.toFixed(2)}" height="8" fill="${pct >= 100 ? '#c62f3c' : pct >= 80 ? '#d48806' : '#2f5bea'}"></rect></svg>
</div>`;
}
