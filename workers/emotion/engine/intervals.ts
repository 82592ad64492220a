// Owns the response's time grid: consecutive 5 s intervals from 0.0, the last one ending at the audio's
// decoded duration. A final remainder shorter than 0.1 s is folded into the previous interval instead of
// becoming an interval of its own: AAC and MP3 decoders overshoot by up to a frame (a 5.000 s file decodes
// to 5.02–5.07 s), and a 20 ms "interval" would carry no analysable speech.
const INTERVAL_SECONDS = 5;
const MIN_TAIL_SECONDS = 0.1;

export interface IntervalPlan {
  /** Sample range [start, end) at the analysis rate. */
  start: number;
  end: number;
  from: number;
  to: number;
}

export function planIntervals(totalSamples: number, rate: number): IntervalPlan[] {
  const per = INTERVAL_SECONDS * rate;
  let count = Math.max(1, Math.ceil(totalSamples / per));
  if (count > 1 && totalSamples - (count - 1) * per < MIN_TAIL_SECONDS * rate) count--;
  const out: IntervalPlan[] = [];
  for (let i = 0; i < count; i++) {
    const start = i * per;
    const end = i === count - 1 ? totalSamples : (i + 1) * per;
    out.push({ start, end, from: roundMs(start / rate), to: roundMs(end / rate) });
  }
  return out;
}

/** Seconds rounded to the millisecond: enough for a 5 s grid, and keeps JSON short. */
export function roundMs(seconds: number): number {
  return Math.round(seconds * 1000) / 1000;
}
