"""TF32 emulated on the CPU (``iclab.fit.tf32``): the rounding by hand and against an independent formulation, which
products it rounds, and a training step and gpu-check's agreement step under it."""

import numpy as np
import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode

from iclab.errors import UsageError
from iclab.fit import tf32
from iclab.fit.tf32 import ROUNDED_FACTORS, emulated_tf32, round_to_tf32

ULP = 2.0**-10  # TF32's unit in the last place at 1


def rounded(*values: float) -> list[float]:
    return round_to_tf32(torch.tensor(values, dtype=torch.float32)).tolist()


def test_tf32_rounds_to_nearest_with_ties_away_from_zero_by_hand():
    """At 1 a TF32 unit is 2⁻¹⁰: 1 + 2⁻¹² (kept exactly by float32) rounds down to 1; 1 + 3·2⁻¹² up to 1 + 2⁻¹⁰; the
    tie 1 + 2⁻¹¹ goes away from zero to 1 + 2⁻¹⁰ (nearest-even and truncation give 1), and so does its negative; a
    TF32 value stays. Past TF32's largest finite value (2¹²⁸ − 2¹¹⁷) float32's largest rounds to infinity; inf and NaN
    pass."""
    assert torch.tensor(1 + 2**-12, dtype=torch.float32).item() == 1 + 2**-12
    assert rounded(1 + 2**-12, 1 + 3 * 2**-12, 1 + 2**-11, -(1 + 2**-11), 1 + ULP, 3 + 2**-11) == [
        1.0, 1 + ULP, 1 + ULP, -(1 + ULP), 1 + ULP, 3.0]  # 3 + 2⁻¹¹ lies below 3's half unit (2⁻¹⁰)
    largest = float(np.finfo(np.float32).max)
    out = rounded(largest, float("inf"), float("-inf"), float("nan"))
    assert out[:3] == [float("inf"), float("inf"), float("-inf")] and np.isnan(out[3])
    with pytest.raises(TypeError, match="float32"):
        round_to_tf32(torch.ones(2, dtype=torch.float64))


def test_the_rounding_matches_an_independent_one_on_random_values_and_ties():
    """numpy's frexp: x = m·2ᵉ with 0.5 ≤ |m| < 1, so TF32 keeps m to 11 bits: sign(m)·⌊|m|·2¹¹ + ½⌋ / 2¹¹ (half away
    from zero), on 100,000 values over 60 binades, and 1,000 exact ties."""
    rng = np.random.default_rng(0)
    values = (rng.standard_normal(100_000) * 2.0 ** rng.integers(-30, 30, 100_000)).astype(np.float32)
    kept = (rng.integers(1 << 10, 1 << 11, 1000) * 2 + 1).astype(np.float64)  # 12 bits ending in 1: a tie at 11
    ties = np.float32(kept / 2**12 * 2.0 ** rng.integers(-10, 10, 1000)) * rng.choice([-1, 1], 1000).astype(np.float32)
    x = np.concatenate([values, ties])
    m, e = np.frexp(x.astype(np.float64))
    expected = np.sign(m) * np.floor(np.abs(m) * 2**11 + 0.5) / 2**11 * 2.0**e
    np.testing.assert_array_equal(round_to_tf32(torch.from_numpy(x)).numpy(), expected.astype(np.float32))


def test_products_round_their_factors_where_the_card_would_and_keep_the_added_term():
    """A 4 × 4 of 1 + 2⁻¹² times ones: float32 gives 4 + 2⁻¹⁰, TF32 4 (each factor 1). Rounded: mm, bmm, addmm and
    baddbmm, whose added term 1 + 2⁻¹² stays float32 (5 + 2⁻¹², not 5), and both factors (1 + 2⁻¹² times itself:
    4, where rounding one factor gives 4 + 2⁻¹⁰ and neither 4 + 2⁻⁹), at M = 2 too. Not rounded, as on the card: a
    matrix-vector product (N = 1, by mm and by a bmm whose K = 8 is not its N), N = 6 or an inner dimension of 3 (rows
    not 16-byte aligned), a vector-matrix product (M = 1), a float64 product."""
    a, ones = torch.full((4, 4), 1 + 2**-12), torch.ones(4, 4)
    added = torch.full((4, 4), 1 + 2**-12)
    assert torch.mm(a, ones)[0, 0].item() == 4 + ULP
    with emulated_tf32():
        assert torch.mm(a, ones)[0, 0].item() == 4.0
        assert torch.bmm(a[None], ones[None])[0, 0, 0].item() == 4.0
        assert (a @ ones)[0, 0].item() == 4.0
        assert torch.addmm(added, a, ones)[0, 0].item() == 5 + 2**-12
        assert torch.baddbmm(added[None], a[None], ones[None])[0, 0, 0].item() == 5 + 2**-12
        assert torch.mm(a, a)[0, 0].item() == 4.0
        assert torch.addmm(added, a, a)[0, 0].item() == 5 + 2**-12
        assert torch.baddbmm(added[None], a[None], a[None])[0, 0, 0].item() == 5 + 2**-12
        assert torch.mm(a[:2], ones)[0, 0].item() == 4.0
        assert torch.mm(a, ones[:, :1])[0, 0].item() == 4 + ULP
        assert torch.bmm(torch.full((1, 4, 8), 1 + 2**-12), torch.ones(1, 8, 1))[0, 0, 0].item() == 8 + 2**-9
        assert torch.mm(a, torch.ones(4, 6))[0, 0].item() == 4 + ULP
        assert torch.mm(a[:1], ones)[0, 0].item() == 4 + ULP
        assert torch.mm(a[:, :3], ones[:3])[0, 0].item() == 3 + 3 * 2**-12
        assert torch.mm(a.double(), ones.double())[0, 0].item() == 4 + ULP
    assert torch.mm(a, ones)[0, 0].item() == 4 + ULP  # the mode ends with its block


