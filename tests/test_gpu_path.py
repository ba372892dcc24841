"""The GPU path, checked on the CPU (issue 78): what one training step of every shape a GPU tier trains dispatches,
read by a torch dispatch mode. On a card these defects were seen by ``benchmarks/gpu_defects.py``
(docs/measurements.md#first-gpu-run): a host sync a forward pass, GELU's pow in float32 under bf16, the LSTM in
float16, attention gradients that differ from run to run under warn-only determinism."""

import importlib
import logging
import os
import warnings
from pathlib import Path

import pytest
import torch
from conftest import REPO
from torch import nn
from torch.utils._python_dispatch import TorchDispatchMode

from iclab.fit.sgd import CUBLAS_WORKSPACES, batch_at, deterministic_kernels, make_optimizer, prompt_loss, train_step
from iclab.compute.gpu_check import tier_shapes, tiny
from iclab.models import build_model
from iclab.models import lstm
from iclab.models.gpt2 import GPT2Learner
from iclab.tasks import task_from_dict

# Ops that wait for the device: a tensor read on the host (item, bool(tensor)), or an output whose size depends on
# the data.
HOST_SYNCS = {"_local_scalar_dense", "item", "is_nonzero", "nonzero", "masked_select", "unique", "_unique2",
              "unique_consecutive", "equal", "allclose", "_assert_async"}
# The ops CUDA's autocast runs in float32 ("CUDA Ops that can autocast to float32", torch's AMP documentation), as
# aten names, less the allowed: layer norm and softmax (the read-out and the loss run float32 by design, outside the
# forward traced here).
CUDA_AUTOCAST_FLOAT32 = {
    "pow", "acos", "asin", "cosh", "erfinv", "exp", "expm1", "log", "log10", "log2", "log1p", "reciprocal", "rsqrt",
    "sinh", "tan", "softplus", "group_norm", "norm", "linalg_vector_norm", "cosine_similarity", "cdist", "pdist",
    "dist", "renorm", "prod", "cumprod", "cumsum", "sum", "log_softmax", "_log_softmax", "mse_loss", "l1_loss",
    "smooth_l1_loss", "huber_loss", "nll_loss", "kl_div", "binary_cross_entropy_with_logits", "logsumexp",
}
ALLOWED_FLOAT32 = {"native_layer_norm", "layer_norm", "_softmax", "softmax"}
TIERS = ("config/gpu_node.yaml", "config/paper.yaml")


class OpNames(TorchDispatchMode):
    """The aten op names dispatched (autocast's casts already applied), with the dtypes of their float inputs."""

    def __init__(self) -> None:
        super().__init__()
        self.names: set[str] = set()
        self.inputs: dict[str, set[torch.dtype]] = {}

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        name = func.overloadpacket.__name__
        self.names.add(name)
        self.inputs.setdefault(name, set()).update(
            a.dtype for a in args if isinstance(a, torch.Tensor) and a.is_floating_point())
        return func(*args, **(kwargs or {}))


def tier_steps():
    """One tiny job per model family, prompt layout and activation that a GPU tier trains."""
    jobs = {}
    for config in TIERS:
        for shape in tier_shapes(REPO / config):
            model = shape.job.model
            key = (model["name"], model.get("prompt_format"), model.get("activation"), model.get("mlp", True))
            jobs.setdefault(key, tiny(shape).job)
    return [pytest.param(job, id="-".join(str(k) for k in key)) for key, job in jobs.items()]


def traced_step(job):
    """One training step of ``job`` on the CPU under its numerics, and its model's forward pass alone under bf16
    autocast: the op names of each."""
    cfg, task = job.train, task_from_dict(job.task)
    torch.manual_seed(0)
    model = build_model(job.model, task.d)
    optimizer = make_optimizer(cfg, model.parameters())
    batch = batch_at(cfg, task, 0, 0, None)
    xs, ys = torch.from_numpy(batch.xs), torch.from_numpy(batch.ys)  # (B, K, d), (B, K)
    train_step(model, model, optimizer, cfg, (xs, ys), task.n_points, cfg.lr)  # lazy initialisations first
    step, forward = OpNames(), OpNames()
    with step:
        train_step(model, model, optimizer, cfg, (xs, ys), task.n_points, cfg.lr)
    with forward, torch.autocast("cpu", torch.bfloat16):
        model(xs, ys)
    return step.names, forward.names


