"""Prompt samplers: pure functions of (seed, step), and the distributions they claim."""

from dataclasses import replace

import numpy as np
import pytest

from iclab.tasks import LinearTask
from iclab.tasks.samplers import eval_set, train_batch
from iclab.tasks.linear import ill_conditioned_spectrum

D = 3
H = np.array([[2.0, 0.5, 0.0], [0.5, 1.0, 0.3], [0.0, 0.3, 0.5]])


def task(**kw):
    base = dict(d=D, n_points=4, beta_star=(1.0, -2.0, 0.5), psi=0.7, sigma=0.3)
    return LinearTask(**{**base, **kw})


def test_batches_are_pure_functions_of_seed_and_step():
    t = task()
    a, b = train_batch(t, seed=3, step=17, batch_size=8), train_batch(t, seed=3, step=17, batch_size=8)
    np.testing.assert_array_equal(a.xs, b.xs)
    np.testing.assert_array_equal(a.ys, b.ys)
    assert not np.allclose(a.xs, train_batch(t, seed=3, step=18, batch_size=8).xs)
    assert not np.allclose(a.xs, train_batch(t, seed=4, step=17, batch_size=8).xs)
    assert not np.allclose(eval_set(t, 3, 8).xs, eval_set(t, 4, 8).xs)


def test_linear_task_moments_match_the_spec():
    t = task(covariance="matrix", covariance_values=tuple(H.ravel()))
    batch = eval_set(t, seed=0, n_prompts=200_000)
    beta_mean = batch.betas.mean(axis=0)
    np.testing.assert_allclose(beta_mean, t.beta_star, atol=5 * np.sqrt(0.7 / 200_000))
    np.testing.assert_allclose(np.cov(batch.betas.T), 0.7 * np.eye(D), atol=0.01)
    x = batch.xs.reshape(-1, D)
    np.testing.assert_allclose(x.T @ x / len(x), H, atol=0.01)
    noise = batch.ys - np.einsum("bkd,bd->bk", batch.xs, batch.betas)
    assert noise.var() == pytest.approx(0.09, rel=0.01)
    assert abs(noise.mean()) < 5 * 0.3 / np.sqrt(noise.size)


def test_random_exponential_covariance_is_drawn_per_prompt():
    t = task(covariance="random_exponential", covariance_scale=4.0, n_points=200)
    batch = eval_set(t, seed=1, n_prompts=20_000)
    # Exponential(1) × 4: mean 4, variance 16.
    assert batch.covariances.mean() == pytest.approx(4.0, rel=0.02)
    assert batch.covariances.var() == pytest.approx(16.0, rel=0.05)
    within = (batch.xs**2).mean(axis=1)  # (B, d): per-prompt empirical variances
    ratio = within / batch.covariances
    assert np.median(ratio) == pytest.approx(1.0, abs=0.02)


def test_ill_conditioned_spectrum_by_hand():
    # d = 5: two eigenvalues 100, three 1, then scaled by 5 / 203 so that the trace is 5
    np.testing.assert_allclose(ill_conditioned_spectrum(5, 100.0), np.array([100, 100, 1, 1, 1]) * 5 / 203, rtol=1e-15)
    with pytest.raises(ValueError, match="condition_number"):
        ill_conditioned_spectrum(5, 0.5)


def test_random_basis_covariance_has_the_spectrum_in_a_fresh_basis_per_prompt():
    d, kappa = 4, 100.0
    spectrum = np.array(ill_conditioned_spectrum(d, kappa))
    t = task(d=d, beta_star=(0.0,) * d, covariance="random_basis", covariance_values=tuple(spectrum), n_points=20_000)
    batch = eval_set(t, seed=2, n_prompts=40)
    empirical = np.einsum("bkd,bke->bde", batch.xs, batch.xs) / t.n_points  # (B, d, d) per-prompt covariance
    values, vectors = np.linalg.eigh(empirical)
    # every prompt: the spectrum (κ = 100, trace d) within Monte-Carlo error (relative s.e. √(2/K) ≈ 1%)
    np.testing.assert_allclose(values, np.broadcast_to(np.sort(spectrum), values.shape), rtol=0.06)
    assert values[:, -1].mean() / values[:, 0].mean() == pytest.approx(kappa, rel=0.05)
    # the stored diagonal is the diagonal of each prompt's own covariance
    np.testing.assert_allclose(batch.covariances, np.diagonal(empirical, axis1=1, axis2=2), rtol=0.08, atol=0.02)
    # a new eigenbasis per prompt: the top eigenspaces of different prompts are not aligned ...
    top = vectors[:, :, -2:]  # (B, d, 2): the eigenvalue-κ subspace
    overlap = np.linalg.norm(np.einsum("de,bdf->bef", top[0], top[1:]), axis=(1, 2)) ** 2 / 2  # 1 if equal
    assert np.median(overlap) < 0.9
    # ... and Haar: averaged over prompts the covariance is tr H / d · I = I (diagonal's s.e. ≈ 0.8/√B)
    many = eval_set(replace(t, n_points=4), seed=3, n_prompts=20_000)
    sem = many.covariances.std() / np.sqrt(20_000)
    np.testing.assert_allclose(many.covariances.mean(axis=0), np.ones(d), atol=5 * sem)
    np.testing.assert_allclose(many.covariances.sum(axis=1), d, rtol=1e-12)


