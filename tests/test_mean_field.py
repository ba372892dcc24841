"""Mean-field feature learning (Kim & Suzuki 2024): the teacher's tasks, the model against per-prompt
loops, the closed-form Γ against least squares, the two-timescale objective against Monte Carlo, the
birth–death potentials against finite differences, and training that resumes bit-identically."""

import numpy as np
import pytest
import torch
import yaml
from conftest import REPO

from iclab import theory
from iclab.fit import mean_field as mean_field_fit
from iclab.fit import train_config
from iclab.fit.mean_field import batch_loss, birth_death, fit, particle_potentials, perturb
from iclab.store.jobs import TrainJob
from iclab.models.mean_field import MeanFieldTransformer, optimal_gamma
from iclab.tasks import MeanFieldTask, task_from_dict
from iclab.tasks.samplers import batch_generator, eval_set
from iclab.tasks.samplers.mean_field import teacher

TASK = MeanFieldTask(d=4, k=3, n_points=12, teacher_width=6)


def sigmoid(z):
    return 1 / (1 + np.exp(-z))


def normal(n: int, d: int, seed: int) -> torch.Tensor:
    return torch.randn(n, d, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)


def test_teacher_is_a_two_layer_network_with_second_moment_identity_over_k():
    f = teacher(TASK)
    xs = normal(200_000, TASK.d, seed=99)  # independent of the normalisation's sample
    by_hand = sigmoid(xs.numpy() @ f.w.T) @ f.a / len(f.a)  # (1/M°) Σ a°σ(w°ᵀx)
    np.testing.assert_allclose(f.features(xs).numpy(), by_hand, rtol=1e-12, atol=1e-14)
    second_moment = by_hand.T @ by_hand / len(by_hand)
    np.testing.assert_allclose(TASK.k * second_moment, np.eye(TASK.k), atol=0.02)
    np.testing.assert_allclose(np.linalg.norm(f.w, axis=1), TASK.teacher_radius)


@pytest.mark.parametrize("target", ["max", "norm_sq"])
def test_nonlinear_targets_are_the_standardised_functions_of_the_features(target):
    task = MeanFieldTask(d=4, k=3, n_points=5, teacher_width=6, target=target)
    batch = eval_set(task, seed=3, n_prompts=20_000)
    features = teacher(task).features(torch.as_tensor(batch.xs)).numpy()  # (B, K, k)
    raw = features.max(axis=-1) if target == "max" else (features**2).sum(axis=-1)
    np.testing.assert_allclose(np.corrcoef(raw.ravel(), batch.ys.ravel())[0, 1], 1.0, atol=1e-12)
    assert abs(batch.ys.mean()) < 0.03 and batch.ys.var() == pytest.approx(1.0, abs=0.03)


def test_linear_task_labels_are_in_the_span_of_the_teacher_features_per_prompt():
    batch = eval_set(TASK, seed=1, n_prompts=50)
    features = teacher(TASK).features(torch.as_tensor(batch.xs)).numpy()  # (B, K, k)
    for f, y in zip(features, batch.ys):
        coefficients, *_ = np.linalg.lstsq(f, y, rcond=None)
        np.testing.assert_allclose(f @ coefficients, y, atol=1e-10)
    assert np.mean(batch.ys**2) == pytest.approx(1.0, abs=0.15)  # E[y²] = E‖v‖²/k = 1


def test_spec_round_trips_and_bad_specs_name_the_key():
    assert task_from_dict(TASK.to_dict()) == TASK
    with pytest.raises(ValueError, match="target 'cubic' unknown; allowed: linear, max, norm_sq"):
        MeanFieldTask(d=4, k=3, n_points=5, target="cubic")
    with pytest.raises(ValueError, match="teacher_width 2 < k 3"):
        MeanFieldTask(d=4, k=3, n_points=5, teacher_width=2)


def test_predictions_match_a_per_prompt_loop_and_never_see_their_own_label():
    torch.manual_seed(0)
    model = MeanFieldTransformer(d=4, k=3, width=7).double()
    with torch.no_grad():
        model.gamma.copy_(torch.randn(3, 3, dtype=torch.float64))
    batch = eval_set(TASK, seed=2, n_prompts=6)
    xs, ys = torch.as_tensor(batch.xs), torch.as_tensor(batch.ys)
    with torch.no_grad():
        predictions = model(xs, ys).numpy()
        last = model(xs, ys, last_only=True).numpy()
    a, w, gamma = (p.detach().numpy() for p in (model.a, model.w, model.gamma))
    for b in range(len(batch.xs)):
        h = sigmoid(batch.xs[b] @ w.T) @ a / len(a)  # (K, k)
        for k in range(TASK.n_points):
            z = (batch.ys[b, :k, None] * h[:k]).mean(axis=0) if k else np.zeros(3)
            assert predictions[b, k] == pytest.approx(z @ gamma @ h[k], abs=1e-12)
    np.testing.assert_allclose(last[:, 0], predictions[:, -1], rtol=1e-12)
    changed = ys.clone()
    changed[:, 5:] += 10.0  # the labels from position 5 on
    with torch.no_grad():
        np.testing.assert_array_equal(model(xs, changed).numpy()[:, :6], predictions[:, :6])


