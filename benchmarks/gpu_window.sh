#!/usr/bin/env bash
# One GPU window (issues 79, 97, 99, 100, 101), the command a lent GPU runs once, within 5 minutes: the GPU backlog
# first (docs/gpu_node.md, "GPU backlog": kernel time, TF32 agreement and rounding, batched agreement and steps,
# ~85 s), then gpu-check (~150 s on the H100), both on config/paper.yaml's shapes: every shape at the papers' size,
# gpu_node's two among them (issue 101 narrowed gpu_node to the day's experiments; the rows were counted on gpu_node's
# former shapes, the same shapes in other group sizes). gpu-pack of models alone is measured (three shapes over the
# H100 and the H200) and left out. Six files under $OUT, the log among them. Only torch, transformers, numpy, pandas
# and pyyaml are needed (the GPU image's). On the CPU at tiny shapes: OUT=dir bash $0 --tiny
# The rows that wait for the next card: ROWS=pack bash $0 runs them instead, ~280 s counted by hand: the captured steps
# of gpu_node's batched groups against their eager ones (backlog row 9: the day's groups, zfb_figure1's 34 GPT-2s and
# ltb_table1's two of 7; ~90 s), then gpu-pack on paper.yaml (each row's three launches wait 20 s for their start
# barrier, plus their steps) of two batched groups (zfb_figure1's 10 GPT-2s at 101 points twice, ~100 s: ~1.4× the
# FLOPs of the 18 at 41 points counted before) and the LSTM's four copies under NVIDIA's MPS daemon (~90 s; where the
# image has none, its file says so without training). Four files under $OUT, the log among them.
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
  step pack_batched gpu-pack --config config/paper.yaml --shape batched --k 2 --steps 30
  step pack_lstm_mps gpu-pack --config config/paper.yaml --shape lstm --k 4 --steps 60 --mps
else
  step backlog gpu-backlog --config config/paper.yaml
  step check gpu-check --config config/paper.yaml --budget-s 150
fi
