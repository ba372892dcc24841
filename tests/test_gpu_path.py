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
from torch.utils._python_dispatch import TorchDispatchMode

from iclab.fit.sgd import CUBLAS_WORKSPACES, batch_at, deterministic_kernels, make_optimizer, prompt_loss, train_step
from iclab.compute.gpu_check import tier_shapes, tiny
from iclab.models import build_model
from iclab.models.gpt2 import GPT2Learner
from iclab.models.lstm import LSTMLearner
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


@pytest.mark.parametrize("on_cuda, dtype", [(False, torch.bfloat16), (True, torch.float32)])
def test_lstm_recurrent_layers_run_bf16_on_the_cpu_and_float32_under_cuda_autocast(monkeypatch, on_cuda, dtype):
    """Under bf16 autocast the CPU runs oneDNN's LSTM in bf16 (the default's numbers, unchanged); where CUDA's
    autocast would run cuDNN's in float16, the layers run autocast off in float32 (``lstm.cuda_autocast`` stands in
    for a CUDA device here)."""
    import iclab.models.lstm as lstm

    monkeypatch.setattr(lstm, "cuda_autocast", lambda state: on_cuda, raising=False)
    model = LSTMLearner(3, hidden=8, n_layer=2)
    names = OpNames()
    with names, torch.autocast("cpu", torch.bfloat16):
        model(torch.randn(4, 5, 3), torch.randn(4, 5))
    recurrent = {n for n in names.names if "rnn" in n or "lstm" in n}
    assert recurrent and all(names.inputs[n] == {dtype} for n in recurrent), names.inputs
