"""Fine-tunes the engine's spoof models for a verdict the camera cannot move (issue 40).

Reads the windows extract-windows.ts wrote (each frame as taken and under seeded random captures, as the engine fed
them) and fine-tunes each named model's own ONNX graph (onnx_torch.py) with two terms:
  - distillation: the frozen model's softmax on the frame's canonical window (as taken) is the target for every
    capture of that frame: what the model knew about the frame, asked to survive a close-up, a roll, blur, dim
    light and noise, compression, white balance;
  - labels: binary cross-entropy of P(live) against the frame's label (class-balanced), so attacks degraded on
    purpose are taught to stay attacks and the teacher's own misses are corrected where the data says so.
Folds are grouped by source repository (greedy by frame count, fixed order): every fold's model is trained
without its repositories, so the evaluation scores each repository with a model that never saw it; the final
model is trained on all repositories with the same recipe. Fixed seeds; two threads.

  /usr/bin/python3 research/liveness/train/train.py --data var/liveness-train --out var/liveness-train/run \
      --models faceplugin-liveness,silent-face-v2,silent-face-v1se --folds 3 --steps 150 --top conv_45
"""
import argparse
import json
import os
import random
import sys
import time

import numpy as np
import onnx
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(__file__))
from onnx_torch import OnnxModule  # noqa: E402

# The upstream weights every run starts from (and distils from): the MiniFASNets' ONNX exports kept in
# models/vendor/silent-face/, fr_liveness as its npm package ships it (run.sh fetches and verifies it).
SOURCE_FILES = {
    "faceplugin-liveness": "var/liveness-train/upstream/fr_liveness.onnx",
    "silent-face-v2": "models/vendor/silent-face/MiniFASNetV2_2.7_80x80.onnx",
    "silent-face-v1se": "models/vendor/silent-face/MiniFASNetV1SE_4.0_80x80.onnx",
}


def load(data):
    meta = [json.loads(l) for l in open(os.path.join(data, "meta.jsonl"))]
    rows = [m for m in meta if "index" in m]
    specs = {m["name"]: m for m in json.load(open(os.path.join(data, "models.json")))}
    return rows, specs


def folds_of(rows, k):
    """Source repositories in k folds: largest first into the fold with the fewest frames (ties: lowest index)."""
    frames = {}
    for r in rows:
        if r["draw"] == 0 and r.get("kind", "full") == "full":
            frames[r["group"]] = frames.get(r["group"], 0) + 1
    fold, size = {}, [0] * k
    for g in sorted(frames, key=lambda g: (-frames[g], g)):
        i = min(range(k), key=lambda j: (size[j], j))
        fold[g] = i
        size[i] += frames[g]
    # Face crops (extract-windows.ts --with-crops) follow their repository's fold; a repository with crops only
    # joins the smallest fold. Full frames alone decide the folds, so they match a run without crops.
    for g in sorted({r["group"] for r in rows} - set(fold)):
        i = min(range(k), key=lambda j: (size[j], j))
        fold[g] = i
    return fold


def teacher_targets(teacher, X, rows):
    """The frozen model's softmax on each frame's canonical (as-taken) window, by frame key."""
    canon = [r for r in rows if r["draw"] == 0]
    out = {}
    with torch.no_grad():
        for i in range(0, len(canon), 128):
            part = canon[i:i + 128]
            x = torch.from_numpy(X[[r["index"] for r in part]].astype(np.float32))
            p = torch.softmax(teacher(x), 1)
            for r, q in zip(part, p):
                out[(r["dataset"], r["file"])] = q
    return out


