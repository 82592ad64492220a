// Owns the FFT's radix-4 passes in WebAssembly SIMD (dsp.ts keeps the same passes in JavaScript): two
// butterflies per instruction in f64x2 lanes, the same multiplications and additions in the same order, so
// the result is bit-identical to the JavaScript passes (tested). The arrays live in the kernel's own memory:
// a caller that wants the fast path works in the pair of arrays `re`/`im` handed out here.
import { compileKernel, get, i32, instantiate, leb, OP, PAGE, set, SIMD, type WasmModule } from './wasm-asm';

// quad(re, im, nBytes, hBytes, tw): one radix-4 pass of quarter length h over n points (byte sizes).
const [RE, IM, NB, HB, TW] = [0, 1, 2, 3, 4];
const [START, KB, A0, A1, A2, A3, D, TP] = [5, 6, 7, 8, 9, 10, 11, 12];
const I32_LOCALS = 8;
// v128 locals, after the i32 ones.
const [C1, S1, C2, S2, C3, S3, X1R, X1I, X2R, X2I, X3R, X3I, T1R, T1I, T2R, T2I, T3R, T3I, X0R, X0I, AR, AI, BR, BI, CR, CI, DR, DI] = [
  13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40,
];
const V128_LOCALS = 28;
/** Twiddle bytes per pair of butterflies: c1, s1, c2, s2, c3, s3 for k and k + 1. */
const PAIR_BYTES = 96;

const simd = (op: readonly number[]): number[] => [OP.simd, ...op];
const load = (offset = 0): number[] => [OP.simd, ...SIMD.load, 3, ...leb(offset)];
const store = (): number[] => [OP.simd, ...SIMD.store, 3, 0];
const add = simd(SIMD.f64x2Add);
const sub = simd(SIMD.f64x2Sub);
const mul = simd(SIMD.f64x2Mul);
/** Address `a` (+ D for the imaginary array). */
const at = (a: number, imag: boolean): number[] => (imag ? [...get(a), ...get(D), OP.i32Add] : get(a));
/** t = x · (c + i s): tr = xr·c − xi·s, ti = xr·s + xi·c. */
const twiddle = (xr: number, xi: number, c: number, s: number, tr: number, ti: number): number[] => [
  ...get(xr),
  ...get(c),
  ...mul,
  ...get(xi),
  ...get(s),
  ...mul,
  ...sub,
  ...set(tr),
  ...get(xr),
  ...get(s),
  ...mul,
  ...get(xi),
  ...get(c),
  ...mul,
  ...add,
  ...set(ti),
];
const op2 = (a: number, b: number, op: number[], out: number): number[] => [...get(a), ...get(b), ...op, ...set(out)];
const storeOp = (addr: number[], a: number, b: number, op: number[]): number[] => [...addr, ...get(a), ...get(b), ...op, ...store()];

