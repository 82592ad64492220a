// Owns the tiny WebAssembly assembler the engine's SIMD kernels are written with (resample-simd.ts,
// fft-simd.ts): opcodes, LEB128 numbers, and a module of one exported function of i32 parameters plus its own
// exported memory. No toolchain and no dependency: each kernel is a few hundred bytes built at start-up, and
// a runtime without WebAssembly SIMD gets null (the kernels' callers then keep their JavaScript loops).

/** The few pieces of the WebAssembly JavaScript API used here (tsconfig's lib carries no WebAssembly types). */
export interface WasmModule {
  readonly wasmModule?: never;
}
export interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(pages: number): number;
}
declare const WebAssembly: {
  validate(bytes: Uint8Array): boolean;
  Module: new (bytes: Uint8Array) => WasmModule;
  Instance: new (module: WasmModule, imports: object) => { exports: Record<string, unknown> };
};

export const PAGE = 65536;

/** Opcodes used by the kernels. */
export const OP = {
  block: 0x02,
  loop: 0x03,
  if: 0x04,
  end: 0x0b,
  brIf: 0x0d,
  get: 0x20,
  set: 0x21,
  tee: 0x22,
  f32Store: 0x38,
  i32Const: 0x41,
  i32Eqz: 0x45,
  i32LtS: 0x48,
  i32LtU: 0x49,
  i32GeS: 0x4e,
  i32Add: 0x6a,
  i32Sub: 0x6b,
  i32Mul: 0x6c,
  i32Shl: 0x74,
  i32ShrS: 0x75,
  f32ConvertI32S: 0xb2,
  simd: 0xfd,
  void: 0x40,
  i32: 0x7f,
  v128: 0x7b,
} as const;

/** SIMD opcodes (after the 0xfd prefix), LEB128-encoded. */
export const SIMD = {
  load: [0x00],
  store: [0x0b],
  const: [0x0c],
  extractLane: [0x1b],
  i32x4Add: [0xae, 0x01],
  dot: [0xba, 0x01],
  f64x2Add: [0xf0, 0x01],
  f64x2Sub: [0xf1, 0x01],
  f64x2Mul: [0xf2, 0x01],
} as const;

export function leb(n: number): number[] {
  const out: number[] = [];
  for (;;) {
    const b = n & 0x7f;
    n >>>= 7;
    if (n === 0) return [...out, b];
    out.push(b | 0x80);
  }
}

function sleb(n: number): number[] {
  const out: number[] = [];
  for (;;) {
    const b = n & 0x7f;
    n >>= 7;
    if ((n === 0 && (b & 0x40) === 0) || (n === -1 && (b & 0x40) !== 0)) return [...out, b];
    out.push(b | 0x80);
  }
}

export const get = (i: number): number[] => [OP.get, i];
export const set = (i: number): number[] => [OP.set, i];
export const tee = (i: number): number[] => [OP.tee, i];
export const i32 = (v: number): number[] => [OP.i32Const, ...sleb(v)];

function section(id: number, content: number[]): number[] {
  return [id, ...leb(content.length), ...content];
}

/**
 * Compiles a module exporting `mem` (its own memory, one page to start) and one function `name` taking
 * `params` i32 parameters, with `i32Locals` then `v128Locals` locals after them, and `body` as its code
 * (ending with OP.end). Null when the runtime cannot validate it (no WebAssembly SIMD).
 */
export function compileKernel(name: string, params: number, i32Locals: number, v128Locals: number, body: number[]): WasmModule | null {
  const str = (s: string): number[] => [...leb(s.length), ...Buffer.from(s, 'ascii')];
  const fn = [2, ...leb(i32Locals), OP.i32, ...leb(v128Locals), OP.v128, ...body];
  const bytes = Uint8Array.from([
    0x00,
    0x61,
    0x73,
    0x6d,
    0x01,
    0x00,
    0x00,
    0x00,
    ...section(1, [1, 0x60, ...leb(params), ...new Array<number>(params).fill(OP.i32), 0]),
    ...section(3, [1, 0]),
    ...section(5, [1, 0x00, 1]),
    ...section(7, [2, ...str('mem'), 0x02, 0, ...str(name), 0x00, 0]),
    ...section(10, [1, ...leb(fn.length), ...fn]),
  ]);
  return typeof WebAssembly === 'object' && WebAssembly.validate(bytes) ? new WebAssembly.Module(bytes) : null;
}

/** A fresh instance of a compiled kernel: its memory and its function. */
export function instantiate(module: WasmModule, name: string): { memory: WasmMemory; fn: (...args: number[]) => void } {
  const instance = new WebAssembly.Instance(module, {});
  return { memory: instance.exports.mem as WasmMemory, fn: instance.exports[name] as (...args: number[]) => void };
}