def test_optimal_gamma_is_the_least_squares_solution():
    gen = np.random.default_rng(0)
    z, h = gen.standard_normal((400, 3)), gen.standard_normal((400, 3))
    y = gen.standard_normal(400)
    design = np.stack([np.kron(z[t], h[t]) for t in range(400)])  # row t: vec(z_t h_tᵀ), row-major
    expected, *_ = np.linalg.lstsq(design, y, rcond=None)
    gamma = optimal_gamma(*(torch.as_tensor(a) for a in (z, h, y)), ridge=0.0).numpy()
    np.testing.assert_allclose(gamma, expected.reshape(3, 3), rtol=1e-9)
    predictions = np.einsum("tm,mn,tn->t", z, gamma, h)
    np.testing.assert_allclose(predictions, design @ expected, rtol=1e-9)


def test_two_timescale_objective_is_zero_on_the_teacher_span_and_the_lstsq_residual_otherwise():
    xs = normal(50_000, TASK.d, seed=5)
    f = teacher(TASK).features(xs).numpy()
    mixing = np.random.default_rng(1).standard_normal((3, 3))
    assert abs(theory.two_timescale_objective(f @ mixing, f)) < 1e-10  # h = R f°: a global minimum
    torch.manual_seed(1)
    h = MeanFieldTransformer(d=4, k=3, width=9).double().features(xs).detach().numpy()
    coefficients, *_ = np.linalg.lstsq(h, f, rcond=None)
    residual = np.sum((f - h @ coefficients) ** 2) / len(f)
    assert theory.two_timescale_objective(h, f) == pytest.approx(residual, rel=1e-8)


def test_two_timescale_objective_is_the_long_prompt_icl_risk_with_gamma_the_inverse_second_moment():
    """Monte Carlo: the model's own risk at the final query of prompts with n = 2000 examples, Γ = E[hhᵀ]⁻¹,
    against L(μ) (its n → ∞ limit; the finite-n excess is O(k/n))."""
    torch.manual_seed(2)
    model = MeanFieldTransformer(d=4, k=3, width=9).double()
    xs = normal(200_000, TASK.d, seed=6)
    h = model.features(xs).detach().numpy()
    expected = theory.two_timescale_objective(h, teacher(TASK).features(xs).numpy())
    with torch.no_grad():
        model.gamma.copy_(torch.as_tensor(np.linalg.inv(h.T @ h / len(h))))
    task = MeanFieldTask(d=4, k=3, n_points=2001, teacher_width=6)
    batch = eval_set(task, seed=4, n_prompts=1000)
    with torch.no_grad():
        predictions = model(torch.as_tensor(batch.xs), torch.as_tensor(batch.ys), last_only=True)[:, 0].numpy()
    errors = (predictions - batch.ys[:, -1]) ** 2
    sem = errors.std(ddof=1) / np.sqrt(len(errors))
    assert expected > 0.05  # a random model is far from the teacher's span
    assert -4 * sem < errors.mean() - expected < 4 * sem + 5 * 3 / 2000


def test_misaligned_floor_is_the_risk_of_the_best_k_of_the_teacher_features():
    task = MeanFieldTask(d=4, k=5, n_points=3, teacher_width=8)
    f = teacher(task).features(normal(100_000, 4, seed=7)).numpy()
    floor = theory.misaligned_floor(f.T @ f / len(f), 3)
    assert floor == pytest.approx(2 / 5, abs=0.01)  # E[ff ᵀ] = I/5: two of five unit-variance directions lost
    evals, evecs = np.linalg.eigh(f.T @ f / len(f))
    assert theory.two_timescale_objective(f @ evecs[:, 2:], f) == pytest.approx(floor, rel=1e-9)
    assert theory.two_timescale_objective(f[:, :3], f) >= floor - 1e-12
    random = f @ np.random.default_rng(0).standard_normal((5, 3))
    assert theory.two_timescale_objective(random, f) >= floor - 1e-12