@pytest.mark.parametrize("job", tier_steps())
def test_a_gpu_tiers_training_step_syncs_nothing(job):
    """No op of the step reads the device on the host (transformers' causal mask did, once a forward pass)."""
    step, _ = traced_step(job)
    assert step & HOST_SYNCS == set()


@pytest.mark.parametrize("job", tier_steps())
def test_a_gpu_tiers_forward_runs_no_op_that_cuda_autocast_keeps_float32(job):
    """No op of the forward pass is one that CUDA's autocast runs in float32, beyond LayerNorm and softmax (gelu_new's
    pow was: the GPU tiers' GPT-2s now run gelu_pytorch_tanh)."""
    _, forward = traced_step(job)
    assert (forward & CUDA_AUTOCAST_FLOAT32) - ALLOWED_FLOAT32 == set()


def test_gpt2_blocks_call_sdpa_causal_without_a_mask_and_the_last_with_its_read_tokens_mask(monkeypatch):
    """Issue 100: under SDPA every block but the last calls torch's SDPA with ``is_causal`` and no materialized mask
    (the path on which SDPA may pick a fused causal kernel); the last block, which reads the 4 x tokens of 8 only,
    with the mask of what each sees, by hand: x token k (position 2k) sees positions 0 … 2k."""
    calls, real = [], torch.nn.functional.scaled_dot_product_attention

    def recording(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, **kwargs):
        calls.append((attn_mask, is_causal, query.shape[2], key.shape[2]))
        return real(query, key, value, attn_mask=attn_mask, dropout_p=dropout_p, is_causal=is_causal, **kwargs)

    monkeypatch.setattr(torch.nn.functional, "scaled_dot_product_attention", recording)
    model = GPT2Learner(2, 4, n_embd=8, n_layer=3, n_head=1, activation="gelu_pytorch_tanh")
    model(torch.randn(3, 4, 2), torch.randn(3, 4))
    assert [(mask is None, causal, queries, keys) for mask, causal, queries, keys in calls] == [
        (True, True, 8, 8), (True, True, 8, 8), (False, False, 4, 8)]
    sees = torch.tensor([[position <= 2 * k for position in range(8)] for k in range(4)])
    assert calls[-1][0].shape == (1, 1, 4, 8) and torch.equal(calls[-1][0][0, 0] == 0, sees)


@pytest.mark.parametrize("positions", ["all", "last"])
def test_the_masked_loss_is_the_sliced_loss_and_reads_no_length_on_the_host(positions):
    """Issue 100: prompts of 6 points at their full length, 4 read. The loss masked by a 0-d length tensor equals
    the mean over the 3 positions with context (or the 4th point's error), value and gradients to float32 round-off,
    by hand from the model's predictions; the fill past the 4th point changes none of it; at 6 of 6 it is the
    unpadded loss; no op of it reads the device on the host."""
    from iclab.fit.sgd import masked_prompt_loss

    torch.manual_seed(0)
    model = GPT2Learner(2, 6, n_embd=8, n_layer=2, n_head=1, activation="gelu_pytorch_tanh")
    xs, ys = torch.randn(5, 6, 2), torch.randn(5, 6)
    refilled_xs, refilled_ys = xs.clone(), ys.clone()
    refilled_xs[:, 4:], refilled_ys[:, 4:] = 7.0, -3.0
    errors = (model(xs, ys) - ys).detach() ** 2  # (5, 6)
    by_hand = errors[:, 3].mean() if positions == "last" else errors[:, 1:4].mean()
    found = []
    for x, y in ((xs, ys), (refilled_xs, refilled_ys)):
        model.zero_grad(set_to_none=True)
        loss = masked_prompt_loss(model, x, y, positions, torch.tensor(4))
        loss.backward()
        found.append((loss.detach(), [p.grad.clone() for p in model.parameters()]))
    model.zero_grad(set_to_none=True)
    sliced = prompt_loss(model, xs, ys, positions, 4)
    sliced.backward()
    for loss, grads in found:  # the prompts as drawn, then refilled past the 4th point
        assert loss == pytest.approx(float(by_hand), rel=1e-6)
        for grad, reference in zip(grads, (p.grad for p in model.parameters())):
            torch.testing.assert_close(grad, reference, rtol=1e-5, atol=1e-6 * reference.abs().max().item())
    whole = masked_prompt_loss(model, xs, ys, positions, torch.tensor(6))
    assert whole.item() == pytest.approx(prompt_loss(model, xs, ys, positions).item(), rel=1e-6)
    names = OpNames()
    with names:
        masked_prompt_loss(model, xs, ys, positions, torch.tensor(4))
    assert names.names & HOST_SYNCS == set()


