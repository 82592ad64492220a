// Owns what the accuracy scripts share: reading a labelled image set, running the engine on it, grouped
// cross-validation of the calibration, and the ISO 30107-3 style metrics (APCER, BPCER, EER) plus AUC.
import fs from 'node:fs';
import path from 'node:path';
import { AppError } from '../../../shared/errors';
import { calibrate, type Calibration, fitCalibration } from './calibrate';
import type { LivenessEngine, LivenessFeatures } from './index';

export interface ManifestRow {
  file: string;
  label: 'live' | 'spoof';
  kind: string;
  type: string;
  /** Source group (owner/repo); rows of one group are correlated and must never straddle a CV split. */
  group: string;
}

/** Minimal RFC 4180 parser (quoted fields, doubled quotes); manifests are small. */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [], cur = '', quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') { cur += '"'; i++; } else if (c === '"') quoted = false; else cur += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') { row.push(cur); cur = ''; }
    else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++;
      row.push(cur); cur = '';
      if (row.some((v) => v !== '')) rows.push(row);
      row = [];
    } else cur += c;
  }
  row.push(cur);
  if (row.some((v) => v !== '')) rows.push(row);
  return rows;
}

export function readManifest(dir: string): ManifestRow[] {
  const [header, ...rows] = parseCsv(fs.readFileSync(path.join(dir, 'manifest.csv'), 'utf8'));
  if (!header) throw new Error(`${dir}/manifest.csv is empty`);
  const col = (name: string) => header.indexOf(name);
  if (col('file') < 0 || col('label') < 0) throw new Error('manifest.csv needs at least the columns file,label');
  return rows.map((r) => {
    const get = (name: string) => (col(name) >= 0 ? (r[col(name)] ?? '') : '');
    const label = get('label');
    if (label !== 'live' && label !== 'spoof') throw new Error(`manifest.csv: label "${label}" is neither live nor spoof`);
    const source = get('source');
    // "owner/repo@commit:path" -> "owner/repo"; without a source column each file is its own group.
    const group = source ? source.split('@')[0]! : get('file');
    return { file: get('file'), label, kind: get('kind') || 'full', type: get('type') || (label === 'live' ? '' : 'unknown'), group };
  });
}

export interface Scored {
  row: ManifestRow;
  /** Calibrated likelihood as the engine answered; undefined when the engine refused the image. */
  likelihood?: number;
  features?: LivenessFeatures;
  /** Error code when the engine refused the image (invalid_image: undecodable or no face). */
  error?: string;
  errorMessage?: string;
}

export async function scoreDataset(engine: LivenessEngine, dir: string, rows: ManifestRow[]): Promise<Scored[]> {
  const out: Scored[] = [];
  for (const row of rows) {
    const bytes = fs.readFileSync(path.join(dir, row.file));
    const format = /\.png$/i.test(row.file) ? 'png' : 'jpeg';
    try {
      const { result, features } = await engine.analyzeDetailed(bytes, format);
      out.push({ row, likelihood: result.isFakeLikelihood, features });
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      out.push({ row, error: err.code, errorMessage: err.message });
    }
  }
  return out;
}

/**
 * Leave-one-source-group-out: each group's likelihoods come from a calibration fitted on the full frames
 * of all other groups, so no image is scored by a curve that saw its own repository.
 */
export function crossValidatedLikelihoods(scored: Scored[], op: Calibration['operatingPoint']): Map<Scored, number> {
  const out = new Map<Scored, number>();
  const groups = [...new Set(scored.map((s) => s.row.group))];
  for (const g of groups) {
    const train = scored.filter((s) => s.row.group !== g && s.row.kind === 'full' && s.features);
    const c = fitCalibration(train.map((s) => s.features!.fused), train.map((s) => s.row.label === 'spoof'), op);
    for (const s of scored) if (s.row.group === g && s.features) out.set(s, calibrate(c, s.features.fused));
  }
  return out;
}

export function auc(pos: number[], neg: number[]): number {
  if (pos.length === 0 || neg.length === 0) return NaN;
  let s = 0;
  for (const p of pos) for (const n of neg) s += p > n ? 1 : p === n ? 0.5 : 0;
  return s / (pos.length * neg.length);
}

/** Spoofs accepted: score at or below the threshold ("spoof" means score > threshold). */
export const apcer = (spoof: number[], t: number) => (spoof.length ? spoof.filter((s) => s <= t).length / spoof.length : NaN);
/** Live faces rejected. */
export const bpcer = (live: number[], t: number) => (live.length ? live.filter((s) => s > t).length / live.length : NaN);

export function eer(spoof: number[], live: number[]): { eer: number; threshold: number } {
  let best = { gap: Infinity, eer: NaN, threshold: NaN };
  for (const t of [...new Set([...spoof, ...live])].sort((a, b) => a - b)) {
    const a = apcer(spoof, t), b = bpcer(live, t);
    if (Math.abs(a - b) < best.gap) best = { gap: Math.abs(a - b), eer: (a + b) / 2, threshold: t };
  }
  return { eer: best.eer, threshold: best.threshold };
}

export const pct = (v: number) => (Number.isNaN(v) ? '  -  ' : `${(100 * v).toFixed(1)}%`);
