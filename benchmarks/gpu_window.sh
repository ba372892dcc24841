#!/usr/bin/env bash
# One GPU window (issues 79, 97, 99), the command a lent GPU runs once, within 5 minutes: the GPU backlog first
# (docs/gpu_node.md, "GPU backlog": kernel time, TF32 agreement and rounding, batched agreement and steps, ~85 s), then
# gpu-check on gpu_node's shapes (~150 s on the H100). gpu-pack's two rows are measured (H100 and H200) and left out. Six files under $OUT,
# the log among them. Only torch, transformers, numpy, pandas and pyyaml are needed (the GPU image's). On the CPU at
# tiny shapes: OUT=dir bash $0 --tiny
set -u
export PYTHONPATH=src HF_HUB_OFFLINE=1
python=${PYTHON:-python3}
tiny=${1:-}
log=$OUT/logs.txt
step() {
  local name=$1 start
  shift
  start=$(date +%s)
  echo "== $name" >>"$log"
  "$python" -m iclab "$@" --out-dir "$OUT" $tiny >>"$log" 2>&1
  echo "$name: rc $? in $(( $(date +%s) - start )) s" >>"$log"
}
step backlog gpu-backlog --config config/gpu_node.yaml
step check gpu-check --config config/gpu_node.yaml --budget-s 150