@pytest.mark.parametrize("job", tier_steps())
def test_a_captured_step_syncs_nothing_and_keeps_one_shape_across_the_curriculum(job):
    """train.capture's step (uncaptured on the CPU) for each family a GPU tier trains, under a curriculum of 3, 5, 7,
    9 points: every step's prompts at the task's full length, and no op that reads the device on the host across a
    stage change (steps 0–3: two stages)."""
    from dataclasses import replace

    from iclab.fit.capture import CapturedStep
    from iclab.fit.sgd import Alone, loss_points, masked_prompt_loss
    from iclab.tasks import LinearTask

    task = LinearTask(d=3, n_points=9, beta_star=(1.0, 0.0, -1.0), psi=1.0, sigma=0.5)
    model_spec = job.model | ({"n_points": 9} if "n_points" in job.model else {})
    cfg = replace(job.train, capture=True, schedule="constant", pad_points=None, batch_size=4,
                  curriculum={"dims": [1, 1], "points": [3, 2], "every": 2})
    torch.manual_seed(0)
    model = build_model(model_spec, task.d)
    step = CapturedStep(Alone(model), make_optimizer(cfg, model.parameters()), cfg,
                        lambda m, x, y, read: masked_prompt_loss(m, x, y, cfg.loss_positions, read), torch.device("cpu"),
                        record_steps=1)
    shapes, names = set(), OpNames()
    with names:
        for number in range(4):
            batch = batch_at(cfg, task, 0, number, None)
            shapes.add((batch.xs.shape, batch.ys.shape))
            step(torch.from_numpy(batch.xs), torch.from_numpy(batch.ys), loss_points(cfg, task, number, None))
    assert shapes == {((4, 9, 3), (4, 9))} and [loss_points(cfg, task, n, None) for n in range(4)] == [3, 3, 5, 5]
    assert names.names & HOST_SYNCS == set()


def test_the_step_trace_sees_a_host_sync_and_gelu_news_pow():
    """The trace's power to fail: a step that reads its loss on the host, and gelu_new, are caught."""
    model = GPT2Learner(2, 4, n_embd=8, n_layer=1, n_head=1, activation="gelu_new")
    xs, ys = torch.randn(3, 4, 2), torch.randn(3, 4)
    names = OpNames()
    with names:
        prompt_loss(model, xs, ys, "all").item()
    assert "_local_scalar_dense" in names.names and "pow" in names.names


def test_fused_gelu_matches_gelu_new_to_round_off_and_exact_gelu_does_not():
    """gelu_pytorch_tanh (the GPU tiers') and gelu_new (the paper's) compute the same function: from the same weights
    their predictions agree to float32 round-off, far closer than exact GELU's (a different function)."""
    torch.manual_seed(0)
    models = {act: GPT2Learner(3, 6, n_embd=32, n_layer=3, n_head=2, activation=act)
              for act in ("gelu_new", "gelu_pytorch_tanh", "gelu")}
    state = models["gelu_new"].state_dict()
    xs, ys = torch.randn(16, 6, 3), torch.randn(16, 6)
    with torch.no_grad():
        out = {act: (m.load_state_dict(state), m(xs, ys))[1] for act, m in models.items()}
    scale = out["gelu_new"].abs().max()
    fused = (out["gelu_pytorch_tanh"] - out["gelu_new"]).abs().max() / scale
    exact = (out["gelu"] - out["gelu_new"]).abs().max() / scale
    assert fused < 1e-5 and exact > 100 * fused, (fused, exact)


