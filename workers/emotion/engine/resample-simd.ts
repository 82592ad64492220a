// Owns the fast path of the in-process PCM resampler (pcm.ts): the same polyphase filter in WebAssembly
// SIMD, eight 16-bit taps per instruction (i32x4.dot_i16x8_s) in 32-bit integer arithmetic, as
// libswresample itself computes 16-bit audio. Integer samples times Q15 coefficients are exact in either
// arithmetic, so the result is bit-identical to the scalar loop (tested); filter banks whose sums could
// leave 32 bits, and runtimes without WebAssembly SIMD, keep the scalar loop. The kernel is assembled with
// wasm-asm.ts; its text form is in the comment on `code()`.

import { compileKernel, get, i32, instantiate, OP, PAGE, set, SIMD, tee, type WasmMemory, type WasmModule } from './wasm-asm';

/** A filter bank as pcm.ts builds it: phases × taps Q15 coefficients. */
export interface SimdBank {
  phases: number;
  step: number;
  taps: number;
  center: number;
  coef: Float64Array;
}

const I32_MAX = 2 ** 31 - 1;

// Parameters and locals of `run` by index.
const [IN, COEF, OUT, N_OUT, BLOCKS, STEP_WHOLE, STEP_FRAC, PHASES, PH] = [0, 1, 2, 3, 4, 5, 6, 7, 8];
const [J, IDX, XP, CP, K, S, ACC] = [9, 10, 11, 12, 13, 14, 15];

/**
 * run(in, coef, out, nOut, blocks, stepWhole, stepFrac, phases, ph):
 *   for j in 0..nOut: acc = Σ_b dot_i16x8(in[idx·2 + 16b], coef[(ph·blocks + b)·16]);
 *     out[j] = f32((lanes(acc) + 16384) >> 15); idx += stepWhole; ph += stepFrac; if ph ≥ phases { ph −= phases; idx++ }
 * `in` points at the first output's first tap; `blocks` = taps / 8 (the bank zero-padded to a multiple of 8).
 */
function code(): number[] {
  const lane = (l: number): number[] => [...get(ACC), OP.simd, ...SIMD.extractLane, l];
  const body = [
    OP.block,
    OP.void,
    ...get(N_OUT),
    OP.i32Eqz,
    OP.brIf,
    0,
    OP.loop,
    OP.void,
    ...get(IN),
    ...get(IDX),
    ...i32(1),
    OP.i32Shl,
    OP.i32Add,
    ...set(XP),
    ...get(COEF),
    ...get(PH),
    ...get(BLOCKS),
    OP.i32Mul,
    ...i32(4),
    OP.i32Shl,
    OP.i32Add,
    ...set(CP),
    OP.simd,
    ...SIMD.const,
    ...new Array<number>(16).fill(0),
    ...set(ACC),
    ...get(BLOCKS),
    ...set(K),
    OP.loop,
    OP.void,
    ...get(ACC),
    ...get(XP),
    OP.simd,
    ...SIMD.load,
    0,
    0,
    ...get(CP),
    OP.simd,
    ...SIMD.load,
    0,
    0,
    OP.simd,
    ...SIMD.dot,
    OP.simd,
    ...SIMD.i32x4Add,
    ...set(ACC),
    ...get(XP),
    ...i32(16),
    OP.i32Add,
    ...set(XP),
    ...get(CP),
    ...i32(16),
    OP.i32Add,
    ...set(CP),
    ...get(K),
    ...i32(1),
    OP.i32Sub,
    ...tee(K),
    OP.brIf,
    0,
    OP.end,
    ...lane(0),
    ...lane(1),
    OP.i32Add,
    ...lane(2),
    OP.i32Add,
    ...lane(3),
    OP.i32Add,
    ...i32(16384),
    OP.i32Add,
    ...i32(15),
    OP.i32ShrS,
    ...set(S),
    ...get(OUT),
    ...get(J),
    ...i32(2),
    OP.i32Shl,
    OP.i32Add,
    ...get(S),
    OP.f32ConvertI32S,
    OP.f32Store,
    2,
    0,
    ...get(IDX),
    ...get(STEP_WHOLE),
    OP.i32Add,
    ...set(IDX),
    ...get(PH),
    ...get(STEP_FRAC),
    OP.i32Add,
    ...tee(PH),
    ...get(PHASES),
    OP.i32GeS,
    OP.if,
    OP.void,
    ...get(PH),
    ...get(PHASES),
    OP.i32Sub,
    ...set(PH),
    ...get(IDX),
    ...i32(1),
    OP.i32Add,
    ...set(IDX),
    OP.end,
    ...get(J),
    ...i32(1),
    OP.i32Add,
    ...tee(J),
    ...get(N_OUT),
    OP.i32LtS,
    OP.brIf,
    0,
    OP.end,
    OP.end,
    OP.end,
  ];
  return body;
}

