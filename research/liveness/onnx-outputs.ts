// Research only: expose a model's penultimate tensor as an extra graph output, in memory (the file is untouched).
// The protobuf reading is prelu.ts's (the few onnx.proto fields it knows); only names are touched here.
import { bytesField, readFields, stringField, type Field } from '../../workers/liveness/engine/prelu';

const MODEL_GRAPH = 7;
const GRAPH_NODE = 1,
  GRAPH_OUTPUT = 12;
const NODE_INPUT = 1,
  NODE_OUTPUT = 2,
  NODE_OP_TYPE = 4;
const VALUE_INFO_NAME = 1;
/** Ops walked back through from the model's output to its last classifier layer. */
const PASS_THROUGH = new Set(['Softmax', 'Sigmoid', 'Reshape', 'Flatten', 'Identity', 'Squeeze', 'Unsqueeze', 'Transpose']);
const CLASSIFIER = new Set(['Gemm', 'MatMul']);

const dec = new TextDecoder();

/**
 * The model with a second graph output: the first input of its last Gemm/MatMul, found by walking back from
 * the first graph output through pass-through ops (softmax, reshapes). Returns the tensor's name and the ops walked.
 */
export function withOutputBefore(model: Uint8Array): { bytes: Uint8Array; tensor: string; chain: string[] } {
  const top = readFields(model);
  const graph = top.find((f) => f.field === MODEL_GRAPH && f.wire === 2);
  if (!graph) throw new Error('no graph in the model');
  const fields = readFields(model, graph.start, graph.end);
  const str = (x: Field) => dec.decode(model.subarray(x.start, x.end));
  const nodes = fields
    .filter((f) => f.field === GRAPH_NODE && f.wire === 2)
    .map((f) => {
      const nf = readFields(model, f.start, f.end);
      return {
        op: str(nf.find((x) => x.field === NODE_OP_TYPE)!),
        inputs: nf.filter((x) => x.field === NODE_INPUT).map(str),
        outputs: nf.filter((x) => x.field === NODE_OUTPUT).map(str),
      };
    });
  const firstOutput = fields.find((f) => f.field === GRAPH_OUTPUT)!;
  let name = str(readFields(model, firstOutput.start, firstOutput.end).find((x) => x.field === VALUE_INFO_NAME)!);
  const chain: string[] = [];
  for (;;) {
    const producer = nodes.find((n) => n.outputs.includes(name));
    if (!producer) throw new Error(`no node produces ${name}`);
    chain.push(producer.op);
    if (CLASSIFIER.has(producer.op)) {
      name = producer.inputs[0]!;
      break;
    }
    if (!PASS_THROUGH.has(producer.op)) throw new Error(`reached ${producer.op} before a classifier layer`);
    name = producer.inputs[0]!;
  }
  const extra = bytesField(GRAPH_OUTPUT, stringField(VALUE_INFO_NAME, name));
  const newGraph = Buffer.concat([model.subarray(graph.start, graph.end), extra]);
  const bytes = Buffer.concat(top.map((f) => (f === graph ? bytesField(MODEL_GRAPH, newGraph) : model.subarray(f.from, f.end))));
  return { bytes, tensor: name, chain };
}
