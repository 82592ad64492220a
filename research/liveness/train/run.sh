#!/usr/bin/env bash
# `npm run train:liveness [-- <dataset dir>...]`: the liveness training stack end to end, from a fresh machine.
#   1. installs Debian's PyTorch on CPU (python3-torch 1.13, python3-onnx) when /usr/bin/python3 lacks it;
#   2. extracts every labelled full frame's spoof-model windows, as taken and under 14 seeded random captures
#      (extract-windows.ts; cached in var/liveness-train/ until the sets or the engine change: delete it to redo);
#   3. fine-tunes the MiniFASNets per fold (folds grouped by source repository) and on all repositories (train.py);
#   4. prints the out-of-source robustness report with each repository scored by its fold's models
#      (eval-robustness.ts --fold-models) and fits the fusion on those out-of-fold logits (fusion.json, --dry-run
#      unless SHIP=1).
# The service never runs any of it; shipping the final weights is described in docs/liveness-engine.md.
set -euo pipefail
cd "$(dirname "$0")/../../.."
PY=/usr/bin/python3
if ! "$PY" -c 'import torch, onnx' 2>/dev/null; then
  echo "train: installing python3-torch python3-onnx from Debian" >&2
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends python3-torch python3-onnx python3-numpy >/dev/null
fi
DIRS=("$@")
[[ ${#DIRS[@]} -gt 0 ]] || DIRS=(../shared/datasets/liveness ../shared/datasets/liveness-pool)
DATA=var/liveness-train
RUN=${RUN:-$DATA/run}
npx tsx models/prepare.ts >/dev/null
# fr_liveness's upstream weights, as its npm package ships them (the manifest now names the fine-tuned file).
UP=$DATA/upstream/fr_liveness.onnx
if [[ ! -s $UP ]]; then
  mkdir -p "$DATA/upstream" && tmp=$(mktemp -d)
  (cd "$tmp" && npm pack faceplugin-face-recognition-js@0.0.1 --silent >/dev/null && tar xzf ./*.tgz package/model/fr_liveness.onnx)
  mv "$tmp/package/model/fr_liveness.onnx" "$UP" && rm -rf "$tmp"
fi
echo "afa783b7e902fdfcf323a7240cac2a1c580c25314ea4161129dc1b0d100dc32d  $UP" | sha256sum -c --quiet
if [[ ! -s $DATA/meta.jsonl ]]; then
  nice -n 5 npx tsx research/liveness/train/extract-windows.ts "${DIRS[@]}" --draws 14 --out "$DATA"
fi
"$PY" research/liveness/train/train.py --data "$DATA" --out "$RUN" ${TRAIN_ARGS:-}
npx tsx research/liveness/eval-robustness.ts "${DIRS[@]}" --fold-models "$RUN" --cache "$RUN/eval-robustness.json"
FIT=(--fold-models "$RUN" --cache "$RUN/fusion-scores.json")
[[ ${SHIP:-0} == 1 ]] || FIT+=(--dry-run)
npx tsx research/liveness/fit-liveness-fusion.ts "${DIRS[@]}" "${FIT[@]}"