/** The compiled module, or null when this runtime has no WebAssembly SIMD. */
const compiled: WasmModule | null = compileKernel('run', 9, 6, 1, code());

export const simdAvailable = compiled !== null;

/** Whether the bank's sums stay inside 32 bits for any 16-bit input (the integer path is then exact). */
export function fitsInt32(bank: SimdBank): boolean {
  let worst = 0;
  for (let ph = 0; ph < bank.phases; ph++) {
    let s = 0;
    for (let i = 0; i < bank.taps; i++) s += Math.abs(bank.coef[ph * bank.taps + i]!);
    if (s > worst) worst = s;
  }
  return worst * 32768 + 16384 <= I32_MAX;
}

/** One instance per thread: its memory holds the bank's coefficients, the input range and the output. */
class SimdResampler {
  private readonly memory: WasmMemory;
  private readonly run: (...args: number[]) => void;
  /** Bank whose padded coefficients sit at address 0, and their size in bytes. */
  private loaded: SimdBank | null = null;
  private coefBytes = 0;

  constructor(module: WasmModule) {
    const { memory, fn } = instantiate(module, 'run');
    this.memory = memory;
    this.run = fn;
  }

  /** Outputs [from, to) of `x` (integer sample values) through `bank`; `mirror` reflects indices outside x. */
  resample(x: Int16Array | Float32Array, bank: SimdBank, from: number, to: number, mirror: (i: number, n: number) => number): Float32Array {
    const { phases, step, taps, center } = bank;
    const blocks = Math.ceil(taps / 8);
    const padded = blocks * 8;
    const count = Math.max(0, to - from);
    const out = new Float32Array(count);
    if (count === 0) return out;
    const first = Math.floor((from * step) / phases) - center;
    const last = Math.floor(((to - 1) * step) / phases) - center;
    const inputLength = last - first + padded;
    const coefBytes = phases * padded * 2;
    const inAt = align16(coefBytes);
    const outAt = align16(inAt + inputLength * 2);
    const need = outAt + count * 4;
    if (this.memory.buffer.byteLength < need) {
      this.memory.grow(Math.ceil((need - this.memory.buffer.byteLength) / PAGE));
      this.loaded = null;
    }
    const buf = this.memory.buffer;
    if (this.loaded !== bank || this.coefBytes !== coefBytes) {
      const c = new Int16Array(buf, 0, phases * padded);
      c.fill(0);
      for (let ph = 0; ph < phases; ph++) for (let i = 0; i < taps; i++) c[ph * padded + i] = bank.coef[ph * taps + i]!;
      this.loaded = bank;
      this.coefBytes = coefBytes;
    }
    const input = new Int16Array(buf, inAt, inputLength);
    const n = x.length;
    const lo = Math.min(inputLength, Math.max(0, -first));
    const hi = Math.min(inputLength, n - first);
    for (let i = 0; i < lo; i++) input[i] = x[mirror(first + i, n)]!;
    if (hi > lo) input.set(x.subarray(first + lo, first + hi), lo);
    for (let i = Math.max(lo, hi); i < inputLength; i++) input[i] = x[mirror(first + i, n)]!;
    this.run(inAt, 0, outAt, count, blocks, Math.floor(step / phases), step % phases, phases, (from * step) % phases);
    out.set(new Float32Array(buf, outAt, count));
    return out;
  }
}

function align16(n: number): number {
  return (n + 15) & ~15;
}

let instance: SimdResampler | null | undefined;

/** This thread's SIMD resampler, or null when the runtime lacks WebAssembly SIMD. */
export function simdResampler(): SimdResampler | null {
  if (instance === undefined) instance = compiled ? new SimdResampler(compiled) : null;
  return instance;
}