class MatrixOps(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.ops = set()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.ops.add(func)
        return func(*args, **(kwargs or {}))


@pytest.mark.parametrize("spec", [
    {"name": "gpt2", "n_embd": 16, "n_layer": 2, "n_head": 2, "activation": "gelu", "n_points": 6},
    {"name": "lstm", "hidden": 8, "n_layer": 2}, {"name": "lsa"}, {"name": "ltb"}])
def test_every_product_a_training_step_dispatches_is_rounded_or_named_as_left_in_float32(spec):
    """Forward and backward of each family's model: every op of a matrix product (mm, matmul, linear, dot, …) is one
    the emulation rounds, or a matrix-vector product, attention's fused kernel or the LSTM's fused RNN, which the
    module's note names as left in float32. A torch whose models dispatch another product fails here."""
    from iclab.models import build_model

    torch.manual_seed(0)
    model = build_model(spec, 3)
    recorder = MatrixOps()
    with recorder:
        (model(torch.randn(4, 6, 3), torch.randn(4, 6)) ** 2).mean().backward()
    names = {str(op) for op in recorder.ops}
    products = {name for name in names if any(word in name for word in ("mm", "matmul", "linear", "dot", "mv"))}
    matrix_vector = {"aten.mv.default", "aten.dot.default"}  # cuBLAS's gemv and dot: no tensor core (N = 1)
    left_in_float32 = {name for name in products if "scaled_dot_product" in name or "rnn" in name} | (
        products & matrix_vector)
    assert products - left_in_float32 <= {str(op) for op in ROUNDED_FACTORS}
    assert products & {str(op) for op in ROUNDED_FACTORS}


def test_a_cpu_training_step_with_tf32_rounds_forward_and_backward_and_refuses_compile(monkeypatch):
    """gpu-check's one-step agreement on the CPU: the TF32 step's products round in the forward (grad enabled) and
    in the backward (grad disabled), and its gradient differs from float32's by about TF32's rounding (1e-5 to 1e-2
    relative, where float32's own is 0). Training with train.compile too is refused on the CPU, naming both keys."""
    from iclab.compute import gpu_check
    from iclab.store.jobs import TrainJob
    from iclab.tasks.linear import LinearTask

    phases, real = [], tf32.round_to_tf32
    monkeypatch.setattr(tf32, "round_to_tf32", lambda x: phases.append(torch.is_grad_enabled()) or real(x))
    job = TrainJob.from_dict({
        "task": LinearTask(d=3, n_points=6, beta_star=(1.0, 0.0, -1.0), psi=1.0, sigma=0.5).to_dict(),
        "model": {"name": "gpt2", "n_embd": 16, "n_layer": 2, "n_head": 2, "activation": "gelu", "n_points": 6},
        "train": {"steps": 2, "batch_size": 4, "lr": 1e-3}, "seed": 0})
    torch.manual_seed(0)
    state = gpu_check.build_model(job.model, 3).state_dict()
    prompts = torch.randn(4, 6, 3), torch.randn(4, 6)
    _, float32 = gpu_check.loss_and_gradient(job, state, prompts, torch.device("cpu"))
    assert not phases
    _, emulated = gpu_check.loss_and_gradient(gpu_check.with_train(job, tf32=True), state, prompts,
                                              torch.device("cpu"))
    assert True in phases and False in phases
    assert 1e-5 < float(torch.linalg.vector_norm(emulated - float32) / torch.linalg.vector_norm(float32)) < 1e-2
    from iclab.fit.sgd import train

    with pytest.raises(UsageError, match="train.compile.*train.tf32|train.tf32.*train.compile"):
        train(gpu_check.with_train(job, tf32=True, compile=True))