def test_largest_principal_angle():
    gen = np.random.default_rng(3)
    f = gen.standard_normal((500, 2))
    assert theory.largest_principal_angle(f @ gen.standard_normal((2, 2)), f) == pytest.approx(0.0, abs=1e-7)
    orthogonal = gen.standard_normal((500, 1))
    orthogonal -= f @ np.linalg.lstsq(f, orthogonal, rcond=None)[0]
    assert theory.largest_principal_angle(np.hstack([f[:, :1], orthogonal]), f) == pytest.approx(np.pi / 2)
    basis, _ = np.linalg.qr(f)  # e₁, e₂: orthonormal in span(f)
    unit = orthogonal / np.linalg.norm(orthogonal)
    tilted = np.hstack([basis[:, :1], np.cos(0.5) * basis[:, 1:] + np.sin(0.5) * unit])  # e₂ turned 0.5 rad off
    assert theory.largest_principal_angle(tilted, f) == pytest.approx(0.5, rel=1e-10)


def job(variant: str, steps: int = 30, seed: int = 0, **options) -> TrainJob:
    train = {"steps": steps, "batch_size": 32, "lr": 1.0, "variant": variant, "gamma_prompts": 128, **options}
    return TrainJob(
        model={"name": "mean_field", "k": 3, "width": 8},
        task=TASK.to_dict(),
        train=train_config("mean_field", train),
        seed=seed,
    )


def test_potentials_are_the_first_variation_of_the_loss():
    """V_m − mean V = d/dε L((1 − ε)μ + εδ_{θ_m}) at ε = 0 (finite differences, Γ fixed)."""
    torch.manual_seed(3)
    model = MeanFieldTransformer(d=4, k=3, width=6).double()
    batch = eval_set(TASK, seed=5, n_prompts=64)
    xs, ys = torch.as_tensor(batch.xs), torch.as_tensor(batch.ys)
    cfg = job("attention").train
    model.zero_grad()
    batch_loss(model, xs, ys, cfg).backward()
    potentials = particle_potentials(model).numpy()

    def loss_with_mass_on(m: int, eps: float) -> float:
        with torch.no_grad():
            h = (1 - eps) * model.features(xs) + eps * torch.sigmoid(xs @ model.w[m]).unsqueeze(-1) * model.a[m]
            z = (ys[:, :-1, None] * h[:, :-1]).mean(dim=1)
            return float(((torch.einsum("bm,mn,bn->b", z, model.gamma, h[:, -1]) - ys[:, -1]) ** 2).mean())

    eps = 1e-6
    for m in range(6):
        derivative = (loss_with_mass_on(m, eps) - loss_with_mass_on(m, -eps)) / (2 * eps)
        assert potentials[m] - potentials.mean() == pytest.approx(derivative, rel=1e-5, abs=1e-9)


def test_birth_death_keeps_the_particle_count_and_copies_particles():
    torch.manual_seed(4)
    model = MeanFieldTransformer(d=4, k=3, width=50)
    before = torch.cat([model.a, model.w], dim=1).detach().clone()
    potentials = torch.linspace(-1, 1, 50)
    cfg = job("modified", birth_death_rate=5.0).train
    replaced = birth_death(model, potentials, cfg, batch_generator(0, 9, 0))
    after = torch.cat([model.a, model.w], dim=1).detach()
    assert after.shape == before.shape and replaced > 0
    matches = (after[:, None, :] == before[None, :, :]).all(dim=-1)  # (M, M): slot i holds old particle j
    assert matches.any(dim=1).all(), "every particle after the step is a copy of one before it"
    assert int((~matches.diagonal()).sum()) == replaced
    kept_high = matches[:, 40:].any(dim=0).float().mean()  # particles of the highest potential (killed first)
    kept_low = matches[:, :10].any(dim=0).float().mean()
    assert kept_low > kept_high
    idle = MeanFieldTransformer(d=4, k=3, width=50)
    assert birth_death(idle, potentials, job("modified").train, batch_generator(0, 9, 0)) == 0


def particles(model: MeanFieldTransformer) -> torch.Tensor:
    return torch.cat([model.a, model.w], dim=1).detach().clone()  # (M, k + d): one row per particle


def copies(after: torch.Tensor, before: torch.Tensor) -> np.ndarray:
    """How many slots of ``after`` hold each particle of ``before``: (M,); every slot must hold one of them."""
    matches = (after[:, None, :] == before[None, :, :]).all(dim=-1)  # (M, M): slot i holds old particle j
    assert (matches.sum(dim=1) == 1).all(), "a slot holds no particle of before the step"
    return matches.sum(dim=0).numpy()


