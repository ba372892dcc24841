"""The CPU's TF32 emulation (``iclab.fit.tf32``) against the H100's one-step TF32 row (issue 97).

    PYTHONPATH=src python benchmarks/tf32_emulation.py   # writes benchmarks/results/tf32_emulation.json (~3 min)

gpu-check's agreement step at gpu_node's longest GPT-2 (single_index's: 12 layers, width 256, 257 points, 8 prompts):
the CPU's float32 loss and gradient from fixed weights and batch, then the same step with TF32 emulated, in the
emulation as built and in the variants it was chosen from (rounding to nearest even, truncation, every product
rounded, attention's batched products rounded). Each row gives the relative error of the loss and of the gradient
against float32, beside the H100's row of 2026-11-28 (``gpu_h100_2026-11-28/gpu_agreement_*.csv``). That run's
backward ran outside TF32 (gpu-check's agreement before issue 97), so the rows comparable to it round the forward
only; the last row rounds the backward too, as training does and as gpu-check now does.
"""

from __future__ import annotations

import contextlib
import csv
import json
from pathlib import Path

import torch
from torch.nn.attention import SDPBackend, sdpa_kernel

from iclab.atomic import write_text
from iclab.compute import gpu_check
from iclab.fit import tf32

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "tf32_emulation.json"
H100 = ROOT / "benchmarks" / "results" / "gpu_h100_2026-11-28" / "gpu_agreement_nvidia_h100_80gb_hbm3.csv"


def nearest_even(x: torch.Tensor) -> torch.Tensor:
    bits = x.contiguous().view(torch.int32)
    odd = (bits >> tf32.DROPPED_BITS) & 1  # the last kept bit: a tie goes to the even neighbour
    return ((bits + tf32.HALF_UNIT - 1 + odd) & tf32.KEPT).view(torch.float32)


def truncated(x: torch.Tensor) -> torch.Tensor:
    return (x.contiguous().view(torch.int32) & tf32.KEPT).view(torch.float32)


BUILT = tf32.rounds_on_the_card  # the rule as built (the variants patch the module's name)
VARIANTS = {  # name: (rounding, which products round, backward rounded too, attention through SDPA's math path)
    "as built, forward only (as the H100 row ran)": (tf32.round_to_tf32, tf32.rounds_on_the_card, False, False),
    "nearest even, forward only": (nearest_even, tf32.rounds_on_the_card, False, False),
    "truncation, forward only": (truncated, tf32.rounds_on_the_card, False, False),
    "as built but every product rounded (read-in K = 17, read-out N = 1), forward only":
        (tf32.round_to_tf32, lambda a, b: a.dtype == b.dtype == torch.float32, False, False),
    "as built but attention's products rounded too (SDPA's math path), forward only":
        (tf32.round_to_tf32, lambda a, b: BUILT(a, b) or (a.dim() == 3 and a.dtype == torch.float32), False, True),
    "as built, forward and backward (a training step; gpu-check since issue 97)":
        (tf32.round_to_tf32, tf32.rounds_on_the_card, True, False),
}


def step(job, state, prompts, backward_rounded: bool, math_attention: bool) -> tuple[float, torch.Tensor]:
    """gpu_check.loss_and_gradient on the CPU, its backward inside or outside the emulation; attention fused or
    through SDPA's math path (whose two products are bmm's, so that the emulation sees them)."""
    if backward_rounded:
        return gpu_check.loss_and_gradient(job, state, prompts, torch.device("cpu"))
    model = gpu_check.build_model(job.model, gpu_check.task_from_dict(job.task).d)
    model.load_state_dict(state)
    attention = sdpa_kernel(SDPBackend.MATH) if math_attention else contextlib.nullcontext()
    with attention, tf32.emulated_tf32():
        loss = gpu_check.prompt_loss(model, *prompts, job.train.loss_positions)
    loss.backward()
    return loss.item(), torch.cat([p.grad.reshape(-1) for p in model.parameters()]).double()


def h100_row() -> dict[str, float]:
    with open(H100, newline="") as f:
        row = next(r for r in csv.DictReader(f) if r["numerics"] == "tf32" and '"family":"gpt2"' in r["key"])
    return {"loss_rel_error": float(row["loss_rel_error"]), "grad_rel_error": float(row["grad_rel_error"])}


def main() -> None:
    shape = gpu_check.longest([s for s in gpu_check.tier_shapes(ROOT / "config" / "gpu_node.yaml")
                               if s.job.model["name"] == "gpt2"])
    job = gpu_check.with_train(shape.job, batch_size=gpu_check.AGREEMENT_PROMPTS, precision="float32", tf32=False)
    torch.manual_seed(0)
    state = gpu_check.build_model(job.model, gpu_check.task_from_dict(job.task).d).state_dict()
    batch = gpu_check.batch_at(job.train, gpu_check.task_from_dict(job.task), 0, 0, None)
    prompts = torch.from_numpy(batch.xs), torch.from_numpy(batch.ys)
    reference_loss, reference = gpu_check.loss_and_gradient(job, state, prompts, torch.device("cpu"))
    rows = {}
    for name, (rounding, rule, backward, math_attention) in VARIANTS.items():
        with contextlib.ExitStack() as patches:
            for attribute, value in (("round_to_tf32", rounding), ("rounds_on_the_card", rule)):
                original = getattr(tf32, attribute)
                setattr(tf32, attribute, value)
                patches.callback(setattr, tf32, attribute, original)
            loss, gradient = step(gpu_check.with_train(job, tf32=True), state, prompts, backward, math_attention)
        rows[name] = {"loss_rel_error": abs(loss - reference_loss) / abs(reference_loss),
                      "grad_rel_error": float(torch.linalg.vector_norm(gradient - reference)
                                              / torch.linalg.vector_norm(reference))}
        print(name, rows[name], flush=True)
    h100 = h100_row()
    built = rows["as built, forward only (as the H100 row ran)"]
    result = {"shape": json.loads(gpu_check.cluster.step_key(job.to_dict())), "h100_tf32_row": h100,
              "cpu_emulated": rows,
              "as_built_over_h100": {key: built[key] / h100[key] for key in h100}}
    write_text(OUT, json.dumps(result, indent=1, ensure_ascii=False) + "\n")
    print(json.dumps(result["as_built_over_h100"]))


if __name__ == "__main__":
    main()
