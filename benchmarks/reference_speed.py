"""Benchmark: the machine's speed this hour, on a fixed workload, so that a time measured today can be set beside one
measured on another day (this 2-core machine is shared and its speed drifts by tens of percent).

    python benchmarks/reference_speed.py --label "before the default run"   # appends to results/reference_speed.json

The workload never changes (changing it starts a new file): on one thread, 200 training steps of the default config's
GPT-2 shape (64 wide, 3 layers, 2 heads, 41 points of d = 5 as 82 tokens, batch 64, AdamW, float32) and 20 float64 matrix
products of 1024 × 1024 in numpy. Each is timed as the best of 3 rounds; the entry records both, with the date, the
commit and the label. A run's speed is the ratio of its seconds to the first entry's (the file's reference).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import time
from datetime import datetime, timezone
from pathlib import Path

for variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):  # one thread, set before numpy loads
    os.environ[variable] = "1"

import numpy as np  # noqa: E402
import torch  # noqa: E402
from transformers import GPT2Config, GPT2Model  # noqa: E402

OUT = Path(__file__).parent / "results" / "reference_speed.json"
STEPS, MATMULS, ROUNDS = 200, 20, 3


def best_of(work) -> float:
    """The best of ROUNDS timings of ``work()``, in seconds."""
    times = []
    for _ in range(ROUNDS):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return min(times)


def gpt2_steps() -> None:
    """STEPS AdamW steps of a 64-wide, 3-layer GPT-2 on a fixed batch of 64 sequences of 82 tokens (41 points; d = 5 read in)."""
    torch.manual_seed(0)
    config = GPT2Config(n_embd=64, n_layer=3, n_head=2, n_positions=82, vocab_size=1, bos_token_id=0, eos_token_id=0,
                        resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)
    body, read_in, read_out = GPT2Model(config), torch.nn.Linear(5, 64), torch.nn.Linear(64, 1)
    parameters = [*body.parameters(), *read_in.parameters(), *read_out.parameters()]
    optimiser = torch.optim.AdamW(parameters, lr=1e-4)
    xs, ys = torch.randn(64, 82, 5), torch.randn(64, 82)  # (B, 2K, d), (B, 2K)
    for _ in range(STEPS):
        hidden = body(inputs_embeds=read_in(xs)).last_hidden_state  # (B, 2K, 64)
        loss = (read_out(hidden).squeeze(-1) - ys).pow(2).mean()
        optimiser.zero_grad(set_to_none=True)
        loss.backward()
        optimiser.step()


def numpy_matmuls() -> None:
    a, b = np.random.default_rng(0).standard_normal((2, 1024, 1024))
    for _ in range(MATMULS):
        a @ b


def commit() -> str:
    result = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                            cwd=Path(__file__).parent)
    return result.stdout.strip() or "unknown"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--label", required=True, help="when it ran, e.g. 'before the default run'")
    args = parser.parse_args()
    torch.set_num_threads(1)
    entry = {
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "commit": commit(),
        "label": args.label,
        "gpt2_200_steps_s": round(best_of(gpt2_steps), 3),
        "numpy_20_matmuls_s": round(best_of(numpy_matmuls), 3),
        "torch": torch.__version__,
        "numpy": np.__version__,
    }
    entries = json.loads(OUT.read_text()) if OUT.exists() else []
    reference = (entries or [entry])[0]
    entry["speed_vs_reference"] = {  # > 1: slower than the file's first entry
        key: round(entry[key] / reference[key], 3) for key in ("gpt2_200_steps_s", "numpy_20_matmuls_s")}
    OUT.write_text(json.dumps(entries + [entry], indent=1) + "\n")
    print(json.dumps(entry, indent=1))


if __name__ == "__main__":
    main()
