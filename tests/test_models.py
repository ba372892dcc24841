"""Models against hand-built constructions and the numpy estimators."""

import numpy as np
import pytest
import torch

from iclab.learners import estimators
from iclab.models import build_model
from iclab.models.linear import GDBeta, LinearSelfAttention, LinearTransformerBlock
from iclab.models.lstm import LSTMLearner
from iclab.models.prompts import interleave

D, K, B = 4, 9, 16
SPECS = {"lsa": {"name": "lsa", "init_scale": 0.5}, "ltb": {"name": "ltb", "init_scale": 0.5},
         "gd_beta": {"name": "gd_beta", "init_scale": 0.5}, "lstm": {"name": "lstm", "hidden": 8, "n_layer": 2}}


@pytest.fixture(autouse=True)
def _float64():
    """Exact comparisons with the numpy references need float64 parameters."""
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    yield
    torch.set_default_dtype(previous)


@pytest.fixture
def prompts():
    rng = np.random.default_rng(0)
    xs = rng.standard_normal((B, K, D))
    ys = xs @ rng.standard_normal(D) + 0.1 * rng.standard_normal((B, K))
    return xs, ys


def as_torch(xs, ys):
    return torch.as_tensor(xs), torch.as_tensor(ys)


def set_ltb_to_gd_beta(model: LinearTransformerBlock, beta0: np.ndarray, gamma: np.ndarray) -> None:
    """W^{KQ} = [[Γᵀ, 0], [0, 0]]; last row of W^{PV} = (−β₀, 1); W₂W₁ᵀ last row = (β₀, 0).

    Then a_y = x_qᵀΓ (1/n)Σ x_i(y_i − x_iᵀβ₀), and the MLP adds β₀ᵀ(x_q + a_x) with a_x = 0.
    """
    with torch.no_grad():
        for p in model.parameters():
            p.zero_()
        model.w_kq[:D, :D] = torch.as_tensor(gamma.T)
        model.w_pv[D, :D] = -torch.as_tensor(beta0)
        model.w_pv[D, D] = 1.0
        model.w1[:D, 0] = torch.as_tensor(beta0)
        model.w2[D, 0] = 1.0


def test_ltb_with_hand_set_weights_is_gd_beta(prompts):
    rng = np.random.default_rng(1)
    for _ in range(3):
        beta0, gamma = rng.standard_normal(D), rng.standard_normal((D, D))  # Γ not symmetric
        model = LinearTransformerBlock(D)
        set_ltb_to_gd_beta(model, beta0, gamma)
        expected = estimators.gd_beta(*prompts, beta0=beta0, gamma=gamma)
        got = model(*as_torch(*prompts)).detach().numpy()
        np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-10)


def test_lsa_with_von_oswald_weights_is_one_gd_step_from_zero(prompts):
    """von Oswald et al. 2023: W^{KQ} = [[ηI, 0], [0, 0]], W^{PV} = [[0, 0], [0, 1]] gives w₁ = η Xᵀy / n."""
    eta = 0.37
    model = LinearSelfAttention(D)
    with torch.no_grad():
        model.w_kq.zero_()
        model.w_pv.zero_()
        model.w_kq[:D, :D] = eta * torch.eye(D)
        model.w_pv[D, D] = 1.0
    expected = estimators.gd(*prompts, steps=1, lr=eta, normalize=True)
    np.testing.assert_allclose(model(*as_torch(*prompts)).detach().numpy(), expected, rtol=1e-10, atol=1e-12)


def test_gd_beta_module_matches_numpy(prompts):
    model = GDBeta(D, init_scale=1.0)
    expected = estimators.gd_beta(*prompts, beta0=model.beta0.detach().numpy(), gamma=model.gamma.detach().numpy())
    np.testing.assert_allclose(model(*as_torch(*prompts)).detach().numpy(), expected, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("name", SPECS)
def test_final_query_path_equals_full_forward(prompts, name):
    torch.manual_seed(0)
    model = build_model(SPECS[name], D)
    xs, ys = as_torch(*prompts)
    np.testing.assert_allclose(
        model(xs, ys, last_only=True)[:, 0].detach().numpy(),
        model(xs, ys)[:, -1].detach().numpy(),
        rtol=1e-10,
        atol=1e-12,
    )


@pytest.mark.parametrize("name", SPECS)
def test_no_prediction_sees_its_own_or_later_labels(prompts, name):
    torch.manual_seed(0)
    model = build_model(SPECS[name], D)
    xs, ys = as_torch(*prompts)
    base = model(xs, ys).detach()
    for k in range(K):
        changed = ys.clone()
        changed[:, k:] += 100.0
        out = model(xs, changed).detach()
        np.testing.assert_allclose(out[:, : k + 1], base[:, : k + 1], rtol=1e-12, atol=1e-9)
        if k + 1 < K:
            assert not torch.allclose(out[:, k + 1 :], base[:, k + 1 :])


def test_an_lstms_predictions_read_their_own_prompts_earlier_points_and_no_other_prompts(prompts):
    """Moving prompt 0's first point changes prompt 0's every later prediction (the layers carry context along the
    prompt, not across the batch) and no other prompt's."""
    torch.manual_seed(0)
    model = build_model(SPECS["lstm"], D)
    xs, ys = as_torch(*prompts)
    moved = xs.clone()
    moved[0, 0] += 3.0
    base, out = model(xs, ys).detach(), model(moved, ys).detach()
    assert (out[0, 1:] - base[0, 1:]).abs().min() > 1e-9
    np.testing.assert_array_equal(out[1:].numpy(), base[1:].numpy())


def test_an_lstms_layer_states_start_at_its_read_in_and_its_prediction_reads_the_last_layer(prompts):
    """The per-layer readouts' contract (``layer_states``: L+1 states at the x tokens): index 0 is the read-in of the
    interleaved prompt at its x tokens (even positions), and the model's prediction is ``read_out`` of index L."""
    torch.manual_seed(0)
    model = LSTMLearner(D, hidden=8, n_layer=3)
    xs, ys = as_torch(*prompts)
    with torch.no_grad():
        states = model.layer_states(xs, ys)  # (L+1, B, K, hidden)
        assert states.shape == (4, B, K, 8)
        torch.testing.assert_close(states[0], model.read_in(interleave(xs, ys))[:, ::2])
        torch.testing.assert_close(model(xs, ys), model.read_out(states[3])[..., 0])
        assert not torch.allclose(model(xs, ys), model.read_out(states[2])[..., 0])


def test_unknown_model_name_is_rejected():
    with pytest.raises(ValueError, match="allowed: lsa, ltb, gd_beta"):
        build_model({"name": "transformer"}, D)
