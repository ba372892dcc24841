#!/usr/bin/env bash
# One GPU window (issues 79, 97, 99), the command a lent GPU runs once, within 5 minutes: the GPU backlog first
# (docs/gpu_node.md, "GPU backlog": kernel time, TF32 agreement and rounding, batched agreement and steps, ~85 s), then
# gpu-check on gpu_node's shapes (~150 s on the H100). gpu-pack of models alone is measured (three shapes over the
# H100 and the H200) and left out. Six files under $OUT, the log among them. Only torch, transformers, numpy, pandas and pyyaml are
# needed (the GPU image's). On the CPU at tiny shapes: OUT=dir bash $0 --tiny
# The rows that wait for the next card (the window above is full): ROWS=pack bash $0 runs them instead, ~255 s
# counted by hand: the captured steps of each batched group against its eager ones (backlog row 9, ~90 s), then
# gpu-pack (each row's three launches wait 20 s for their start barrier, plus their steps) of two batched groups
# (zfb_figure1's 18 GPT-2s twice, ~75 s) and the LSTM's four copies under NVIDIA's MPS daemon (~90 s; where the image
# has none, its file says so without training). Four files under $OUT, the log among them.
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
if [ "${ROWS:-window}" = pack ]; then
  step capture gpu-backlog --config config/gpu_node.yaml --rows capture
  step pack_batched gpu-pack --config config/gpu_node.yaml --shape batched --k 2 --steps 30
  step pack_lstm_mps gpu-pack --config config/gpu_node.yaml --shape lstm --k 4 --steps 60 --mps
else
  step backlog gpu-backlog --config config/gpu_node.yaml
  step check gpu-check --config config/gpu_node.yaml --budget-s 150
fi
