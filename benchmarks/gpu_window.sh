#!/usr/bin/env bash
# One GPU window (issue 79), the command a lent GPU runs once: gpu-check on gpu_node's shapes, then gpu-pack at its
# LSTM (k = 4) and at its longest prompts (k = 2). Six files under $OUT, the log among them. Only torch, transformers,
# numpy, pandas and pyyaml are needed (the GPU image's). On the CPU at tiny shapes: OUT=dir bash $0 --tiny
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
step check gpu-check --config config/gpu_node.yaml --budget-s 240
step "pack lstm" gpu-pack --shape lstm --k 4 --steps 150
step "pack longest" gpu-pack --shape longest --k 2 --steps 40