@pytest.mark.parametrize("rate", [0.3, 1.5])
def test_birth_death_events_by_hand(rate):
    """Particle 0 has β = +1 (above the mean), particle 1 β = −1 (below), the other six β = 0 (no event). By the
    scheme (Rotskoff et al. 2019, conservative): 0 is killed with probability p = 1 − exp(−rate·|β|·lr), its slot
    copying a uniform particle; 1 is duplicated with probability p, the copy overwriting a uniform slot. So 0 is
    never duplicated, 1 never removed, and over 2000 generators
    P(0 gone) = 1 − (1 − p(1 − 1/M))(1 − p/M)   (its own death to another particle, or 1's copy landing on it),
    P(1 twice or more) = 1 − (1 − p(1 − 1/M))(1 − p/M)   (its own birth elsewhere, or 0's slot copying it)."""
    m, draws = 8, 2000
    torch.manual_seed(7)
    model = MeanFieldTransformer(d=4, k=3, width=m)
    start = particles(model)
    potentials = torch.tensor([1.0, -1.0] + [0.0] * (m - 2))  # mean 0: β = potentials
    cfg = job("modified", birth_death_rate=rate).train
    counts = np.empty((draws, m), dtype=int)
    for i in range(draws):
        with torch.no_grad():
            model.a.copy_(start[:, :3])
            model.w.copy_(start[:, 3:])
        replaced = birth_death(model, potentials, cfg, torch.Generator().manual_seed(i))
        counts[i] = copies(particles(model), start)
        assert counts[i].sum() == m and replaced == int((particles(model) != start).any(dim=1).sum())
    assert (counts[:, 0] <= 1).all(), "the particle above the mean was duplicated"
    assert (counts[:, 1] >= 1).all(), "the particle below the mean was removed"
    p = 1 - np.exp(-rate * 1.0 * cfg.lr)
    expected = 1 - (1 - p * (1 - 1 / m)) * (1 - p / m)
    tolerance = 4 * np.sqrt(expected * (1 - expected) / draws)
    assert np.mean(counts[:, 0] == 0) == pytest.approx(expected, abs=tolerance)
    assert np.mean(counts[:, 1] >= 2) == pytest.approx(expected, abs=tolerance)


def test_a_birth_death_step_lowers_the_two_timescale_objective_in_expectation():
    """Birth–death is the Fisher–Rao gradient flow of L(μ): dμ = −rate·β·μ dt, so one step of length lr changes
    L by −rate·lr·mean_m β_m² to first order in expectation (β_m = δL/δμ(θ_m) − mean, computed here by finite
    differences of L((1 − ε)μ + εδ_m) on a fixed sample of x, independent of the fitter's potentials). 100
    random particles whose a's scale spans 30× (spread potentials), at most a 5% event chance each. The mean of L
    after the step over 500 generators falls below L before by more than 4 standard errors (measured: L 0.351,
    change −0.0058 ± 0.0007; the first order alone −0.0092, the rest second order: each event moves 1/100 of the
    mass)."""
    m, draws, eps = 100, 500, 1e-5
    torch.manual_seed(11)
    model = MeanFieldTransformer(d=4, k=3, width=m).double()
    with torch.no_grad():
        model.a *= torch.logspace(-1, np.log10(3), m, dtype=torch.float64)[:, None]
    xs = normal(4000, TASK.d, seed=8)
    f = teacher(TASK).features(xs).numpy()
    start = particles(model)
    sigma = torch.sigmoid(xs @ model.w.T).detach().numpy()  # (N, M): each particle's σ(wᵀx), fixed
    a = model.a.detach().numpy()  # (M, k)

    def objective(weights: np.ndarray, slots=slice(None)) -> float:  # L(Σ_m weights_m δ_{θ_m})
        return theory.two_timescale_objective((sigma[:, slots] * weights) @ a[slots], f)

    uniform = np.full(m, 1 / m)
    before = objective(uniform)
    beta = torch.tensor([  # d/dε L((1 − ε)μ + εδ_j) at 0 = V_j − mean V
        (objective((1 - eps) * uniform + eps * np.eye(m)[j]) - objective((1 + eps) * uniform - eps * np.eye(m)[j]))
        / (2 * eps)
        for j in range(m)
    ])
    rate = 0.05 / float(beta.abs().max())  # at most a 5% event chance
    cfg = job("modified", birth_death_rate=rate).train
    after, replaced = np.empty(draws), np.empty(draws)
    for i in range(draws):
        with torch.no_grad():
            model.a.copy_(start[:, :3])
            model.w.copy_(start[:, 3:])
        replaced[i] = birth_death(model, beta, cfg, torch.Generator().manual_seed(i))
        slots = (model.a[:, None, 0] == start[None, :, 0]).float().argmax(dim=1)  # slot i holds old particle j
        after[i] = objective(uniform, slots.numpy())
    change, sem = after.mean() - before, after.std(ddof=1) / np.sqrt(draws)
    first_order = -rate * cfg.lr * float((beta**2).mean())
    assert replaced.any(), "no birth or death in any draw"
    assert change < -4 * sem, f"L did not fall: {change:.3g} ± {sem:.2g} (first order {first_order:.3g})"