@pytest.mark.parametrize(
    "kw, message",
    [
        (dict(beta_star=(1.0,)), "beta_star"),
        (dict(covariance="bogus"), "allowed"),
        (dict(covariance="diagonal"), "covariance_values"),
        (dict(covariance="random_basis", covariance_values=(1.0, 2.0)), "covariance_values"),
        (dict(covariance="matrix", covariance_values=(1.0, 2.0, 3.0, 0, 1, 0, 0, 0, -1)), "positive definite"),
        (dict(n_points=0), "n_points"),
        (dict(covariance="identity", covariance_values=(2.0, 2.0, 2.0)), "takes no covariance_values"),
    ],
)
def test_bad_task_specs_are_rejected(kw, message):
    with pytest.raises(ValueError, match=message):
        task(**kw)


def test_a_diagonal_of_ones_is_spelled_as_the_identity_and_draws_the_same_bits():
    """LinearTask.canonical: one spelling per distribution (experiments then share data and models); the
    sampler's draws equal the other spelling's bit for bit, and every other covariance keeps its spelling."""
    ones = task(covariance="diagonal", covariance_values=(1.0, 1.0, 1.0), sigma=0.5)
    canonical = ones.canonical()
    assert canonical.to_dict() == task(sigma=0.5).to_dict()  # covariance "identity", no values
    a, b = eval_set(ones, 3, 50), eval_set(canonical, 3, 50)
    for name in ("xs", "ys", "betas", "covariances"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name
    for other in (task(covariance="diagonal", covariance_values=(1.0, 1.0, 2.0)), task(),
                  task(covariance="random_basis", covariance_values=(1.0, 1.0, 1.0))):
        assert other.canonical() == other


@pytest.mark.parametrize("kind", ["random_exponential", "random_basis"])
def test_random_covariance_has_no_fixed_h(kind):
    values = (1.0, 2.0, 3.0) if kind == "random_basis" else None
    with pytest.raises(ValueError, match="per prompt"):
        task(covariance=kind, covariance_values=values).h_matrix


def test_relu_labels_and_query_covariance_shifts():
    t = task(
        label="relu",
        sigma=0.0,
        covariance="diagonal",
        covariance_values=(1.0, 1.0, 0.0),
        query_covariance_values=(0.0, 0.0, 4.0),
        n_points=3,
    )
    batch = eval_set(t, seed=2, n_prompts=100_000)
    np.testing.assert_array_equal(batch.ys, np.maximum(np.einsum("bkd,bd->bk", batch.xs, batch.betas), 0.0))
    context, query = batch.xs[:, :-1].reshape(-1, D), batch.xs[:, -1]
    np.testing.assert_allclose(context.var(axis=0), [1.0, 1.0, 0.0], atol=0.02)
    np.testing.assert_allclose(query.var(axis=0), [0.0, 0.0, 4.0], rtol=0.02, atol=1e-12)
    assert task().to_dict().keys() == task(label="linear").to_dict().keys()  # defaults keep old hashes
    assert task(label="relu").to_dict()["label"] == "relu"


def test_diagonal_task_covariance_allows_a_rank_deficient_psi():
    t = task(psi_values=(2.0, 0.5, 0.0))
    batch = eval_set(t, seed=4, n_prompts=100_000)
    np.testing.assert_allclose(np.cov(batch.betas.T), np.diag([2.0, 0.5, 0.0]), atol=0.02)
    np.testing.assert_array_equal(batch.betas[:, 2], t.beta_star[2])  # no spread where Ψ is 0
    np.testing.assert_allclose(t.psi_matrix, np.diag([2.0, 0.5, 0.0]))
    assert LinearTask.from_dict(t.to_dict()) == t
    assert "psi_values" not in task().to_dict()  # absent at its default: existing jobs keep their names
    with pytest.raises(ValueError, match="psi_values"):
        task(psi_values=(1.0, -1.0, 1.0))