# Where each model is cut (--top): the frozen bottom runs once per window and is cached, the top is fine-tuned.
# The whole graph (`all`) takes ~0.5 s per step on two quiet cores with channels-last windows, but overfits the
# training repositories (worse out of source than conv_45 at lr 3e-4, 1e-4 and 3e-5: results/train-liveness.md).
# Both MiniFASNets name their stages alike; fr_liveness (a MiniFASNetV1SE at 128x128 exported with numbered tensors)
# only has the last cut.
TOPS = {
    "conv_45": "/conv_4/model/model.5/Add_output_0",  # train conv_45, conv_5, conv_6 and the linear layers
    "conv_4": "/conv_34/project/conv/Conv_output_0",  # also the six 10x10 blocks of conv_4
    "conv_34": "/conv_3/model/model.3/Add_output_0",  # also the 20x20 -> 10x10 reduction
    "all": None,  # the whole graph (channels-last tensors: ~0.5 s per step of 64 on two quiet cores)
}
TOPS_BY_MODEL = {"faceplugin-liveness": {"conv_45": "524"}}


def top_of(name, stage):
    return TOPS_BY_MODEL.get(name, TOPS)[stage]


def bottoms(teacher, X, cut):
    """The frozen bottom's output for every window (float32, in X's order); the windows themselves for the whole graph."""
    if cut is None:
        return torch.from_numpy(X.astype(np.float32)).contiguous(memory_format=torch.channels_last)
    out = []
    with torch.no_grad():
        for i in range(0, len(X), 128):
            out.append(teacher(torch.from_numpy(X[i:i + 128].astype(np.float32)), stop=cut))
    return torch.cat(out)


