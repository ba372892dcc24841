"""Similarity measures and per-layer readouts (Fu et al. 2024) on inputs whose answer is known by
construction, and against numpy.linalg references."""

import numpy as np
import pytest

from iclab.learners import estimators, probing
from iclab.learners.probing import apply_readouts, fit_readouts
from iclab.learners.similarity import best_match, errors_similarity, induced_weights, weights_similarity

B, K, D = 50, 12, 4


@pytest.fixture
def prompts():
    rng = np.random.default_rng(0)
    xs = rng.standard_normal((B, K, D))
    ys = np.einsum("bkd,bd->bk", xs, rng.standard_normal((B, D)))
    return xs, ys


def test_errors_similarity_of_identical_flipped_and_hand_angled_residuals(prompts):
    xs, ys = prompts
    rng = np.random.default_rng(1)
    r = rng.standard_normal((B, K))  # residuals of method a
    q = rng.standard_normal((B, K))
    q -= np.sum(q * r, axis=1, keepdims=True) / np.sum(r * r, axis=1, keepdims=True) * r  # ⟂ r, per prompt
    q *= np.linalg.norm(r, axis=1, keepdims=True) / np.linalg.norm(q, axis=1, keepdims=True)  # |q| = |r|
    theta = 0.7
    angled = np.cos(theta) * r + np.sin(theta) * q  # at angle θ to r in every prompt
    a = ys + r
    b = np.stack([ys + r, ys - r, ys + 3.0 * r, ys + angled])  # (4, B, K)
    sim = errors_similarity(a[None], b, ys)
    np.testing.assert_allclose(sim, [[1.0, -1.0, 1.0, np.cos(theta)]], rtol=1e-12)


def test_errors_similarity_is_the_mean_of_per_prompt_cosines(prompts):
    xs, ys = prompts
    a = estimators.newton_weights(xs, ys, iterations=[1, 3])  # two methods, (2, B, K, d)
    pa = estimators.predict_linear(xs, a)  # (2, B, K)
    pb = estimators.gd(xs, ys, steps=5, lr=0.05)[None]  # (1, B, K)
    sim = errors_similarity(pa, pb, ys)
    for m in range(2):
        cosines = []
        for i in range(B):
            ra, rb = pa[m, i] - ys[i], pb[0, i] - ys[i]
            cosines.append(np.dot(ra, rb) / np.linalg.norm(ra) / np.linalg.norm(rb))
        assert sim[m, 0] == pytest.approx(np.mean(cosines), rel=1e-12)


def test_weights_similarity_of_known_angles_skips_undefined_prefixes():
    rng = np.random.default_rng(2)
    w = rng.standard_normal((1, B, K, D))
    w[:, :, 0] = 0.0  # position 0: no example seen, no direction
    rotated = w.copy()
    rotated[..., :2] = w[..., :2] @ np.array([[0.0, -1.0], [1.0, 0.0]])  # 90° in the first two coordinates
    expected = np.sum(w[0, :, 1:, 2:] ** 2, -1) / np.sum(w[0, :, 1:] ** 2, -1)  # cos of that rotation
    sim = weights_similarity(w, np.concatenate([w, -w, 2.0 * w, rotated]))
    np.testing.assert_allclose(sim[0, :3], [1.0, -1.0, 1.0], rtol=1e-12)
    assert sim[0, 3] == pytest.approx(expected.mean(), rel=1e-12)


def test_induced_weights_recover_a_linear_predictor_exactly():
    rng = np.random.default_rng(3)
    t = 3 * D
    queries = rng.standard_normal((B, K, t, D))
    w = rng.standard_normal((2, B, K, D))  # two linear learners, a weight vector per prompt and prefix
    predictions = np.einsum("bktd,mbkd->mbkt", queries, w)
    np.testing.assert_allclose(induced_weights(queries, predictions), w, rtol=1e-10, atol=1e-12)
    # a nonlinear learner gets its least-squares weights, as numpy.linalg.lstsq finds them
    bent = predictions + 0.3 * predictions**2
    expected = np.linalg.lstsq(queries[4, 5], bent[1, 4, 5], rcond=None)[0]
    np.testing.assert_allclose(induced_weights(queries, bent)[1, 4, 5], expected, rtol=1e-10)
    with pytest.raises(ValueError, match="at least d = 4 fresh queries"):
        induced_weights(queries[:, :, :3], predictions[..., :3])


def test_best_match_is_the_grid_value_of_the_highest_similarity():
    sim = np.array([[0.1, 0.9, 0.5], [0.3, 0.2, 0.95]])
    np.testing.assert_array_equal(best_match(sim, np.array([1, 4, 16])), [4, 16])


def test_a_row_flat_within_the_tolerance_has_no_best_match_not_the_argmax_of_its_noise():
    """Layer 0 of a trained GPT-2 reads nothing of the prompt: its similarity to every count is the same up to noise,
    and its argmax (the grid's last count here) is no result."""
    sim = np.array([[0.05, 0.051, 0.056], [0.05, 0.05, 0.07], [0.3, 0.9, 0.5]])  # ranges 0.006, 0.02, 0.6
    np.testing.assert_array_equal(best_match(sim, np.array([1, 4, 16]), tolerance=0.01), [np.nan, 16, 4])


