"""Owns the bridge between the shipped ONNX spoof models and PyTorch: the ONNX graph run as a torch module whose
initializers are trainable parameters, and the export that writes trained values back into the same graph.

Fine-tuning the very graph the worker runs (MiniFASNetV2, MiniFASNetV1SE, faceplugin's fr_liveness: Conv, PRelu,
Add, squeeze-excitation, MatMul, one BatchNormalization) means no architecture is re-typed from memory and the
exported file has the original nodes, opset and input/output names: only the initializer values change.
"""
import copy

import numpy as np
import onnx
import torch
import torch.nn.functional as F
from onnx import numpy_helper

# Float initializers that stay fixed: BatchNormalization's running statistics (inputs 3 and 4).
_FROZEN_INPUTS = {"BatchNormalization": (3, 4)}


class OnnxModule(torch.nn.Module):
    def __init__(self, model: onnx.ModelProto):
        super().__init__()
        self.model = model
        self.graph = model.graph
        frozen = {n.input[i] for n in self.graph.node for op, idx in _FROZEN_INPUTS.items() if n.op_type == op for i in idx}
        self.params = torch.nn.ParameterDict()
        self.consts = {}
        self.key = {}
        for t in self.graph.initializer:
            a = numpy_helper.to_array(t)
            if a.dtype == np.float32 and t.name not in frozen:
                k = f"p{len(self.key)}"
                self.key[t.name] = k
                self.params[k] = torch.nn.Parameter(torch.from_numpy(a.copy()))
            else:
                self.consts[t.name] = torch.from_numpy(a.copy())
        self.input_name = self.graph.input[0].name
        self.output_name = self.graph.output[0].name

    def value(self, env, name):
        if name in env:
            return env[name]
        if name in self.key:
            return self.params[self.key[name]]
        return self.consts[name]

    def node_index(self, tensor):
        """Index of the node that writes `tensor` (a cut point of the graph)."""
        return next(i for i, n in enumerate(self.graph.node) if tensor in n.output)

    def forward(self, x, start=None, stop=None):
        """The graph's output for input x; with `start`, x is the value of that tensor and only the nodes after
        it run (the trainable top); with `stop`, the value of that tensor is returned (the frozen bottom)."""
        env = {start or self.input_name: x}
        first = self.node_index(start) + 1 if start else 0
        for n in self.graph.node[first:]:
            a = {at.name: onnx.helper.get_attribute_value(at) for at in n.attribute}
            ins = [self.value(env, i) if i else None for i in n.input]
            op = n.op_type
            if op == "Conv":
                pads = list(a.get("pads", [0, 0, 0, 0]))
                inp = ins[0]
                if pads[0] != pads[2] or pads[1] != pads[3]:
                    inp = F.pad(inp, (pads[1], pads[3], pads[0], pads[2]))
                    pad = 0
                else:
                    pad = (pads[0], pads[1])
                y = F.conv2d(inp, ins[1], ins[2] if len(ins) > 2 else None, stride=tuple(a.get("strides", [1, 1])),
                             padding=pad, dilation=tuple(a.get("dilations", [1, 1])), groups=a.get("group", 1))
            elif op == "PRelu":
                y = torch.where(ins[0] >= 0, ins[0], ins[0] * ins[1])
            elif op == "Add":
                y = ins[0] + ins[1]
            elif op == "Mul":
                y = ins[0] * ins[1]
            elif op == "Relu":
                y = F.relu(ins[0])
            elif op == "Sigmoid":
                y = torch.sigmoid(ins[0])
            elif op == "GlobalAveragePool":
                y = ins[0].mean(dim=(2, 3), keepdim=True)
            elif op == "Constant":
                y = torch.from_numpy(numpy_helper.to_array(a["value"]).copy())
            elif op == "Shape":
                y = torch.tensor(list(ins[0].shape), dtype=torch.int64)
            elif op == "Gather":
                y = torch.index_select(ins[0], a.get("axis", 0), ins[1].reshape(-1).long())
                if ins[1].dim() == 0:
                    y = y.squeeze(a.get("axis", 0))
            elif op == "Unsqueeze":
                y = ins[0]
                for ax in sorted(a["axes"]):
                    y = y.unsqueeze(ax)
            elif op == "Concat":
                y = torch.cat([i.reshape(-1) if i.dim() == 0 else i for i in ins], dim=a.get("axis", 0))
            elif op == "Reshape":
                shape = [int(v) for v in ins[1].reshape(-1).tolist()]
                shape = [ins[0].shape[i] if v == 0 else v for i, v in enumerate(shape)]
                # The MiniFASNets were exported with a batch of one written into their flatten: keep the batch.
                if len(shape) == 2 and shape[0] == 1 and shape[1] == -1:
                    shape = [ins[0].shape[0], -1]
                y = ins[0].reshape(shape)
            elif op == "MatMul":
                y = torch.matmul(ins[0], ins[1])
            elif op == "BatchNormalization":
                y = F.batch_norm(ins[0], ins[3], ins[4], ins[1], ins[2], training=False, eps=a.get("epsilon", 1e-5))
            else:
                raise NotImplementedError(f"ONNX op {op}")
            env[n.output[0]] = y
            if stop is not None and n.output[0] == stop:
                return y
        return env[self.output_name]

    def export(self, path: str) -> None:
        """Writes the graph with the trained initializer values (same nodes, names, opset)."""
        out = copy.deepcopy(self.model)
        for t in out.graph.initializer:
            if t.name in self.key:
                arr = self.params[self.key[t.name]].detach().cpu().numpy().astype(np.float32)
                t.CopyFrom(numpy_helper.from_array(arr, t.name))
        onnx.checker.check_model(out)
        onnx.save(out, path)
