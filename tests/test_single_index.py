"""Single-index tasks, the two-stage transformer and the test-prompt-only baselines (Oko et al. 2024)."""

import itertools
import math
from types import SimpleNamespace

import numpy as np
import pytest
import torch
import yaml
from conftest import REPO
from numpy.polynomial import hermite_e

from iclab.learners import prompt_only, tuning
from iclab.learners.baselines import BASELINES
from iclab.fit import two_stage
from iclab.fit.configs import chunks
from iclab.models.two_stage import TwoStageTransformer
from iclab.tasks.base import STAGE1_STREAM, STAGE2_STREAM
from iclab.tasks.samplers import SAMPLERS, batch_generator, sample
from iclab.tasks.samplers.single_index import hermite_normalised
from iclab.tasks.single_index import SingleIndexTask


def test_hermite_polynomials_are_orthonormal_under_the_gaussian():
    """Gauss–Hermite quadrature (weight e^{−z²/2}, exact for degree ≤ 2·60 − 1) of hᵢhⱼ."""
    nodes, weights = hermite_e.hermegauss(60)
    values = hermite_normalised(torch.as_tensor(nodes), 8).numpy()  # (60, 9)
    gram = values.T @ (weights[:, None] * values) / math.sqrt(2 * math.pi)
    np.testing.assert_allclose(gram, np.eye(9), atol=1e-10)
    # and they are Heᵢ/√(i!) (numpy's probabilists' Hermite series)
    for i in range(9):
        expected = hermite_e.hermeval(nodes, np.eye(9)[i]) / math.sqrt(math.factorial(i))
        np.testing.assert_allclose(values[:, i], expected, rtol=1e-9, atol=1e-9)


def test_single_index_prompts_have_their_stated_law():
    task = SingleIndexTask(d=6, r=2, n_points=3, q=2, p=3, sigma=0.5)
    batch = sample(task, 200_000, batch_generator(0, 0, 0))
    basis = task.subspace()
    np.testing.assert_allclose(basis.T @ basis, np.eye(2), atol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(batch.betas, axis=1), 1.0, atol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(batch.betas @ basis, axis=1), 1.0, atol=1e-12)  # β ∈ V
    ys, index = batch.ys.ravel(), np.einsum("bkd,bd->bk", batch.xs, batch.betas).ravel()
    assert abs(np.mean(ys**2) - (1 + 0.25)) < 0.03  # Σcᵢ² = 1, plus σ²
    assert abs(np.mean(ys)) < 0.01  # no degree-0 component
    assert abs(np.mean(ys * index)) < 0.01  # information exponent 2: no linear component
    first, again = (sample(task, 5, batch_generator(1, 0, 0)) for _ in range(2))  # a pure function of (seed, step)
    np.testing.assert_array_equal(first.ys, again.ys)
    assert not np.allclose(first.ys, sample(task, 5, batch_generator(1, 0, 1)).ys)


