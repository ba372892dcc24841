"""Sequence learners (GPT-2, and the LSTM where it shares the contract): read-out positions, the
causal mask, per-layer states, the MLP removal, the curriculum, resume."""

import numpy as np
import pytest
import torch

from iclab.pipeline.evaluate import predict
from iclab.stats.intervals import mean_and_sem
from iclab.fit.sgd import curriculum_stage, train
from iclab.store.jobs import TrainJob
from iclab.models import build_model, numpy_predictor
from iclab.tasks import LinearTask
from iclab.tasks.samplers import train_batch

D, K, B = 3, 6, 4
SMALL = {"name": "gpt2", "n_points": K, "n_embd": 16, "n_layer": 2, "n_head": 2}
LSTM = {"name": "lstm", "hidden": 16, "n_layer": 2}
SEQUENCE_MODELS = {  # id → (spec, width of its states)
    "gpt2": (SMALL, SMALL["n_embd"]),
    "gpt2_token_matrix": (SMALL | {"prompt_format": "token_matrix"}, SMALL["n_embd"]),
    "lstm": (LSTM, LSTM["hidden"]),
}
PROBED = ["gpt2", "lstm"]  # the models with per-layer states


@pytest.fixture
def prompts():
    torch.manual_seed(0)
    return torch.randn(B, K, D), torch.randn(B, K)


@pytest.mark.parametrize("name", SEQUENCE_MODELS)
def test_predictions_see_their_query_and_earlier_labels_only(prompts, name):
    torch.manual_seed(1)
    model = build_model(SEQUENCE_MODELS[name][0], D).eval()
    xs, ys = prompts
    with torch.no_grad():
        base = model(xs, ys)
        for k in range(K):
            later_labels = ys.clone()
            later_labels[:, k:] += 10.0  # the label of position k and every later one
            np.testing.assert_allclose(model(xs, later_labels)[:, : k + 1], base[:, : k + 1], atol=1e-5)
            query = xs.clone()
            query[:, k] += 1.0  # the query itself must matter: predictions are read at x_k
            assert not torch.allclose(model(query, ys)[:, k], base[:, k])
            if k > 0:
                earlier = ys.clone()
                earlier[:, k - 1] += 10.0
                assert not torch.allclose(model(xs, earlier)[:, k], base[:, k])


@pytest.mark.parametrize("name", SEQUENCE_MODELS)
def test_final_query_path_equals_the_last_position(prompts, name):
    torch.manual_seed(2)
    model = build_model(SEQUENCE_MODELS[name][0], D).eval()
    with torch.no_grad():
        np.testing.assert_allclose(model(*prompts, last_only=True)[:, 0], model(*prompts)[:, -1], atol=1e-6)


@pytest.mark.parametrize("attention", ["sdpa", "eager"])
@pytest.mark.parametrize("variant", [{}, {"mlp": False}, {"n_layer": 1}, {"prompt_format": "token_matrix"}])
def test_predictions_and_gradients_are_transformers_forward_pass(prompts, variant, attention):
    """The last block runs at the read tokens only (``block_at``): predictions and parameter gradients equal
    those of transformers' whole forward pass read at the x tokens (token matrix: at the query, its label 0)."""
    from iclab.models.linear import tokens
    from iclab.models.prompts import interleave

    torch.manual_seed(5)
    model = build_model(SMALL | {"n_layer": 3} | variant, D)
    model.backbone.config._attn_implementation = attention
    xs, ys = prompts
    if variant.get("prompt_format") == "token_matrix":
        hidden = torch.cat([ys[:, :-1], torch.zeros_like(ys[:, -1:])], dim=1)
        states = model.backbone(inputs_embeds=model.read_in(tokens(xs, hidden))).last_hidden_state[:, -1:]
        ours = model(xs, ys, last_only=True)  # (B, 1)
    else:
        states = model.backbone(inputs_embeds=model.read_in(interleave(xs, ys))).last_hidden_state[:, 0::2]
        ours = model(xs, ys)  # (B, K)
    theirs = model.read_out(states)[..., 0]
    torch.testing.assert_close(ours, theirs, rtol=1e-5, atol=1e-6)
    ours_grad = torch.autograd.grad(ours.square().sum(), list(model.parameters()))
    theirs_grad = torch.autograd.grad(theirs.square().sum(), list(model.parameters()))
    for (name, _), a, b in zip(model.named_parameters(), ours_grad, theirs_grad):
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-6, msg=name)