def test_readouts_recover_an_affine_map_of_each_layer_and_match_lstsq():
    rng = np.random.default_rng(4)
    n_layers, e = 3, 6
    states = rng.standard_normal((n_layers, B, K, e))
    u, v = rng.standard_normal(e), 0.7
    ys = states[1] @ u + v  # layer 1 reads the targets exactly; the others only partly
    readouts = fit_readouts(states, ys)
    np.testing.assert_allclose(readouts[1], np.append(u, v), rtol=1e-6)
    np.testing.assert_allclose(apply_readouts(readouts, states)[1], ys, rtol=1e-6, atol=1e-6)
    design = np.concatenate([states[2].reshape(-1, e), np.ones((B * K, 1))], axis=1)
    expected = np.linalg.lstsq(design, ys.reshape(-1), rcond=None)[0]
    np.testing.assert_allclose(readouts[2], expected, rtol=1e-6)


def test_readouts_are_deterministic_and_finite_on_rank_deficient_states():
    rng = np.random.default_rng(5)
    states = np.zeros((2, B, K, 5))
    states[..., :2] = rng.standard_normal((2, B, K, 2))  # three unused directions (a LayerNorm-like null space)
    ys = rng.standard_normal((B, K))
    first, second = fit_readouts(states, ys), fit_readouts(states.copy(), ys.copy())
    np.testing.assert_array_equal(first, second)
    assert np.isfinite(first).all() and np.abs(first[:, 2:5]).max() == 0.0


def test_similarity_of_errors_per_group_of_prompts_averages_to_the_whole():
    from iclab.learners.similarity import errors_similarity, errors_similarity_groups

    rng = np.random.default_rng(5)
    a, b, ys = rng.normal(size=(3, 40, 6)), rng.normal(size=(2, 40, 6)), rng.normal(size=(40, 6))
    whole, groups = errors_similarity_groups(a, b, ys, 8)  # 8 groups of 5 prompts
    assert groups.shape == (3, 2, 8)
    np.testing.assert_allclose(whole, errors_similarity(a, b, ys), rtol=1e-12)
    np.testing.assert_allclose(groups.mean(axis=-1), errors_similarity(a, b, ys), rtol=1e-12)
    np.testing.assert_allclose(groups[..., 0], errors_similarity(a[:, :5], b[:, :5], ys[:5]), rtol=1e-12)


def test_readouts_in_chunks_equal_the_readouts_of_every_state_at_once(monkeypatch):
    """Chunks of prompts sized by the states' bytes (forced to 3 prompts a chunk here) give the readouts of all the
    states at once, and never ask ``layer_states`` for more prompts than a chunk."""
    rng = np.random.default_rng(3)
    weights = rng.standard_normal((4, 3, 5))  # (L+1, d, E): a linear "model" per layer
    asked = []

    def layer_states(xs, queries):  # (b, K, d), (b, K, T, d) → (L+1, b, K, T, E)
        asked.append(len(xs))
        return np.einsum("bktd,lde->lbkte", queries + xs[:, :, None], weights)

    xs, queries = rng.standard_normal((10, 2, 3)), rng.standard_normal((10, 2, 6, 3))
    readouts = rng.standard_normal((4, 6))
    one_prompt = layer_states(xs[:1], queries[:1]).nbytes
    monkeypatch.setattr(probing, "STATES_BUDGET_BYTES", 3 * one_prompt + 1)
    asked.clear()
    chunked = probing.readouts_in_chunks(readouts, layer_states, xs, queries)
    assert asked == [1, 3, 3, 3, 1]  # one prompt to size the chunks, then chunks of 3
    np.testing.assert_allclose(chunked, probing.apply_readouts(readouts, layer_states(xs, queries)), rtol=1e-12)
    asked.clear()
    alone = probing.readouts_in_chunks(readouts, layer_states, xs[:1], queries[:1])
    assert asked == [1]  # a lone prompt's states, computed once
    np.testing.assert_allclose(alone, probing.apply_readouts(readouts, layer_states(xs[:1], queries[:1])), rtol=1e-12)


def test_readouts_fitted_over_chunks_equal_the_fit_on_every_state_at_once(monkeypatch):
    """Sums accumulated over chunks of 2 prompts give the least-squares readouts of all the states at once, even for
    states with a large common component (a residual stream's), which a plain Σhhᵀ − n·mmᵀ would lose to round-off;
    both are checked against numpy's lstsq of the centred problem."""
    rng = np.random.default_rng(5)
    states = 1e4 + rng.standard_normal((3, 9, 4, 6))  # (L+1, B, K, E), a mean 10⁴ times the spread
    ys = rng.standard_normal((9, 4))
    monkeypatch.setattr(probing, "STATES_BUDGET_BYTES", 2 * states[:, :1].nbytes + 1)
    chunked = probing.fit_readouts_in_chunks(lambda xs, y: states[:, xs[:, 0].astype(int)], np.arange(9)[:, None], ys)
    at_once = fit_readouts(states, ys, ridge=0.0)
    for layer in range(3):
        h = states[layer].reshape(-1, 6)
        u = np.linalg.lstsq(h - h.mean(axis=0), ys.reshape(-1) - ys.mean(), rcond=None)[0]
        np.testing.assert_allclose(at_once[layer, :6], u, rtol=1e-6)
    np.testing.assert_allclose(probing.fit_readouts_in_chunks(
        lambda xs, y: states[:, xs[:, 0].astype(int)], np.arange(9)[:, None], ys, ridge=0.0), at_once, rtol=1e-9)
    np.testing.assert_allclose(chunked, fit_readouts(states, ys), rtol=1e-9)