function code(): number[] {
  return [
    ...get(IM),
    ...get(RE),
    OP.i32Sub,
    ...set(D),
    OP.block,
    OP.void,
    OP.loop,
    OP.void,
    ...i32(0),
    ...set(KB),
    ...get(TW),
    ...set(TP),
    OP.loop,
    OP.void,
    ...get(RE),
    ...get(START),
    OP.i32Add,
    ...get(KB),
    OP.i32Add,
    ...set(A0),
    ...get(A0),
    ...get(HB),
    OP.i32Add,
    ...set(A1),
    ...get(A1),
    ...get(HB),
    OP.i32Add,
    ...set(A2),
    ...get(A2),
    ...get(HB),
    OP.i32Add,
    ...set(A3),
    ...[C1, S1, C2, S2, C3, S3].flatMap((v, i) => [...get(TP), ...load(16 * i), ...set(v)]),
    ...at(A1, false),
    ...load(),
    ...set(X1R),
    ...at(A1, true),
    ...load(),
    ...set(X1I),
    ...at(A2, false),
    ...load(),
    ...set(X2R),
    ...at(A2, true),
    ...load(),
    ...set(X2I),
    ...at(A3, false),
    ...load(),
    ...set(X3R),
    ...at(A3, true),
    ...load(),
    ...set(X3I),
    ...twiddle(X1R, X1I, C1, S1, T1R, T1I),
    ...twiddle(X2R, X2I, C2, S2, T2R, T2I),
    ...twiddle(X3R, X3I, C3, S3, T3R, T3I),
    ...at(A0, false),
    ...load(),
    ...set(X0R),
    ...at(A0, true),
    ...load(),
    ...set(X0I),
    ...op2(X0R, T1R, add, AR),
    ...op2(X0I, T1I, add, AI),
    ...op2(X0R, T1R, sub, BR),
    ...op2(X0I, T1I, sub, BI),
    ...op2(T2R, T3R, add, CR),
    ...op2(T2I, T3I, add, CI),
    ...op2(T2R, T3R, sub, DR),
    ...op2(T2I, T3I, sub, DI),
    ...storeOp(at(A0, false), AR, CR, add),
    ...storeOp(at(A0, true), AI, CI, add),
    ...storeOp(at(A2, false), AR, CR, sub),
    ...storeOp(at(A2, true), AI, CI, sub),
    ...storeOp(at(A1, false), BR, DI, add),
    ...storeOp(at(A1, true), BI, DR, sub),
    ...storeOp(at(A3, false), BR, DI, sub),
    ...storeOp(at(A3, true), BI, DR, add),
    ...get(TP),
    ...i32(PAIR_BYTES),
    OP.i32Add,
    ...set(TP),
    ...get(KB),
    ...i32(16),
    OP.i32Add,
    OP.tee,
    KB,
    ...get(HB),
    OP.i32LtU,
    OP.brIf,
    0,
    OP.end,
    ...get(START),
    ...get(HB),
    ...i32(2),
    OP.i32Shl,
    OP.i32Add,
    OP.tee,
    START,
    ...get(NB),
    OP.i32LtU,
    OP.brIf,
    0,
    OP.end,
    OP.end,
    OP.end,
  ];
}

const compiled: WasmModule | null = compileKernel('quad', 5, I32_LOCALS, V128_LOCALS, code());

/** The radix-4 passes of one FFT size on a pair of arrays in the kernel's memory. */
export class SimdQuadPasses {
  readonly re: Float64Array;
  readonly im: Float64Array;
  private readonly passes: Array<{ hBytes: number; tw: number }> = [];

  private constructor(
    private readonly quad: (...args: number[]) => void,
    buffer: ArrayBuffer,
    private readonly n: number,
    quads: Array<{ h: number }>,
    private readonly reAt: number,
  ) {
    this.re = new Float64Array(buffer, reAt, n);
    this.im = new Float64Array(buffer, reAt + 8 * n, n);
    const tw = new Float64Array(buffer, 0, reAt / 8);
    let offset = 0;
    for (const { h } of quads) {
      this.passes.push({ hBytes: 8 * h, tw: offset });
      for (let k = 0; k < h; k += 2) {
        for (let lane = 0; lane < 2; lane++) {
          const a = (2 * Math.PI * (k + lane)) / (4 * h);
          const values = [Math.cos(2 * a), -Math.sin(2 * a), Math.cos(a), -Math.sin(a), Math.cos(3 * a), -Math.sin(3 * a)];
          values.forEach((v, j) => (tw[offset / 8 + 2 * j + lane] = v));
        }
        offset += PAIR_BYTES;
      }
    }
  }

  /** Null without WebAssembly SIMD. `quads` are the FFT's radix-4 stages (quarter lengths h ≥ 4, even). */
  static create(n: number, quads: Array<{ h: number }>): SimdQuadPasses | null {
    if (!compiled || quads.some(({ h }) => h < 2 || h % 2 !== 0)) return null;
    const twBytes = quads.reduce((s, { h }) => s + (h / 2) * PAIR_BYTES, 0);
    const reAt = Math.ceil(twBytes / 16) * 16;
    const { memory, fn } = instantiate(compiled, 'quad');
    const need = reAt + 16 * n;
    if (need > memory.buffer.byteLength) memory.grow(Math.ceil((need - memory.buffer.byteLength) / PAGE));
    return new SimdQuadPasses(fn, memory.buffer, n, quads, reAt);
  }

  /** Runs every radix-4 pass on `re`/`im` in place. */
  run(): void {
    for (const p of this.passes) this.quad(this.reAt, this.reAt + 8 * this.n, 8 * this.n, p.hBytes, p.tw);
  }
}