@pytest.mark.parametrize("attention", ["sdpa", "eager"])
@pytest.mark.parametrize("variant", [{}, {"mlp": False}, {"n_layer": 1}])
def test_token_matrix_predictions_at_every_position_are_one_transformers_pass_per_prefix(prompts, variant, attention):
    """One pass of 2K tokens (``query_predictions``) gives, at every position k, the prediction and the parameter
    gradients of transformers' own forward pass over the prefix of k + 1 tokens whose last label is zeroed."""
    from iclab.models.linear import tokens

    torch.manual_seed(6)
    model = build_model(SMALL | {"n_layer": 3, "prompt_format": "token_matrix"} | variant, D)
    model.backbone.config._attn_implementation = attention
    xs, ys = prompts
    theirs = []
    for k in range(K):
        hidden = torch.cat([ys[:, :k], torch.zeros_like(ys[:, k : k + 1])], dim=1)  # (B, k+1)
        states = model.backbone(inputs_embeds=model.read_in(tokens(xs[:, : k + 1], hidden))).last_hidden_state
        theirs.append(model.read_out(states[:, -1])[:, 0])
    theirs = torch.stack(theirs, dim=1)  # (B, K)
    ours = model(xs, ys)
    torch.testing.assert_close(ours, theirs, rtol=1e-5, atol=1e-6)
    ours_grad = torch.autograd.grad(ours.square().sum(), list(model.parameters()))
    theirs_grad = torch.autograd.grad(theirs.square().sum(), list(model.parameters()))
    for (name, _), a, b in zip(model.named_parameters(), ours_grad, theirs_grad):
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-6, msg=name)


def test_gpt2_without_mlp_has_no_mlp_parameters_and_computes_attention_only():
    torch.manual_seed(3)
    with_mlp = build_model(SMALL, D)
    without = build_model(SMALL | {"mlp": False}, D)
    names = [name for name, _ in without.named_parameters()]
    assert not [n for n in names if ".mlp." in n or ".ln_2." in n]
    assert any(".mlp." in n for n, _ in with_mlp.named_parameters())
    assert not [n for n in names if "wte" in n], "no unused vocabulary table"
    block = without.backbone.h[0]
    h = torch.randn(B, 2 * K, 16)
    expected = h + block.attn(block.ln_1(h))[0]
    out = block(h)
    out = out[0] if isinstance(out, tuple) else out  # transformers 5 returns the hidden states alone
    np.testing.assert_allclose(out.detach(), expected.detach(), atol=1e-6)
    n_mlp = sum(p.numel() for n, p in with_mlp.named_parameters() if ".mlp." in n or ".ln_2." in n)
    assert sum(p.numel() for p in with_mlp.parameters()) - sum(p.numel() for p in without.parameters()) == n_mlp


@pytest.mark.parametrize(("mlp", "branches_per_block"), [(True, 2), (False, 1)])
def test_per_branch_init_scales_output_projections_by_the_residual_branches(mlp, branches_per_block):
    """Zhang, Wu, Bartlett 2024, Appendix I: std 0.02/√(2L) with MLPs, 0.02/√L without; 4096 weights per
    block estimate the std within ~1%, and the two candidates differ by 41%."""
    torch.manual_seed(4)
    spec = {"name": "gpt2", "n_points": K, "n_embd": 64, "n_layer": 4, "n_head": 2, "mlp": mlp}
    model = build_model(spec | {"residual_init": "per_branch"}, D)
    weights = torch.cat([block.attn.c_proj.weight.detach().flatten() for block in model.backbone.h])  # (4·64·64,)
    expected = 0.02 / np.sqrt(branches_per_block * spec["n_layer"])
    assert float(weights.std()) == pytest.approx(expected, rel=0.05)
    with pytest.raises(ValueError, match="residual_init.*allowed: transformers, per_branch"):
        build_model(spec | {"residual_init": "xavier"}, D)


def test_hidden_states_cover_every_layer_and_token(prompts):
    model = build_model(SMALL, D)
    states = model.hidden_states(*prompts)
    assert states.shape == (SMALL["n_layer"] + 1, B, 2 * K, SMALL["n_embd"])


def test_curriculum_schedule_and_batches():
    task = LinearTask(d=20, n_points=41, beta_star=(0.0,) * 20, psi=1.0, sigma=0.0)
    job = TrainJob.from_dict(
        {
            "model": SMALL,
            "task": task.to_dict(),
            "seed": 0,
            "train": {
                "steps": 10,
                "batch_size": 2,
                "lr": 1e-3,
                "curriculum": {"dims": [5, 1], "points": [11, 2], "every": 2000},
            },
        }
    )
    stages = [curriculum_stage(job.train, task, s) for s in (0, 1999, 2000, 4000, 30000, 10**6)]
    assert stages == [(5, 11), (5, 11), (6, 13), (7, 15), (20, 41), (20, 41)]
    batch = train_batch(task, 0, 7, 3, active_dims=6, n_points=13)
    assert batch.xs.shape == (3, 13, 20) and not batch.xs[..., 6:].any()
    np.testing.assert_allclose(batch.ys, np.einsum("bkd,bd->bk", batch.xs, batch.betas), rtol=1e-5, atol=1e-5)
    full = train_batch(task, 0, 7, 3)
    np.testing.assert_array_equal(batch.xs[..., :6], full.xs[:, :13, :6])  # same draws, fewer kept