def train_one(name, spec, H, cut, rows, targets, steps, batch, lr, seed, kd_weight):
    torch.manual_seed(seed)
    rng = random.Random(seed)
    student = OnnxModule(onnx.load(SOURCE_FILES[name]))
    student.train()
    top = student.node_index(cut) + 1 if cut is not None else 0
    used = {i for n in student.graph.node[top:] for i in n.input}
    opt = torch.optim.Adam([student.params[key] for init, key in student.key.items() if init in used], lr=lr)
    live_idx = spec["liveIndex"]
    usable = [r for r in rows if (r["dataset"], r["file"]) in targets]
    live = [r for r in usable if r["label"] == "live"]
    spoof = [r for r in usable if r["label"] == "spoof"]
    t0 = time.time()
    for step in range(steps):
        # Class-balanced batches: half live, half attacks, captures drawn uniformly.
        part = [rng.choice(live) for _ in range(batch // 2)] + [rng.choice(spoof) for _ in range(batch - batch // 2)]
        x = H[[r["index"] for r in part]]
        tgt = torch.stack([targets[(r["dataset"], r["file"])] for r in part])
        y_live = torch.tensor([1.0 if r["label"] == "live" else 0.0 for r in part])
        logits = student(x, start=cut)
        logp = F.log_softmax(logits, 1)
        kd = F.kl_div(logp, tgt, reduction="batchmean")
        p_live = logp[:, live_idx].exp().clamp(1e-6, 1 - 1e-6)
        lab = F.binary_cross_entropy(p_live, y_live)
        loss = kd_weight * kd + lab
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 20 == 0 or step == steps - 1:
            print(f"    {name} step {step + 1}/{steps}: kd {kd.item():.3f} label {lab.item():.3f} ({time.time() - t0:.0f} s)", flush=True)
    student.eval()
    return student


def fake_logits(net, H, cut, rows, live_idx):
    out = []
    with torch.no_grad():
        for i in range(0, len(rows), 256):
            p = torch.softmax(net(H[[r["index"] for r in rows[i:i + 256]]], start=cut), 1)[:, live_idx].clamp(1e-6, 1 - 1e-6)
            out.append(torch.log((1 - p) / p))
    return torch.cat(out).numpy()


def auc(spoof, live):
    """P(spoof score > live score), ties half."""
    s = np.sort(live)
    return float(np.mean([np.searchsorted(s, v, "left") + 0.5 * (np.searchsorted(s, v, "right") - np.searchsorted(s, v, "left")) for v in spoof]) / len(live))


def held_out_report(name, teacher, student, H, cut, rows, live_idx):
    """Out-of-fold check of one model alone: AUC as taken and over every capture, and how far a capture moves
    the fake logit from the same frame's canonical window (median |delta|), teacher vs student."""
    lines = []
    for label, net in (("frozen", teacher), ("fine-tuned", student)):
        z = fake_logits(net, H, cut, rows, live_idx)
        canon = {(r["dataset"], r["file"]): z[i] for i, r in enumerate(rows) if r["draw"] == 0}
        is_sp = np.array([r["label"] == "spoof" for r in rows])
        taken = np.array([r["draw"] == 0 for r in rows])
        moved = np.array([abs(z[i] - canon[(r["dataset"], r["file"])]) for i, r in enumerate(rows) if r["draw"] > 0 and (r["dataset"], r["file"]) in canon])
        lines.append(f"    {name} {label}: AUC as taken {auc(z[taken & is_sp], z[taken & ~is_sp]):.3f}, over captures {auc(z[~taken & is_sp], z[~taken & ~is_sp]):.3f}; median |capture - canonical| {np.median(moved):.2f}")
    print("\n".join(lines), flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default="var/liveness-train")
    ap.add_argument("--out", default="var/liveness-train/run")
    ap.add_argument("--models", default="faceplugin-liveness,silent-face-v2,silent-face-v1se")
    ap.add_argument("--folds", type=int, default=3)
    ap.add_argument("--steps", type=int, default=150)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--lr", type=float, default=3e-4)
    ap.add_argument("--kd", type=float, default=1.0)
    ap.add_argument("--seed", type=int, default=40)
    ap.add_argument("--top", default="conv_45", choices=sorted(TOPS), help="first stage fine-tuned (the rest is frozen)")
    ap.add_argument("--only", default="", help="comma list of folds to train (0..k-1, 'final'); default all")
    a = ap.parse_args()
    torch.set_num_threads(2)
    rows, specs = load(a.data)
    fold = folds_of(rows, a.folds)
    os.makedirs(a.out, exist_ok=True)
    # The windows the weights learn from: the engine must cut the same ones to score with them (evaluation.ts foldEngines).
    windows = {n: s.get("window", "shifted") for n, s in specs.items()}
    json.dump({"folds": a.folds, "groupFold": fold, "windows": windows, "args": vars(a)}, open(os.path.join(a.out, "folds.json"), "w"), indent=1)
    todo = [str(k) for k in range(a.folds)] + ["final"]
    if a.only:
        todo = [t for t in todo if t in a.only.split(",")]
    for name in a.models.split(","):
        spec = specs[name]
        S = spec["inputSize"]
        X = np.fromfile(os.path.join(a.data, f"{name}.u8"), dtype=np.uint8).reshape(-1, 3, S, S)
        teacher = OnnxModule(onnx.load(SOURCE_FILES[name])).eval()
        targets = teacher_targets(teacher, X, rows)
        t0 = time.time()
        H = bottoms(teacher, X, top_of(name, a.top))
        print(f"  {name}: frozen bottom of {len(H)} windows in {time.time() - t0:.0f} s", flush=True)
        for t in todo:
            train_rows = rows if t == "final" else [r for r in rows if fold[r["group"]] != int(t)]
            print(f"  {name} fold {t}: {len(train_rows)} windows from {len({r['group'] for r in train_rows})} repositories", flush=True)
            student = train_one(name, spec, H, top_of(name, a.top), train_rows, targets, a.steps, a.batch, a.lr, a.seed, a.kd)
            if t != "final":
                held_out_report(name, teacher, student, H, top_of(name, a.top), [r for r in rows if fold[r["group"]] == int(t)], spec["liveIndex"])
            d = os.path.join(a.out, f"fold{t}" if t != "final" else "final")
            os.makedirs(d, exist_ok=True)
            student.export(os.path.join(d, f"{name}.onnx"))


if __name__ == "__main__":
    main()
