// Owns the analysis thread pool: a few worker_threads (one per core) that resample and analyse parts of a
// file side by side, so one analysis uses every core of the otherwise idle worker process. Tasks are small
// (a few windows), handed out one at a time to whichever thread is free, and the deadline is checked before
// each hand-out, so a late analysis stops within one task. Without a pool (1 core) the same functions run
// in the calling thread.
import path from 'node:path';
import type { Worker } from 'node:worker_threads';
import { startThread } from '../../runtime/threads';
import type { FrameTrack } from './frames';
import type { PoolResult, PoolTask } from './pool-worker';
import { runTask } from './pool-worker';

interface Job {
  id: number;
  task: PoolTask;
  resolve: (r: PoolResult) => void;
  reject: (e: Error) => void;
}

interface Slot {
  worker: Worker;
  job?: Job;
}

export class AnalysisPool {
  private readonly slots: Slot[] = [];
  private readonly queue: Job[] = [];
  private nextId = 1;
  private closed = false;

  private constructor(readonly size: number) {
    for (let i = 0; i < size; i++) this.slots.push(this.spawn());
  }

  /** A pool of `size` threads; size ≤ 1 runs every task in the calling thread. */
  static create(size: number): AnalysisPool {
    return new AnalysisPool(size > 1 ? Math.floor(size) : 0);
  }

  /** Threads available (1 when tasks run in the calling thread). */
  get parallelism(): number {
    return Math.max(1, this.slots.length);
  }

  /**
   * Runs every task, at most one per thread at a time, and returns the results in order. `check` runs
   * before each task is handed out; if it throws, nothing more is started and the error is the result.
   */
  async runAll<T extends PoolResult>(tasks: PoolTask[], check: () => void): Promise<T[]> {
    if (this.slots.length === 0) {
      return tasks.map((t) => {
        check();
        return runTask(t).result as T;
      });
    }
    const results = new Array<T>(tasks.length);
    let next = 0;
    let failed: Error | undefined;
    const lane = async (): Promise<void> => {
      while (next < tasks.length && !failed) {
        const i = next++;
        try {
          check();
          results[i] = (await this.run(tasks[i]!)) as T;
        } catch (err) {
          failed ??= err as Error;
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.slots.length, tasks.length) }, lane));
    if (failed) throw failed;
    return results;
  }

  /** Compiles each thread's code on a second of synthetic voice, so the first request does not pay for it. */
  async warmUp(): Promise<void> {
    const rate = 8000;
    const x = new Float32Array(new SharedArrayBuffer(rate * 4));
    for (let i = 0; i < x.length; i++) x[i] = 0.3 * Math.sin((2 * Math.PI * 120 * i) / rate) + 0.1 * Math.sin((2 * Math.PI * 1300 * i) / rate);
    const task: PoolTask = { kind: 'frames', samples: x, rate, ranges: [[0, x.length]], hop: 80 };
    const runs = Array.from({ length: this.parallelism }, () => task);
    const tracks = (await this.runAll<FrameTrack[]>(runs, () => undefined)).flat();
    await this.runAll(
      tracks.map((t) => ({ kind: 'windows' as const, samples: x, tracks: [t], speech: [new Uint8Array(t.f0.length).fill(1)] })),
      () => undefined,
    );
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const j of this.queue.splice(0)) j.reject(new Error('analysis pool closed'));
    await Promise.all(this.slots.map((s) => s.worker.terminate()));
  }

  private run(task: PoolTask): Promise<PoolResult> {
    if (this.closed) return Promise.reject(new Error('analysis pool closed'));
    return new Promise((resolve, reject) => {
      this.queue.push({ id: this.nextId++, task, resolve, reject });
      this.dispatch();
    });
  }

  private dispatch(): void {
    for (const slot of this.slots) {
      if (slot.job || this.queue.length === 0) continue;
      const job = this.queue.shift()!;
      slot.job = job;
      slot.worker.postMessage({ id: job.id, task: job.task });
    }
  }

  private spawn(): Slot {
    const slot: Slot = { worker: startWorker() };
    slot.worker.unref();
    slot.worker.on('message', (msg: { id: number; result?: PoolResult; error?: string }) => {
      const job = slot.job;
      if (!job || job.id !== msg.id) return;
      slot.job = undefined;
      if (msg.error !== undefined) job.reject(new Error(msg.error));
      else job.resolve(msg.result!);
      this.dispatch();
    });
    const replace = (err: Error): void => {
      const job = slot.job;
      slot.job = undefined;
      job?.reject(err);
      if (this.closed || !this.slots.includes(slot)) return;
      // A crashed thread is replaced so the pool keeps its size.
      const i = this.slots.indexOf(slot);
      if (i >= 0) this.slots[i] = this.spawn();
      this.dispatch();
    };
    slot.worker.on('error', replace);
    slot.worker.on('exit', (code) => {
      if (!this.closed) replace(new Error(`analysis thread exited with code ${code}`));
    });
    return slot;
  }
}

function startWorker(): Worker {
  // Compiled builds run pool-worker.js; from TypeScript sources (tests, benchmarks under tsx) the thread
  // registers tsx's CommonJS hook itself, whatever loader flags the parent process was started with.
  // The threads only hold one task's frames at a time: small young generations keep their RSS low.
  const resourceLimits = { maxYoungGenerationSizeMb: 8, maxOldGenerationSizeMb: 96 };
  if (!__filename.endsWith('.ts')) return startThread(path.join(__dirname, 'pool-worker.js'), { resourceLimits });
  const code = `require(${JSON.stringify(require.resolve('tsx/cjs'))}); require(${JSON.stringify(path.join(__dirname, 'pool-worker.ts'))});`;
  return startThread(code, { eval: true, resourceLimits });
}
