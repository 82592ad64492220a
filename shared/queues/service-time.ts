// Owns the admission estimate of a worker's time per job, from the cycles the workers report with their outcomes
// (workers/runtime/job-runner.ts, on the worker's clock and in its CPU time): CPU time per job (EWMA) × a floor
// (the 10th percentile of clock ÷ CPU over the last 100 cycles) × contention (how far above the floor the cycles
// run, smoothed over about ten seconds); and each tenant's own figure in the same base unit (baseOf, scale), which
// fair-queue.ts turns into that tenant's time per job. Why CPU time and not the clock: docs/reliability.md,
// "Admission by time".
import type { WorkerCycle } from './result-bus';

/** Weight of the newest CPU sample (about the last ten jobs matter). */
const CPU_ALPHA = 0.2;
/** The floor is this quantile of the clock ÷ CPU ratios of the last FLOOR_WINDOW cycles. */
const FLOOR_WINDOW = 100;
const FLOOR_QUANTILE = 0.1;
/** Time constant of the contention factor, in reported cycle time: a d ms cycle moves it by 1 − e^(−d/τ). */
export const CONTENTION_TAU_MS = 10_000;
/** A cycle with less CPU time than this says nothing about the ratio (a worker that only waited). */
const MIN_CPU_MS = 0.5;

export class ServiceTimeEstimate {
  private cpuMs: number | null = null;
  private readonly ratios: number[] = [];
  private floor = 1;
  private contention = 1;
  /** Clock-time EWMA, for cycles without CPU time (workers of an older version). */
  private wallMs: number | null = null;
  /** A warm-up job's time, standing in until the first real sample. */
  private provisionalMs: number | null = null;

  /** Time per job; null before any outcome. */
  get ms(): number | null {
    if (this.cpuMs !== null) return this.cpuMs * this.floor * this.contention;
    return this.wallMs ?? this.provisionalMs;
  }

  /**
   * What turns a job's figure in the estimate's base unit (baseOf) into time per job: floor × contention while the
   * estimate runs on CPU time, 1 on clock time. Lets a tenant whose jobs are dearer than the average (long audio)
   * be estimated as such (fair-queue.ts).
   */
  get scale(): number {
    return this.cpuMs !== null ? this.floor * this.contention : 1;
  }

  /** One cycle's figure in the estimate's base unit: its CPU time while the estimate runs on it, else its clock time. */
  baseOf(cycle: WorkerCycle): number | null {
    if (this.cpuMs !== null) return cycle.cpuMs !== null && Number.isFinite(cycle.cpuMs) && cycle.cpuMs >= MIN_CPU_MS ? cycle.cpuMs : null;
    return Number.isFinite(cycle.ms) && cycle.ms >= 0 ? cycle.ms : null;
  }

  /** The parts of the estimate, for logs and tests. */
  get parts(): { cpuMs: number | null; floor: number; contention: number } {
    const round = (x: number) => Math.round(x * 100) / 100;
    return { cpuMs: this.cpuMs === null ? null : round(this.cpuMs), floor: round(this.floor), contention: round(this.contention) };
  }

  observe(cycle: WorkerCycle): void {
    if (!Number.isFinite(cycle.ms) || cycle.ms < 0) return;
    this.wallMs = this.wallMs === null ? cycle.ms : this.wallMs + CPU_ALPHA * (cycle.ms - this.wallMs);
    const cpu = cycle.cpuMs;
    if (cpu === null || !Number.isFinite(cpu) || cpu < MIN_CPU_MS) return;
    this.cpuMs = this.cpuMs === null ? cpu : this.cpuMs + CPU_ALPHA * (cpu - this.cpuMs);
    const ratio = cycle.ms / cpu;
    this.ratios.push(ratio);
    if (this.ratios.length > FLOOR_WINDOW) this.ratios.shift();
    const sorted = [...this.ratios].sort((a, b) => a - b);
    this.floor = sorted[Math.floor(FLOOR_QUANTILE * (sorted.length - 1))]!;
    const weight = 1 - Math.exp(-cycle.ms / CONTENTION_TAU_MS);
    this.contention += weight * (Math.max(1, ratio / this.floor) - this.contention);
  }

  /** An outcome without a cycle (a worker's warm-up job): its time stands in until the first sample. */
  observeProvisional(workerMs: number): void {
    if (this.ms === null && Number.isFinite(workerMs) && workerMs >= 0) this.provisionalMs = workerMs;
  }
}