@pytest.mark.parametrize("std", [0.0, 0.05])
def test_perturbation_adds_independent_gaussian_noise_of_the_configured_std(std):
    """Sample mean and variance of the displacement of every coordinate of 500 particles (3500 values) against
    0 and std², within 4 standard errors (the variance's: std²·√(2/n)); nothing moves at std = 0."""
    torch.manual_seed(5)
    model = MeanFieldTransformer(d=4, k=3, width=500).double()
    start = particles(model)
    cfg = job("modified", birth_death_rate=0.1, perturbation=std).train if std else job("modified").train
    perturb(model, cfg, torch.Generator().manual_seed(3))
    moved = (particles(model) - start).numpy().ravel()
    if std == 0:
        assert (moved == 0).all()
        return
    n = moved.size
    assert abs(moved.mean()) < 4 * std / np.sqrt(n)
    assert moved.var(ddof=1) == pytest.approx(std**2, abs=4 * std**2 * np.sqrt(2 / n))
    assert abs(np.corrcoef(moved[:-1], moved[1:])[0, 1]) < 4 / np.sqrt(n)


class Killed(Exception):
    pass


@pytest.mark.parametrize("variant", ["attention", "static", "modified"])
def test_training_lowers_the_risk_and_resumes_bit_identically(variant, tmp_path, monkeypatch):
    options = {"birth_death_rate": 0.5, "perturbation": 1e-3} if variant == "modified" else {}
    spec = job(variant, steps=40, snapshot_every=10, **options)
    reference, record = fit(spec)
    ckpt = tmp_path / "ckpt.pt"

    class KilledAtStep25(mean_field_fit.Progress):
        def update(self, done, prefix="", suffix=""):
            if done == 25:
                raise Killed
            super().update(done, prefix, suffix)

    with monkeypatch.context() as patch, pytest.raises(Killed):  # killed after the checkpoint of step 20
        patch.setattr(mean_field_fit, "Progress", KilledAtStep25)
        fit(spec, checkpoint=ckpt, checkpoint_every=20)
    assert torch.load(ckpt, weights_only=False)["step"] == 20
    resumed, resumed_record = fit(spec, checkpoint=ckpt, checkpoint_every=20)
    for name, tensor in reference.state_dict().items():
        torch.testing.assert_close(resumed.state_dict()[name], tensor, rtol=0, atol=0)
    np.testing.assert_array_equal(resumed_record.loss.values, record.loss.values)
    np.testing.assert_array_equal(resumed_record.snapshot__a.values, record.snapshot__a.values)
    assert record.loss.values[-10:].mean() < record.loss.values[:5].mean()


def test_bad_training_options_name_the_key():
    with pytest.raises(ValueError, match="train.variant 'joint' unknown; allowed: attention, static, modified"):
        job("joint")
    with pytest.raises(ValueError, match="belong to variant modified, not static"):
        job("static", birth_death_rate=1.0)


def test_config_constraints_between_keys_name_them():
    from iclab.errors import ExperimentError
    from iclab.experiments import experiment

    cfg = yaml.safe_load((REPO / "tests" / "data" / "tiny.yaml").read_text())["experiments"]["mean_field"]
    cases = cfg | {"k_misaligned": 3, "nonlinear_targets": ["max", "norm_sq"]}
    assert [p.coords["case"] for p in experiment("mean_field").points(cases)] == [
        "realisable",
        "misaligned",
        "max",
        "norm_sq",
    ]
    with pytest.raises(ExperimentError, match=r"teacher_width \(1\) must be at least k and k_misaligned \(2\)"):
        experiment("mean_field").points(cfg | {"teacher_width": 1})
    with pytest.raises(ExperimentError, match=r"k_misaligned \(2\) must exceed k \(2\)"):
        experiment("mean_field").points(cfg | {"k_misaligned": 2})
