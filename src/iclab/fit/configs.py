"""The typed ``train`` sections of training specs, one dataclass per fitter, registered by model name (no torch:
the plan builds and validates training specs without it; ``iclab.fit.fitters`` pairs each with its fit).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from iclab.config import schema_default

STAGE1_QUERIES = ("last", "all")

VARIANTS = ("attention", "static", "modified")

BATCHABLE_MODELS = ("gpt2",)  # models that train in batched groups (iclab.fit.batched; the LSTM's aten::lstm has no
# vmap batching rule)


@dataclass(frozen=True)
class TrainConfig:
    steps: int
    batch_size: int
    lr: float
    optimizer: str = schema_default("train", "optimizer")  # adam | sgd
    schedule: str = schema_default("train", "schedule")  # constant | cosine (to 0 at the last step)
    loss_positions: str = schema_default("train", "loss_positions")  # last: the final query | all: every position
    grad_clip: float | None = None
    divergence_factor: float = schema_default("divergence_factor")  # loss above this multiple of its start
    snapshot_every: int | None = None  # keep every parameter each this many steps (and at 0 and the end)
    curriculum: dict[str, Any] | None = (
        None  # Garg et al.: {"dims": [start, step], "points": [start, step], "every": n}
    )
    pretraining_prompts: int | None = None  # T: batches drawn from T fixed prompts (many epochs), not fresh ones
    precision: str = schema_default("train", "precision")  # float32 | bfloat16: autocast of the forward pass and loss
    tf32: bool = schema_default("train", "tf32")  # float32 matmuls in TF32 (CUDA's; emulated on the CPU)
    compile: bool = schema_default("train", "compile")  # the training step's forward and backward by torch.compile
    cuda_graphs: bool = schema_default("train", "cuda_graphs")  # with compile, on CUDA: the step as CUDA graphs
    pad_points: int | None = None  # curriculum stages trained at lengths rounded up to multiples of this
    allow_nondeterministic: bool = schema_default("train", "allow_nondeterministic")  # CUDA: run ops without one
    batched: bool = False  # trained in a batched group (the config's batched_training): a name of its own
    capture: bool = schema_default("train", "capture")  # the whole step as one CUDA graph (iclab.fit.capture)

    def __post_init__(self) -> None:
        if self.cuda_graphs and not self.compile:
            raise ValueError("train.cuda_graphs needs train.compile: true (CUDA graphs replay the compiled step)")
        if self.batched and self.compile:
            raise ValueError("train.batched with train.compile: compiled batched groups are not built")
        if self.capture and self.compile:
            raise ValueError("train.capture with train.compile: the captured step is eager, captured whole; "
                             "set one false")
        if self.capture and self.schedule != "constant":
            raise ValueError(f"train.capture with train.schedule {self.schedule!r}: a captured step holds one "
                             "learning rate; allowed: constant")


@dataclass(frozen=True)
class TwoStageConfig:
    t1: int  # pretraining prompts of the stage-1 gradient step
    t2: int  # pretraining prompts of the stage-2 ridge fit (0: stop after stage 1)
    ridge: float  # λ₂ of stage 2
    eta: float = schema_default("stage1_eta")  # stage-1 step size η
    weight_decay: float = schema_default("stage1_weight_decay")  # stage-1 weight decay λ
    chunk: int = schema_default("fit_chunk")  # prompts per chunk
    stage1_queries: str = schema_default("stage1_queries")  # "last": the paper's loss; "all": every point in turn
    max_chunks: int | None = None  # a smoke run (iclab.pipeline.smoke): each stage stops after this many chunks

    def __post_init__(self):
        if self.stage1_queries not in STAGE1_QUERIES:
            raise ValueError(f"stage1_queries={self.stage1_queries!r}: allowed {list(STAGE1_QUERIES)}")

    def stage_chunks(self, prompts: int) -> list[int]:
        """Sizes of the chunks a stage of ``prompts`` prompts feeds (the first ``max_chunks`` in a smoke run)."""
        return chunks(prompts, self.chunk)[: self.max_chunks]


def chunks(total: int, size: int) -> list[int]:
    """Sizes of the chunks that make up ``total`` prompts."""
    return [min(size, total - start) for start in range(0, total, size)]


@dataclass(frozen=True)
class MeanFieldTrainConfig:
    steps: int
    batch_size: int
    lr: float  # mean-field time per step of the particles
    variant: str  # attention | static | modified
    gamma_lr: float = 0.1  # attention: Γ's step size
    gamma_ridge: float = 1e-6  # static, modified: ridge of the closed-form Γ*
    gamma_prompts: int = 2048  # static, modified: prompts of the stored Γ*
    birth_death_rate: float = 0.0  # modified
    perturbation: float = 0.0  # modified: std of the Gaussian added to each particle coordinate per step
    divergence_factor: float = 1e4
    snapshot_every: int | None = None

    def __post_init__(self) -> None:
        if self.variant not in VARIANTS:
            raise ValueError(f"train.variant {self.variant!r} unknown; allowed: {', '.join(VARIANTS)}")
        if self.variant != "modified" and (self.birth_death_rate or self.perturbation):
            raise ValueError(
                f"train.birth_death_rate and train.perturbation belong to variant modified, not {self.variant}"
            )

    @property
    def closed_form_gamma(self) -> bool:
        return self.variant in ("static", "modified")


CONFIGS: dict[str, type] = {
    "lsa": TrainConfig,
    "ltb": TrainConfig,
    "gd_beta": TrainConfig,
    "gpt2": TrainConfig,
    "lstm": TrainConfig,
    "two_stage": TwoStageConfig,
    "mean_field": MeanFieldTrainConfig,
    "feature_attention": TrainConfig,
}


def train_config(model_name: str, fields: dict[str, Any]):
    """The typed ``train`` section of a training spec for model ``model_name``."""
    if model_name not in CONFIGS:
        raise ValueError(f"no fitter for model {model_name!r}; fitted models: {', '.join(CONFIGS)}")
    return CONFIGS[model_name](**fields)