def test_cuda_training_is_deterministic_or_fails_and_the_opt_out_logs_the_op(monkeypatch, caplog):
    """On CUDA (the flags need no device to be set): deterministic algorithms that fail on an op without one (warn-only
    mode would let SDPA's backward pick its non-deterministic kernel); ``allow_nondeterministic`` runs warn-only and
    logs each such op once, other warnings passing through; every flag restored; nothing touched on the CPU."""
    monkeypatch.setenv("CUBLAS_WORKSPACE_CONFIG", CUBLAS_WORKSPACES[0])
    cudnn = torch.backends.cudnn
    monkeypatch.setattr(cudnn, "benchmark", True)
    with deterministic_kernels(torch.device("cpu")):
        assert cudnn.benchmark and not torch.are_deterministic_algorithms_enabled()
    with deterministic_kernels(torch.device("cuda")):
        assert not cudnn.benchmark and cudnn.deterministic
        assert torch.are_deterministic_algorithms_enabled() and not torch.is_deterministic_algorithms_warn_only_enabled()
    assert cudnn.benchmark and not cudnn.deterministic and not torch.are_deterministic_algorithms_enabled()
    message = "index_add_cuda_ does not have a deterministic implementation, but you set ..."
    with caplog.at_level(logging.WARNING), warnings.catch_warnings(record=True) as passed:
        warnings.simplefilter("always")
        with deterministic_kernels(torch.device("cuda"), allow_nondeterministic=True):
            assert torch.is_deterministic_algorithms_warn_only_enabled()
            for _ in range(2):
                warnings.warn(message)
            warnings.warn("an unrelated warning")
    logged = [r.getMessage() for r in caplog.records if "index_add_cuda_" in r.getMessage()]
    assert len(logged) == 1 and "train.allow_nondeterministic" in logged[0]
    assert [str(w.message) for w in passed] == ["an unrelated warning"]
    assert not torch.are_deterministic_algorithms_enabled()


def test_cuda_training_refuses_without_cublas_workspace_and_python_m_iclab_sets_it_at_start(monkeypatch):
    """cuBLAS reads its workspace setting when it makes its handle: set late (after gpu-check's first CUDA steps) it
    did nothing. Now the entry point sets it before any import of torch, and a CUDA training without it refuses."""
    from iclab.errors import UsageError

    monkeypatch.delenv("CUBLAS_WORKSPACE_CONFIG", raising=False)
    with pytest.raises(UsageError, match="CUBLAS_WORKSPACE_CONFIG"):
        with deterministic_kernels(torch.device("cuda")):
            pass
    assert "CUBLAS_WORKSPACE_CONFIG" not in os.environ  # refusing sets nothing
    import iclab.__main__

    importlib.reload(iclab.__main__)
    assert os.environ["CUBLAS_WORKSPACE_CONFIG"] in CUBLAS_WORKSPACES
    source = Path(iclab.__main__.__file__).read_text()
    assert source.index("CUBLAS_WORKSPACE_CONFIG") < source.index("def main")  # at import, not in a stage


# What this CPU runs a bf16 LSTM on, by torch's own test (issue 93): oneDNN's fused layer where oneDNN has bf16
# (AVX512 and later), torch's decomposed LSTM where it has not (plain AVX2), or where oneDNN is switched off.
CAPABILITY = torch.backends.cpu.get_cpu_capability()
ONEDNN_BF16 = bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())


def traced_recurrent_layer(monkeypatch, onednn: bool) -> tuple[OpNames, torch.Tensor]:
    """One recurrent layer (``lstm.recurrent``) under the CPU's bf16 autocast with oneDNN on or off: the ops it
    dispatched and its output."""
    monkeypatch.setattr(torch.backends.mkldnn, "enabled", onednn)
    torch.manual_seed(0)
    layer, state = nn.LSTM(8, 8, batch_first=True), torch.randn(4, 5, 8)  # state: (B, T, hidden)
    names = OpNames()
    with names, torch.autocast("cpu", torch.bfloat16):
        out = lstm.recurrent(layer, state)  # (B, T, hidden)
    return names, out


@pytest.mark.parametrize("onednn", [
    pytest.param(True, id=f"oneDNN-on-{CAPABILITY}-runs-{'oneDNN' if ONEDNN_BF16 else 'decomposed'}"),
    pytest.param(False, id=f"oneDNN-off-{CAPABILITY}-runs-decomposed")])
