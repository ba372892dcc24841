"""TF32 emulated on the CPU: what ``train.tf32: true`` computes where no tensor core is (issue 97).

On an Ampere or later card with TF32 allowed, cuBLAS's float32 matrix products round their two factors to TF32
(8 exponent bits, 10 explicit mantissa bits), multiply them exactly and accumulate in float32 (NVIDIA, "Accelerating
AI Training with NVIDIA TF32 Tensor Cores", 2020: "rounds FP32 inputs to TF32"). NVIDIA states neither the rounding
nor which products take the tensor cores. The rounding emulated here, ``round_to_tf32``, is CUTLASS's
``tfloat32_t(float)`` (``round_half_ulp_truncate``: half a TF32 unit in the last place added to the bits, the low 13
dropped), the PTX conversion ``cvt.rna.tf32.f32``: to nearest, ties away from zero. Which products round,
``rounds_on_the_card``, follows cuBLAS's 16-byte alignment of a tensor-op kernel's rows (N and K multiples of 4 in
float32) and leaves matrix-vector and vector-matrix products (N or M of 1) to its float32 kernels. Both are
inferred from one measurement, the H100's one-step TF32 row at single_index's GPT-2 (its forward only:
benchmarks/results/gpu_h100_2026-11-28). This emulation gives its loss error (3.10900e-6) to six digits and its
gradient error (1.7892e-4) to 0.1% (1.7910e-4). Rounding to nearest even gives 2.89e-6 and 1.7925e-4 (the loss
tells the two apart, the gradient barely), truncation 2.70e-5 and 6.22e-4, and rounding the read-in (K = 17) and
read-out (N = 1) products too 1.48e-5 and 4.01e-4 (benchmarks/results/tf32_emulation.json). The GPU backlog's
one-matmul rows (docs/gpu_node.md) will settle both, product by product.

``emulated_tf32`` applies it to every float32 ``mm``, ``addmm`` (HF's GPT-2 ``Conv1D``), ``bmm`` and ``baddbmm`` that
a training step dispatches, forward and backward; an ``addmm``'s added term stays float32, as cuBLAS's epilogue adds
it. Two parts are left in float32 because they dispatch no such product:
- attention: SDPA runs as one fused kernel. The card ran memory-efficient attention in every GPT-2 row, not cuBLAS,
  and the H100's row matches with attention unrounded (``tf32_emulation.json``'s variants);
- the LSTM's recurrent layers: oneDNN's fused RNN on the CPU. cuDNN's on the card may round them; that is not
  modelled, so emulated TF32 trains the LSTM's recurrence as float32 does.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import torch
from torch.utils._python_dispatch import TorchDispatchMode

DROPPED_BITS = 13  # float32's 23 explicit mantissa bits less TF32's 10
HALF_UNIT = 1 << (DROPPED_BITS - 1)  # half a TF32 unit in the last place, in float32's bit pattern
KEPT = -(1 << DROPPED_BITS)  # the int32 mask that keeps sign, exponent and the top 10 mantissa bits (0xFFFFE000)

aten = torch.ops.aten
# each rounded product's factors, by argument position: mm(a, b), addmm(c, a, b), bmm(a, b), baddbmm(c, a, b)
ROUNDED_FACTORS = {aten.mm.default: (0, 1), aten.addmm.default: (1, 2), aten.bmm.default: (0, 1),
                   aten.baddbmm.default: (1, 2)}


def round_to_tf32(x: torch.Tensor) -> torch.Tensor:
    """A float32 tensor's values rounded to TF32 (10 explicit mantissa bits) to nearest, ties away from zero
    (CUTLASS's ``round_half_ulp_truncate``, PTX's ``cvt.rna.tf32.f32``), kept as float32. Infinities and NaNs pass
    unchanged; a value past TF32's largest finite one becomes infinite, as the conversion without ``.satfinite``
    gives."""
    if x.dtype != torch.float32:
        raise TypeError(f"round_to_tf32: a float32 tensor is rounded, not {x.dtype}")
    bits = x.contiguous().view(torch.int32)  # sign-magnitude: adding to the low bits rounds the magnitude up
    rounded = ((bits + HALF_UNIT) & KEPT).view(torch.float32)
    return torch.where(torch.isfinite(x), rounded, x)


def rounds_on_the_card(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Whether the product a @ b ((…, M, K) @ (…, K, N)) runs on the tensor cores, its factors rounded: both
    float32, N and K multiples of 4 (rows aligned to 16 bytes; N = 1, a matrix-vector product, is not) and M above 1
    (a vector-matrix product is not)."""
    (m, k), n = a.shape[-2:], b.shape[-1]
    return a.dtype == b.dtype == torch.float32 and m > 1 and n % 4 == 0 and k % 4 == 0


class TF32Products(TorchDispatchMode):
    """Rounds both factors of each product of ``ROUNDED_FACTORS`` that ``rounds_on_the_card`` to TF32 before it
    runs; every other op runs as it is."""

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if func in ROUNDED_FACTORS:
            first, second = ROUNDED_FACTORS[func]
            if rounds_on_the_card(args[first], args[second]):
                args = tuple(round_to_tf32(arg) if at in (first, second) else arg for at, arg in enumerate(args))
        return func(*args, **(kwargs or {}))


@contextmanager
def emulated_tf32() -> Iterator[None]:
    """Float32 training steps on the CPU as TF32 tensor cores compute them (the module's note)."""
    with TF32Products():
        yield
