// Owns an in-memory rewrite of ONNX graphs' PRelu nodes before a session opens them. onnxruntime's CPU PRelu
// is a slow generic broadcasting kernel: in the MiniFASNet graphs (33 PRelu each, per-channel slopes [C,1,1])
// it took about half of each run (profiled 2.1 of 4.2 ms). The rewrite (see rewritePRelu) only uses
// operations whose results are exact, so the model's outputs are bit-identical; the file on disk (and its
// sha256) is untouched.
// The protobuf handling is the few fields of onnx.proto this needs; everything else is copied byte for byte. The reader
// (readFields, bytesField, stringField) is exported for research code that reads graphs the same way.

export interface Field {
  field: number;
  wire: number;
  /** Byte range of the whole field (key included) and of its payload. */
  from: number;
  start: number;
  end: number;
  value: number;
}

function readVarint(b: Uint8Array, p: number): [number, number] {
  let v = 0,
    mul = 1,
    c: number;
  do {
    if (p >= b.length) throw new Error('truncated protobuf varint');
    c = b[p++]!;
    v += (c & 0x7f) * mul;
    mul *= 128;
  } while (c & 0x80);
  return [v, p];
}

export function readFields(b: Uint8Array, start = 0, end = b.length): Field[] {
  const out: Field[] = [];
  let p = start;
  while (p < end) {
    const from = p;
    let key: number,
      v = 0,
      s: number;
    [key, p] = readVarint(b, p);
    const field = Math.floor(key / 8),
      wire = key & 7;
    if (wire === 0) {
      s = p;
      [v, p] = readVarint(b, p);
    } else if (wire === 2) {
      let len: number;
      [len, p] = readVarint(b, p);
      s = p;
      p += len;
    } else if (wire === 5 || wire === 1) {
      s = p;
      p += wire === 5 ? 4 : 8;
    } else {
      throw new Error(`unsupported protobuf wire type ${wire}`);
    }
    if (p > end) throw new Error('truncated protobuf field');
    out.push({ field, wire, from, start: s, end: p, value: v });
  }
  return out;
}

function varint(v: number): number[] {
  const out: number[] = [];
  while (v >= 0x80) {
    out.push((v % 128) | 0x80);
    v = Math.floor(v / 128);
  }
  out.push(v);
  return out;
}

const enc = new TextEncoder();
const dec = new TextDecoder();
export const bytesField = (field: number, payload: Uint8Array): Uint8Array =>
  Buffer.concat([Uint8Array.from([...varint(field * 8 + 2), ...varint(payload.length)]), payload]);
export const stringField = (field: number, s: string) => bytesField(field, enc.encode(s));

// onnx.proto field numbers used here.
const MODEL_GRAPH = 7;
const GRAPH_NODE = 1;
const NODE_INPUT = 1,
  NODE_OUTPUT = 2,
  NODE_NAME = 3,
  NODE_OP_TYPE = 4;

function node(op: string, name: string, inputs: string[], outputs: string[]): Uint8Array {
  return Buffer.concat([
    ...inputs.map((i) => stringField(NODE_INPUT, i)),
    ...outputs.map((o) => stringField(NODE_OUTPUT, o)),
    stringField(NODE_NAME, name),
    stringField(NODE_OP_TYPE, op),
  ]);
}

export interface PReluRewriteResult {
  bytes: Uint8Array;
  /** PRelu nodes replaced. */
  rewritten: number;
}

/**
 * Every PRelu(x, slope) node becomes r = Relu(x); y = r + (x - r) * slope, which onnxruntime runs with its
 * vectorised element-wise kernels. The result is bit-identical: for x > 0, x - r = 0 and y = x + (+-0) = x;
 * otherwise r = 0, x - r = x and y = 0 + x * slope, the same single rounded product PRelu computes. Mul
 * broadcasts the slope as PRelu does. (x - Relu(x) measured a little faster than Min(x, 0).)
 * A graph without PRelu, or bytes this reader cannot parse, come back unchanged (onnxruntime then says
 * what is wrong with them).
 */
export function rewritePRelu(model: Uint8Array): PReluRewriteResult {
  try {
    return rewrite(model);
  } catch {
    return { bytes: model, rewritten: 0 };
  }
}

function rewrite(model: Uint8Array): PReluRewriteResult {
  const top = readFields(model);
  const graph = top.find((f) => f.field === MODEL_GRAPH && f.wire === 2);
  if (!graph) return { bytes: model, rewritten: 0 };
  const parts: Uint8Array[] = [];
  const suffix = '__prelu_rewrite';
  let rewritten = 0;
  for (const f of readFields(model, graph.start, graph.end)) {
    const raw = model.subarray(f.from, f.end);
    if (f.field !== GRAPH_NODE || f.wire !== 2) {
      parts.push(raw);
      continue;
    }
    const nfs = readFields(model, f.start, f.end);
    const str = (x: Field) => dec.decode(model.subarray(x.start, x.end));
    const op = nfs.find((x) => x.field === NODE_OP_TYPE);
    const inputs = nfs.filter((x) => x.field === NODE_INPUT).map(str);
    const outputs = nfs.filter((x) => x.field === NODE_OUTPUT).map(str);
    if (!op || str(op) !== 'PRelu' || inputs.length !== 2 || outputs.length !== 1) {
      parts.push(raw);
      continue;
    }
    const [x, slope] = inputs as [string, string];
    const y = outputs[0]!;
    const [relu, neg, mul] = ['relu', 'negpart', 'mul'].map((s) => `${y}${suffix}_${s}`) as [string, string, string];
    parts.push(
      bytesField(GRAPH_NODE, node('Relu', relu, [x], [relu])),
      bytesField(GRAPH_NODE, node('Sub', neg, [x, relu], [neg])),
      bytesField(GRAPH_NODE, node('Mul', mul, [neg, slope], [mul])),
      bytesField(GRAPH_NODE, node('Add', `${y}${suffix}_add`, [relu, mul], [y])),
    );
    rewritten++;
  }
  if (rewritten === 0) return { bytes: model, rewritten };
  const newGraph = Buffer.concat(parts);
  const out = top.map((f) => (f === graph ? bytesField(MODEL_GRAPH, newGraph) : model.subarray(f.from, f.end)));
  return { bytes: Buffer.concat(out), rewritten };
}