def test_lstm_recurrent_layers_under_cpu_bf16_autocast_run_the_path_torch_takes_on_this_cpu(monkeypatch, onednn):
    """Where oneDNN has bf16 and is on, its fused LSTM runs wholly in bf16 (states included: a bf16 output); elsewhere
    (AVX2, or oneDNN off: the forced case, run on every CPU) torch's decomposed LSTM runs its gate matmuls and
    activations in bf16 and carries the cell and hidden states in float32 (``tanh`` of the cell, a float32 output).
    The path expected is torch's (``_is_mkldnn_bf16_supported``), the one seen is the trace's, and
    ``lstm.recurrent_precision`` names it."""
    names, out = traced_recurrent_layer(monkeypatch, onednn)
    fused = onednn and ONEDNN_BF16
    if fused:
        assert names.inputs["mkldnn_rnn_layer"] == {torch.bfloat16} and out.dtype == torch.bfloat16, names.inputs
    else:
        assert "mkldnn_rnn_layer" not in names.names, names.inputs
        gates = {op: names.inputs[op] for op in ("mm", "addmm", "sigmoid_")}
        assert gates == dict.fromkeys(gates, {torch.bfloat16}), names.inputs
        assert names.inputs["tanh"] == {torch.float32} and out.dtype == torch.float32, names.inputs
    described = "bfloat16" if fused else "bfloat16 gates, float32 states"
    assert lstm.recurrent_precision(torch.device("cpu")) == described


@pytest.mark.parametrize("onednn", [True, False], ids=["oneDNN-on", "oneDNN-off"])
def test_lstm_recurrent_layers_run_float32_where_cuda_autocast_would_apply(monkeypatch, onednn):
    """Where CUDA's autocast would run cuDNN's LSTM in float16, the recurrent layers run autocast off in float32
    (``lstm.cuda_autocast`` stands in for a CUDA device here; on either CPU path)."""
    monkeypatch.setattr(lstm, "cuda_autocast", lambda state: True)
    names, out = traced_recurrent_layer(monkeypatch, onednn)
    floats = set().union(*names.inputs.values())
    assert floats == {torch.float32} and out.dtype == torch.float32, names.inputs
    assert lstm.recurrent_precision(torch.device("cuda")) == "float32"
    with pytest.raises(ValueError, match="known on cpu and cuda, not on xpu"):
        lstm.recurrent_precision(torch.device("xpu"))


class OnDevice:
    """Stands in for a tensor on a device this machine lacks: ``cuda_autocast`` reads only its device (the meta device
    will not do for CUDA: its type is "meta")."""

    def __init__(self, device: str):
        self.device = torch.device(device)


@pytest.mark.parametrize("state, cpu_on, cuda_on, expected", [
    (OnDevice("cuda"), False, True, True),
    (OnDevice("cuda"), False, False, False),
    (OnDevice("cuda"), True, False, False),  # only the CPU's autocast on
    (torch.zeros(1), True, False, False),  # a CPU tensor under the CPU's autocast
    (torch.zeros(1), False, True, False),  # a CPU tensor with CUDA's autocast on
    (OnDevice("xpu"), False, True, False),  # another accelerator's tensor with CUDA's autocast on
], ids=["cuda-under-cuda-autocast", "cuda-no-autocast", "cuda-under-cpu-autocast", "cpu-under-cpu-autocast",
        "cpu-under-cuda-autocast", "xpu-under-cuda-autocast"])
def test_cuda_autocast_is_true_only_for_a_cuda_tensor_under_cudas_autocast(state, cpu_on, cuda_on, expected):
    """By hand: reading the CPU's autocast state, or not the tensor's device, answers at least one case wrongly."""
    before = {device: torch.is_autocast_enabled(device) for device in ("cpu", "cuda")}
    try:
        torch.set_autocast_enabled("cpu", cpu_on)
        torch.set_autocast_enabled("cuda", cuda_on)
        assert lstm.cuda_autocast(state) is expected
    finally:
        for device, enabled in before.items():
            torch.set_autocast_enabled(device, enabled)