def test_gpt2_training_resumes_from_its_checkpoint(tmp_path):
    task = LinearTask(d=D, n_points=K, beta_star=(0.0,) * D, psi=1.0, sigma=0.1)
    job = TrainJob.from_dict(
        {
            "model": SMALL,
            "task": task.to_dict(),
            "seed": 0,
            "train": {
                "steps": 30,
                "batch_size": 8,
                "lr": 1e-3,
                "loss_positions": "all",
                "curriculum": {"dims": [1, 1], "points": [3, 1], "every": 10},
            },
        }
    )
    ckpt = tmp_path / "ckpt.pt"
    model, losses, _ = train(job, checkpoint=ckpt, checkpoint_every=20)  # leaves the step-20 checkpoint
    assert torch.load(ckpt, weights_only=False)["step"] == 20
    resumed, resumed_losses, _ = train(job, checkpoint=ckpt, checkpoint_every=1000)
    np.testing.assert_array_equal(resumed_losses, losses)
    for a, b in zip(model.state_dict().values(), resumed.state_dict().values()):
        torch.testing.assert_close(a, b, rtol=0, atol=0)


def test_evaluation_stops_at_the_positions_the_model_has():
    """A GPT-2 built for K₀ < K points is scored on the first K₀ positions (the predictions it would
    make inside longer prompts, by causality) and NaN after them."""
    torch.manual_seed(2)
    short, long = build_model(SMALL | {"n_points": K - 2}, D).eval(), build_model(SMALL, D).eval()
    long.load_state_dict({**long.state_dict(), **{k: v for k, v in short.state_dict().items() if "wpe" not in k}})
    with torch.no_grad():
        long.backbone.wpe.weight[: 2 * (K - 2)] = short.backbone.wpe.weight
    task = LinearTask(d=D, n_points=K, beta_star=(0.0,) * D, psi=1.0, sigma=0.1)
    batch = train_batch(task, seed=0, step=0, batch_size=64)
    mean, _ = mean_and_sem((predict(numpy_predictor(short, 16), batch, max_points=short.max_points) - batch.ys) ** 2)
    full, _ = mean_and_sem((predict(numpy_predictor(long, 16), batch) - batch.ys) ** 2)
    assert np.isnan(mean[K - 2 :]).all()
    np.testing.assert_allclose(mean[: K - 2], full[: K - 2], rtol=1e-5)


@pytest.mark.parametrize("name", PROBED)
def test_layer_states_end_where_the_model_reads_its_prediction(prompts, name):
    """Layer L's state at each x token, through the model's own read-out, is the model's prediction;
    each layer's state at a position sees only that position's prefix (changing later tokens leaves it)."""
    from iclab.learners.probing import apply_readouts

    spec, width = SEQUENCE_MODELS[name]
    model = build_model(spec, D).eval()
    xs, ys = prompts
    with torch.no_grad():
        states = model.layer_states(xs, ys)  # (L+1, B, K, E)
        assert states.shape == (spec["n_layer"] + 1, B, K, width)
        own = torch.cat([model.read_out.weight[0], model.read_out.bias]).double().numpy()  # (E+1,)
        readouts = np.tile(own, (len(states), 1))
        np.testing.assert_allclose(apply_readouts(readouts, states.double().numpy())[-1], model(xs, ys), atol=1e-5)
        changed = model.layer_states(xs, torch.cat([ys[:, :3], ys[:, 3:] + 1.0], dim=1))
    np.testing.assert_array_equal(changed[:, :, :4], states[:, :, :4])  # x₃ sees y₀…y₂ only
    assert not torch.equal(changed[1:, :, 4:], states[1:, :, 4:])


@pytest.mark.parametrize("name", PROBED)
def test_query_states_at_the_prompts_own_points_are_its_layer_states(prompts, name):
    """A fresh query equal to x_k, after the prompt's first k examples, has x_k's states at every layer;
    two queries of one prefix do not see each other."""
    spec, width = SEQUENCE_MODELS[name]
    model = build_model(spec, D).eval()
    xs, ys = prompts
    other = torch.randn(B, K, D)
    queries = torch.stack([xs, other], dim=2)  # (B, K, T=2, d): the prompt's own x_k, then a fresh one
    with torch.no_grad():
        states = model.query_layer_states(xs, ys, queries)  # (L+1, B, K, 2, E)
        assert states.shape == (spec["n_layer"] + 1, B, K, 2, width)
        np.testing.assert_allclose(states[:, :, :, 0], model.layer_states(xs, ys), atol=1e-5)
        alone = model.query_layer_states(xs, ys, other[:, :, None])  # the fresh query without the other
    np.testing.assert_allclose(states[:, :, :, 1], alone[:, :, :, 0], atol=1e-5)


def test_probing_a_token_matrix_gpt2_is_refused(prompts):
    model = build_model({**SMALL, "prompt_format": "token_matrix"}, D)
    with pytest.raises(ValueError, match="needs prompt_format 'interleaved'"):
        model.layer_states(*prompts)