def test_two_stage_predictions_follow_the_formula_for_every_prefix():
    torch.manual_seed(0)
    model = TwoStageTransformer(d=3, width=4).double()
    with torch.no_grad():
        for p in model.parameters():
            p.normal_()
    xs, ys = torch.randn(2, 5, 3, dtype=torch.float64), torch.randn(2, 5, dtype=torch.float64)
    w, b, gamma = (p.detach().numpy() for p in (model.weight, model.bias, model.gamma))
    phi = np.maximum(xs.numpy() @ w.T + b, 0)  # (2, 5, 4)
    expected = np.zeros((2, 5))
    for k in range(1, 5):
        z = (ys.numpy()[:, :k, None] * phi[:, :k]).mean(axis=1)  # (2, 4)
        expected[:, k] = np.einsum("bm,mn,bn->b", z, gamma, phi[:, k])
    with torch.no_grad():
        np.testing.assert_allclose(model(xs, ys).numpy(), expected, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(model(xs, ys, last_only=True)[:, 0].numpy(), expected[:, -1], rtol=1e-10)


def stage_prompts(task, seed, stream, total, chunk):
    """The prompts of a stage (``total`` of them from ``stream``), regenerated chunk by chunk."""
    parts = [
        sample(task, size, batch_generator(seed, stream, i)) for i, size in enumerate(chunks(total, chunk))
    ]
    return np.concatenate([p.xs for p in parts]), np.concatenate([p.ys for p in parts])


def test_stage2_is_the_closed_form_ridge_solution():
    task = SingleIndexTask(d=4, r=2, n_points=7)
    cfg = two_stage.TwoStageConfig(t1=64, t2=700, ridge=0.05, chunk=256)
    model, diagnostics = two_stage.fit({"width": 5}, task, cfg, seed=3, job_hash="test")
    xs, ys = stage_prompts(task, 3, STAGE2_STREAM, cfg.t2, cfg.chunk)
    w, b = model.weight.detach().double().numpy(), model.bias.detach().double().numpy()
    phi = np.maximum(xs @ w.T + b, 0)  # (T, K, m)
    z = (ys[:, :-1, None] * phi[:, :-1]).mean(axis=1)  # (T, m)
    features = np.einsum("tm,tn->tmn", z, phi[:, -1]).reshape(len(xs), -1)  # (T, m²): vec(z φᵀ)
    t, p = features.shape
    stacked = np.vstack([features / math.sqrt(t), math.sqrt(cfg.ridge) * np.eye(p)])  # ridge as least squares
    target = np.concatenate([ys[:, -1] / math.sqrt(t), np.zeros(p)])
    expected = np.linalg.lstsq(stacked, target, rcond=None)[0].reshape(5, 5)
    np.testing.assert_allclose(model.gamma.detach().double().numpy(), expected, rtol=1e-4, atol=1e-6)
    # its training risk: the mean squared error of the fitted Γ over the stage-2 prompts
    risk = np.mean((features @ expected.ravel() - ys[:, -1]) ** 2)
    assert float(diagnostics.stage2_train_risk) == pytest.approx(risk, rel=1e-6)


@pytest.mark.parametrize("blocks", [1, 4, 8, 20])
def test_block_upper_gram_completes_to_the_full_product(blocks):
    """Two chunks accumulated block-upper, then mirrored: AᵀA of numpy (n = 13 not a multiple of the blocks; more
    blocks than columns leaves some empty)."""
    gen = torch.Generator().manual_seed(1)
    chunks = [torch.randn(rows, 13, generator=gen, dtype=torch.float64) for rows in (9, 4)]
    gram = torch.zeros(13, 13, dtype=torch.float64)
    for features in chunks:
        two_stage.add_block_upper_gram(gram, features, blocks)
    a = np.vstack([c.numpy() for c in chunks])
    np.testing.assert_allclose(two_stage.symmetric_from_upper(gram).numpy(), a.T @ a, rtol=1e-13, atol=1e-13)


def test_stage1_is_one_gradient_step_with_weight_decay_by_hand():
    """W₁ = W₀ − η(∇L̂ + λW₀), rows back on the sphere, with ηλ ≠ 1 (the initialisation survives);
    ∇L̂ by hand: ŷ = zᵀΓφ(x_q), z = mean_i yᵢφ(xᵢ), φ = ReLU(W·), so ∂ŷ/∂wⱼ = (Γφ_q)ⱼ·mean_i yᵢ1[wⱼ·xᵢ>0]xᵢ
    + (Γᵀz)ⱼ·1[wⱼ·x_q>0]x_q."""
    task = SingleIndexTask(d=4, r=2, n_points=6)
    cfg = two_stage.TwoStageConfig(t1=300, t2=0, ridge=1.0, eta=20.0, weight_decay=0.02, chunk=128)  # ηλ = 0.4
    initial = two_stage.initial_model(task, 6, seed=5)
    w0, gamma = initial.weight.detach().numpy(), initial.gamma.detach().numpy()  # (m, d), (m, m)
    xs, ys = stage_prompts(task, 5, STAGE1_STREAM, cfg.t1, cfg.chunk)
    context, query, y_ctx, y_q = xs[:, :-1], xs[:, -1], ys[:, :-1], ys[:, -1]
    pre_ctx, pre_q = context @ w0.T, query @ w0.T  # (T, n, m), (T, m)
    z = (y_ctx[..., None] * np.maximum(pre_ctx, 0)).mean(axis=1)  # (T, m)
    phi_q = np.maximum(pre_q, 0)  # (T, m)
    residual = np.einsum("tm,mn,tn->t", z, gamma, phi_q) - y_q  # (T,)
    dz = np.einsum("tn,tnm,tnd->tmd", y_ctx, pre_ctx > 0, context) / context.shape[1]  # ∂zⱼ/∂wⱼ: (T, m, d)
    dphi = (pre_q > 0)[..., None] * query[:, None, :]  # ∂φⱼ/∂wⱼ: (T, m, d)
    dy = (phi_q @ gamma.T)[..., None] * dz + (z @ gamma)[..., None] * dphi  # (T, m, d)
    gradient = np.mean(2 * residual[:, None, None] * dy, axis=0)  # (m, d)
    step = w0 - cfg.eta * (gradient + cfg.weight_decay * w0)
    expected = step / np.linalg.norm(step, axis=1, keepdims=True)
    model, _ = two_stage.fit({"width": 6}, task, cfg, seed=5, job_hash="test")
    np.testing.assert_allclose(model.weight.detach().numpy(), expected, rtol=1e-5, atol=1e-6)
    assert np.abs(expected - w0).max() > 0.2  # the gradient moved the rows


def test_tuned_predictor_takes_the_best_candidate_at_every_position(monkeypatch):
    """Candidate g predicts y + (g − best[k]) at position k: the held-out choice must be best[k],
    so the tuned predictions are the labels themselves; positions where every candidate is NaN stay NaN."""
    best = np.array([0, 2, 1, 3, 0, 2])
    offsets = np.arange(4)[:, None] - best[None, :]  # (G, K)

    def grid(xs, ys, chosen=None):
        out = ys[None] + offsets[:, None, :].astype(float)  # (G, B, K)
        out[:, :, 0] = np.nan
        return out

    rng = np.random.default_rng(0)
    toy = lambda task, n, gen, **kw: SimpleNamespace(xs=np.zeros((n, 6, 2)), ys=rng.normal(size=(n, 6)))  # noqa: E731
    monkeypatch.setitem(SAMPLERS, SimpleNamespace, toy)  # a toy task family: its held-out prompts
    predict = prompt_only.tuned_predictor(SimpleNamespace(), grid, "toy")
    ys = rng.normal(size=(3, 6))
    predictions = predict(np.zeros((3, 6, 2)), ys)
    assert np.isnan(predictions[:, 0]).all()
    np.testing.assert_allclose(predictions[:, 1:], ys[:, 1:], rtol=0, atol=1e-12)


@pytest.mark.parametrize("holdout_prompts", [None, 5])
def test_each_tuned_baseline_tunes_on_the_held_out_prompts_it_is_given(monkeypatch, holdout_prompts):
    """krr, the two-layer net and random-features ridge sample HOLDOUT_PROMPTS held-out prompts, or the number
    their ``holdout_prompts`` option gives (what a smoke run caps)."""
    task = SingleIndexTask(d=3, r=2, n_points=4)
    asked = []
    draw = SAMPLERS[SingleIndexTask]
    counted = lambda task, n, gen, **kw: asked.append(n) or draw(task, n, gen, **kw)  # noqa: E731
    monkeypatch.setitem(SAMPLERS, SingleIndexTask, counted)
    options = {} if holdout_prompts is None else {"holdout_prompts": holdout_prompts}
    for name in tuning.TUNED:
        extra = {"width": 8} if name == "random_features_ridge" else {}
        BASELINES[name](task, **extra, **options)
    expected = tuning.HOLDOUT_PROMPTS if holdout_prompts is None else holdout_prompts
    assert asked == [expected] * len(tuning.TUNED)


def test_all_queries_loss_is_the_mean_of_the_last_query_losses_over_every_choice_of_query():
    """Hand-built: move each point to the end of the prompt in turn and take the paper's loss."""
    task = SingleIndexTask(d=5, r=2, n_points=6)
    model = two_stage.initial_model(task, 7, seed=2)
    batch = sample(task, 3, batch_generator(0, 0, 0))
    xs, ys = torch.from_numpy(batch.xs), torch.from_numpy(batch.ys)
    k = xs.shape[1]
    expected = torch.zeros_like(model.weight)
    for query in range(k):
        order = [i for i in range(k) if i != query] + [query]
        expected += two_stage.stage1_gradient_sum(model, xs[:, order], ys[:, order], "last") / k
    got = two_stage.stage1_gradient_sum(model, xs, ys, "all")
    torch.testing.assert_close(got, expected, rtol=1e-10, atol=1e-14)
    with pytest.raises(ValueError, match="stage1_queries='first'.*allowed"):
        two_stage.TwoStageConfig(t1=1, t2=0, ridge=1.0, stage1_queries="first")


@pytest.mark.parametrize("queries", ["last", "all"])
def test_stage1_recovers_the_subspace_on_a_tiny_instance(queries):
    task = SingleIndexTask(d=8, r=2, n_points=33)
    cfg = two_stage.TwoStageConfig(t1=4096, t2=0, ridge=1.0, stage1_queries=queries)
    model, diagnostics = two_stage.fit({"width": 32}, task, cfg, seed=0, job_hash="test")
    assert diagnostics.principal_cosines.min() > 0.8
    assert diagnostics.subspace_energy > 2 * task.r / task.d
    initial = two_stage.initial_model(task, 32, seed=0).weight.detach().numpy()
    before, _ = two_stage.subspace_recovery(initial, task.subspace())
    assert before.min() < 0.6  # random rows do not span V


def test_subspace_recovery_on_hand_built_weights():
    basis = np.eye(5)[:, :2]
    inside = np.array([[1.0, 0, 0, 0, 0], [0, 2.0, 0, 0, 0], [1.0, 1.0, 0, 0, 0]])
    cosines, energy = two_stage.subspace_recovery(inside, basis)
    np.testing.assert_allclose(cosines, [1.0, 1.0])
    assert energy == pytest.approx(1.0)
    outside = np.array([[0, 0, 1.0, 0, 0], [0, 0, 0, 3.0, 0], [0, 0, 0, 0, 1.0]])
    cosines, energy = two_stage.subspace_recovery(outside, basis)
    np.testing.assert_allclose(cosines, [0.0, 0.0], atol=1e-12)
    assert energy == pytest.approx(0.0)
    # a zero row (a neuron stage 1 never moved) has no direction: the mean is over the other rows
    _, energy = two_stage.subspace_recovery(np.vstack([inside[:1], np.zeros(5), outside[:1]]), basis)
    assert energy == pytest.approx(0.5)


def test_two_stage_fit_resumes_from_its_checkpoint(tmp_path, monkeypatch):
    task = SingleIndexTask(d=4, r=1, n_points=9)
    cfg = two_stage.TwoStageConfig(t1=300, t2=300, ridge=0.1, chunk=64)
    reference, _ = two_stage.fit({"width": 4}, task, cfg, seed=1, job_hash="job")
    real, calls = two_stage.prompts, []

    def crashing(*args):
        calls.append(args)
        if len(calls) == 8:  # stage 2, third chunk
            raise KeyboardInterrupt
        return real(*args)

    monkeypatch.setattr(two_stage, "prompts", crashing)
    checkpoint = tmp_path / "job.pt"
    with pytest.raises(KeyboardInterrupt):
        two_stage.fit({"width": 4}, task, cfg, seed=1, job_hash="job", checkpoint=checkpoint, checkpoint_every=1)
    monkeypatch.setattr(two_stage, "prompts", real)
    resumed, _ = two_stage.fit({"width": 4}, task, cfg, seed=1, job_hash="job", checkpoint=checkpoint)
    for name, value in reference.state_dict().items():
        torch.testing.assert_close(resumed.state_dict()[name], value, rtol=0, atol=0)


def test_kernel_ridge_prefix_predictions_equal_per_prefix_solves():
    gen = torch.Generator().manual_seed(0)
    xs, ys = (
        torch.randn(3, 7, 4, generator=gen, dtype=torch.float64),
        torch.randn(3, 7, generator=gen, dtype=torch.float64),
    )
    h, lam = 0.7, 0.1
    fast = prompt_only.krr_prefix_predictions(xs, ys, h, lam).numpy()
    x, y = xs.numpy(), ys.numpy()
    for b in range(3):
        assert fast[b, 0] == 0.0
        for k in range(1, 7):
            sq = ((x[b, :k, None] - x[b, None, :k]) ** 2).sum(-1)
            gram = np.exp(-sq / (2 * h * 4))
            cross = np.exp(-((x[b, :k] - x[b, k]) ** 2).sum(-1) / (2 * h * 4))
            expected = cross @ np.linalg.solve(gram + lam * np.eye(k), y[b, :k])
            assert fast[b, k] == pytest.approx(expected, rel=1e-9, abs=1e-12)
    # the tuning grid (kernel computed once per bandwidth) holds the same predictions, bandwidth-major
    grid = prompt_only.krr_grid(x, y)
    for g, (h, lam) in enumerate(itertools.product(prompt_only.KRR_BANDWIDTHS, prompt_only.KRR_PENALTIES)):
        np.testing.assert_allclose(grid[g], prompt_only.krr_prefix_predictions(xs, ys, h, lam).numpy(), rtol=1e-12)


def test_two_layer_network_gradient_steps_match_autograd(monkeypatch):
    monkeypatch.setattr(prompt_only, "NET_CHECKPOINTS", (0, 1, 3))
    gen = torch.Generator().manual_seed(0)
    xs, ys, query = (
        torch.randn(2, 6, 3, generator=gen),
        torch.randn(2, 6, generator=gen),
        torch.randn(2, 3, generator=gen),
    )
    w0, b0 = torch.randn(prompt_only.NET_WIDTH, 3, generator=gen), torch.rand(prompt_only.NET_WIDTH, generator=gen)
    readouts = prompt_only.fit_two_layer_nets(xs, ys, query, w0, b0, lr=0.2)
    scale = 1 / math.sqrt(prompt_only.NET_WIDTH)
    for b in range(2):  # one network, plain autograd
        params = [
            w0.clone().requires_grad_(),
            b0.clone().requires_grad_(),
            torch.zeros(prompt_only.NET_WIDTH, requires_grad=True),
        ]
        net = lambda x: scale * torch.relu(x @ params[0].T + params[1]) @ params[2]
        seen = []
        for step in range(4):
            if step in (0, 1, 3):
                seen.append(net(query[b]).item())
            loss = ((net(xs[b]) - ys[b]) ** 2).mean()
            grads = torch.autograd.grad(loss, params)
            with torch.no_grad():
                for p, g in zip(params, grads):
                    p -= 0.2 * g
        np.testing.assert_allclose(readouts[:, b], seen, rtol=1e-4, atol=1e-6)
    assert readouts[0].tolist() == [0.0, 0.0]  # a = 0: step 0 is the zero predictor


def test_tuned_baselines_never_see_the_label_they_predict():
    task = SingleIndexTask(d=3, r=1, n_points=9)
    batch = sample(task, 4, batch_generator(7, 1, 0))
    for make in (prompt_only.krr, prompt_only.two_layer_net):
        predict = make(task)
        base = predict(batch.xs, batch.ys)
        for k in (2, 8):
            changed = batch.ys.copy()
            changed[:, k:] += 5.0
            np.testing.assert_allclose(predict(batch.xs, changed)[:, : k + 1], base[:, : k + 1], equal_nan=True)


def test_gpt2_trains_on_prompts_of_the_test_length_and_the_two_stage_model_on_pretraining_prompts():
    from iclab.experiments.single_index.experiment import sweep

    cfg = yaml.safe_load((REPO / "config" / "paper.yaml").read_text())["experiments"]["single_index"]
    for point in sweep(cfg):
        gpt2, two_stage = (next(m for m in point.models if m["name"] == name) for name in ("gpt2", "two_stage"))
        assert point.task_for(gpt2) == point.eval_task and point.eval_task["n_points"] == cfg["n_test"] + 1
        d = point.task["d"]
        assert point.task_for(two_stage)["n_points"] == cfg["n_pretrain_scale"] * d ** cfg["n_pretrain_power"] + 1


def test_grids_computed_for_the_chosen_entries_only_hold_the_same_bits():
    """The evaluation set computes only the entry chosen at each position (one learning rate, GD up to the chosen
    step; the kernels and penalties chosen): those values equal the full grid's bit for bit, the rest are NaN."""
    task = SingleIndexTask(d=3, r=1, n_points=9)
    batch = sample(task, 5, batch_generator(4, 1, 0))
    positions = prompt_only.net_positions(task.n_points)
    grids = {
        "krr": (prompt_only.krr_grid, 25),
        "random features": (lambda xs, ys, chosen=None: prompt_only.random_features_grid(xs, ys, 8, chosen=chosen), 5),
        "two-layer net": (lambda xs, ys, chosen=None: prompt_only.two_layer_net_grid(xs, ys, positions, chosen=chosen),
                          len(prompt_only.NET_LEARNING_RATES) * len(prompt_only.NET_CHECKPOINTS)),
    }
    rng = np.random.default_rng(0)
    for name, (grid, size) in grids.items():
        full = grid(batch.xs, batch.ys)
        chosen = rng.integers(0, size, size=task.n_points)
        chosen[positions[0]], chosen[positions[1]] = 0, size - 1  # the zero predictor; the last step of the last lr
        part = grid(batch.xs, batch.ys, chosen=chosen)
        picked = np.take_along_axis(part, chosen[None, None, :], axis=0)[0]
        np.testing.assert_array_equal(picked, np.take_along_axis(full, chosen[None, None, :], axis=0)[0], err_msg=name)
        if name == "two-layer net":  # at each position: the chosen learning rate, its steps up to the chosen one
            steps = len(prompt_only.NET_CHECKPOINTS)
            for k in positions:
                kept = np.arange(chosen[k] // steps * steps, chosen[k] + 1)
                assert np.isnan(np.delete(part[:, :, k], kept, axis=0)).all(), k
        else:  # entries chosen nowhere are not computed
            assert np.isnan(np.delete(part, np.unique(chosen), axis=0)).all(), name
        assert np.isnan(part).sum() > np.isnan(full).sum(), name


def test_kernel_grids_do_not_depend_on_how_prompts_are_chunked(monkeypatch):
    """Kernel ridge and random-feature ridge factorise each prompt alone: chunks of 3 prompts (a ragged last one
    included) and of 1 give the same bits as one chunk of all 7 (KERNEL_CHUNK is chosen for speed only)."""
    task = SingleIndexTask(d=3, r=1, n_points=9)
    batch = sample(task, 7, batch_generator(3, 1, 0))
    for grid in (prompt_only.krr_grid, lambda xs, ys: prompt_only.random_features_grid(xs, ys, width=8)):
        outputs = []
        for size in (7, 3, 1):
            monkeypatch.setattr(prompt_only, "KERNEL_CHUNK", size)
            outputs.append(grid(batch.xs, batch.ys))
        assert all(np.array_equal(outputs[0], other) for other in outputs[1:])
