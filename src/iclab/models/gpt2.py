"""GPT-2 as an in-context learner (Garg et al. 2022; Zhang, Wu, Bartlett 2024, Table 1).

transformers' ``GPT2Model`` is built from a ``GPT2Config`` (never downloaded), without the unused
vocabulary table, dropout 0, with a linear read-in and read-out. Two prompt formats:
- ``interleaved`` (Garg et al.): tokens x₀, y₀, x₁, y₁, …, as (x, 0) and (0, y) in R^{d+1};
  the prediction for position k is read at the token of x_k, which sees x₀, y₀, …, x_k only.
- ``token_matrix`` (Zhang, Wu, Bartlett): one token (x_i, y_i) per example, the query's y slot 0;
  the prediction for position k is read at token k of the prefix whose last label is zeroed
  (for every position at once: one pass of 2K tokens, the K labelled tokens and then the K queries, each query
  seeing what the last token of its own prefix sees; tested against one pass per prefix).
``mlp=False`` removes every block's MLP (GPT2-noMLP): the block computes h + attn(ln_1(h)) exactly.
Predictions run every block but the last on all tokens and the last block only where predictions are read
(``block_at``): the same numbers as transformers' forward pass (tested), with 14% fewer FLOPs a training step of
a 3-layer interleaved model, whose y tokens' last outputs are never read (1.24× faster, benchmarks/bench_gpt2.py).
``residual_init="per_branch"`` draws the output projections with std 0.02/√(residual branches): 2L with MLPs
(transformers' GPT-2 scheme, the default) and L without (Zhang, Wu, Bartlett 2024, Appendix I).
"""

from __future__ import annotations

import torch
from torch import nn
from transformers import GPT2Config, GPT2Model
from transformers.modeling_utils import ALL_ATTENTION_FUNCTIONS
from transformers.models.gpt2.modeling_gpt2 import GPT2Block, eager_attention_forward

from iclab.models.linear import tokens
from iclab.models.prompts import Float32ReadOut, interleave, query_states_by_prefix

FORMATS = ("interleaved", "token_matrix")
RESIDUAL_INITS = ("transformers", "per_branch")


class NoMLP(nn.Module):
    """Stands in for a block's MLP (and its LayerNorm): adds nothing to the residual stream."""

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        return torch.zeros_like(hidden_states)


def build_backbone(
    n_positions: int, n_embd: int, n_layer: int, n_head: int, activation: str, mlp: bool, residual_init: str
) -> GPT2Model:
    config = GPT2Config(  # a fresh config per model: transformers mutates and shares it
        n_positions=n_positions,
        n_embd=n_embd,
        n_layer=n_layer,
        n_head=n_head,
        vocab_size=1,
        resid_pdrop=0.0,
        embd_pdrop=0.0,
        attn_pdrop=0.0,
        use_cache=False,
        activation_function=activation,
        bos_token_id=None,
        eos_token_id=None,
    )
    backbone = GPT2Model(config)
    backbone.wte = None  # inputs arrive as embeddings: no vocabulary table
    if not mlp:
        for block in backbone.h:
            block.mlp, block.ln_2 = NoMLP(), nn.Identity()
        if residual_init == "per_branch":  # one residual branch per block: std 0.02/√L, not transformers' 0.02/√(2L)
            for block in backbone.h:
                nn.init.normal_(block.attn.c_proj.weight, std=config.initializer_range / n_layer**0.5)
    return backbone


def block_at(block: GPT2Block, hidden: torch.Tensor, read: slice, visible: torch.Tensor) -> torch.Tensor:
    """A GPT-2 block's output at the tokens ``read`` only: hidden (B, T, E) → (B, Q, E). Keys and values come from
    every token, queries from the read tokens, each attending to the tokens that ``visible`` (T, T) marks for it;
    the attention runs through the implementation the config names (SDPA, or eager), as in ``GPT2Attention``.
    Feeding the last block this way gives transformers' own numbers at the read tokens."""
    attn = block.attn
    b, t, e = hidden.shape
    shape = (b, -1, attn.num_heads, attn.head_dim)
    normed = block.ln_1(hidden)  # (B, T, E)
    weight, bias = attn.c_attn.weight, attn.c_attn.bias  # Conv1D (E, 3E), (3E,): query | key | value columns
    query = torch.addmm(bias[:e], normed[:, read].reshape(-1, e), weight[:, :e])  # (B·Q, E)
    key, value = torch.addmm(bias[e:], normed.reshape(-1, e), weight[:, e:]).view(b, t, 2 * e).split(e, dim=2)
    query, key, value = (x.view(shape).transpose(1, 2) for x in (query, key, value))  # (B, heads, Q or T, E/heads)
    mask = additive_mask(visible[read], hidden.dtype)  # (1, 1, Q, T)
    attention = ALL_ATTENTION_FUNCTIONS.get_interface(attn.config._attn_implementation, eager_attention_forward)
    attended, _ = attention(attn, query, key, value, mask, dropout=0.0, scaling=attn.scaling, is_causal=False)
    out = hidden[:, read] + attn.c_proj(attended.reshape(b, -1, e))  # (B, Q, E); attended is (B, Q, heads, E/heads)
    return out + block.mlp(block.ln_2(out))


def additive_mask(visible: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """(Q, T) booleans, True where a query may attend → (1, 1, Q, T): 0 there, the dtype's minimum elsewhere."""
    mask = torch.zeros(visible.shape, dtype=dtype, device=visible.device)
    return mask.masked_fill(~visible, torch.finfo(dtype).min)[None, None]


def causal(t: int, device: torch.device) -> torch.Tensor:
    """(T, T) booleans: token i sees tokens 0 … i."""
    order = torch.arange(t, device=device)
    return order[None, :] <= order[:, None]


def query_visibility(k: int, device: torch.device) -> torch.Tensor:
    """(2K, 2K) booleans for K labelled tokens followed by their K queries: labelled token i sees labelled tokens
    0 … i; query k sees labelled tokens 0 … k−1 and itself, as the last token of prefix k does in a pass of its own."""
    earlier = causal(k, device)  # (K, K)
    itself = torch.eye(k, dtype=torch.bool, device=device)  # (K, K)
    labelled = torch.cat([earlier, torch.zeros_like(earlier)], dim=1)  # (K, 2K)
    queries = torch.cat([earlier & ~itself, itself], dim=1)  # (K, 2K)
    return torch.cat([labelled, queries], dim=0)


class GPT2Learner(nn.Module):
    def __init__(
        self,
        d: int,
        n_points: int,
        n_embd: int = 64,
        n_layer: int = 3,
        n_head: int = 2,
        mlp: bool = True,
        prompt_format: str = "interleaved",
        activation: str = "gelu_new",
        residual_init: str = "transformers",
    ):
        super().__init__()
        if prompt_format not in FORMATS:
            raise ValueError(f"unknown prompt_format {prompt_format!r}; allowed: {', '.join(FORMATS)}")
        if residual_init not in RESIDUAL_INITS:
            raise ValueError(f"unknown residual_init {residual_init!r}; allowed: {', '.join(RESIDUAL_INITS)}")
        self.d, self.prompt_format = d, prompt_format
        self.max_points = n_points  # position embeddings exist for this many points
        n_positions = 2 * n_points if prompt_format == "interleaved" else n_points
        self.backbone = build_backbone(n_positions, n_embd, n_layer, n_head, activation, mlp, residual_init)
        self.read_in = nn.Linear(d + 1, n_embd)
        self.read_out = Float32ReadOut(n_embd, 1)

    def embed(self, xs: torch.Tensor, ys: torch.Tensor) -> torch.Tensor:
        """Input tokens: (B, 2K, d+1) interleaved or (B, K, d+1) token matrix."""
        return tokens(xs, ys) if self.prompt_format == "token_matrix" else interleave(xs, ys)

    def hidden_states(self, xs: torch.Tensor, ys: torch.Tensor) -> torch.Tensor:
        """Residual stream at every layer (0 = embeddings) and every token: (L+1, B, T, n_embd)."""
        out = self.backbone(inputs_embeds=self.read_in(self.embed(xs, ys)), output_hidden_states=True)
        return torch.stack(out.hidden_states)

    def layer_states(self, xs: torch.Tensor, ys: torch.Tensor) -> torch.Tensor:
        """The residual stream where position k's prediction is read (its x token), every layer:
        (L+1, B, K, n_embd). Index 0 is the embedding; only index L carries the final LayerNorm
        (as transformers returns it), so ``read_out`` on index L is the model's own prediction."""
        self.require_interleaved("layer_states")
        return self.hidden_states(xs, ys)[:, :, 0::2]

    def query_layer_states(self, xs: torch.Tensor, ys: torch.Tensor, queries: torch.Tensor) -> torch.Tensor:
        """``layer_states`` at T fresh queries given each prefix as context: queries (B, K, T, d) →
        (L+1, B, K, T, n_embd), by ``prompts.query_states_by_prefix``."""
        self.require_interleaved("query_layer_states")
        return query_states_by_prefix(self.layer_states, xs, ys, queries)

    def require_interleaved(self, what: str) -> None:
        if self.prompt_format != "interleaved":
            raise ValueError(
                f"{what} needs prompt_format 'interleaved' (one token per x, where its prediction is read), "
                f"got {self.prompt_format!r}"
            )

    def read_states(
        self,
        inputs: torch.Tensor,
        read: slice,
        positions: torch.Tensor | None = None,
        visible: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """Last layer's output (with the final LayerNorm) at the tokens ``read``: inputs (B, T, d+1) → (B, Q, n_embd).
        transformers' forward pass (embeddings plus positions, the blocks, ``ln_f``) with the last block run at
        the read tokens only. By default token t has position t and sees tokens 0 … t; ``positions`` (T,) and
        ``visible`` (T, T) give another layout (``query_predictions``)."""
        embeds = self.read_in(inputs)  # (B, T, E)
        t = embeds.shape[1]
        if visible is None:
            positions, visible = torch.arange(t, device=embeds.device), causal(t, embeds.device)
            mask = self.causal_mask(visible, embeds.dtype)
        else:
            mask = additive_mask(visible, embeds.dtype)  # (1, 1, T, T)
        hidden = embeds + self.backbone.wpe(positions)[None]  # dropout 0
        for block in self.backbone.h[:-1]:
            hidden = block(hidden, attention_mask=mask)
        return self.backbone.ln_f(block_at(self.backbone.h[-1], hidden, read, visible))

    def causal_mask(self, visible: torch.Tensor, dtype: torch.dtype) -> torch.Tensor | None:
        """The blocks' mask for plain causal attention: None under SDPA (its ``is_causal``, flash attention's path;
        what transformers' ``create_causal_mask`` returns there too, after testing a device tensor in a Python ``if``:
        a host sync each forward pass on CUDA), else the additive mask of ``visible`` (T, T) → (1, 1, T, T)."""
        return None if self.backbone.config._attn_implementation == "sdpa" else additive_mask(visible, dtype)

    def forward(self, xs: torch.Tensor, ys: torch.Tensor, last_only: bool = False) -> torch.Tensor:
        """Predictions (B, K), or (B, 1) for the final query with ``last_only``."""
        if self.prompt_format == "interleaved":
            inputs = interleave(xs, ys)  # (B, 2K, d+1)
            read = slice(-2, -1) if last_only else slice(0, None, 2)  # the final x token, or every x token
            return self.read_out(self.read_states(inputs, read))[..., 0]  # (B, K) or (B, 1)
        if last_only:
            hidden = torch.cat([ys[:, :-1], torch.zeros_like(ys[:, -1:])], dim=1)  # the query's label hidden
            return self.read_out(self.read_states(tokens(xs, hidden), slice(-1, None)))[..., 0]  # (B, 1)
        return self.query_predictions(xs, ys)

    def query_predictions(self, xs: torch.Tensor, ys: torch.Tensor) -> torch.Tensor:
        """Token-matrix predictions at every position, (B, K): for each k the last token of the prefix of k + 1
        points, its label hidden. One pass over the K labelled tokens (x_i, y_i) and then the K queries (x_k, 0),
        query k at position k and seeing what the last token of its prefix sees (``query_visibility``): the states
        of K passes, one per prefix, in one pass of 2K tokens."""
        k = xs.shape[1]
        inputs = torch.cat([tokens(xs, ys), tokens(xs, torch.zeros_like(ys))], dim=1)  # (B, 2K, d+1)
        order = torch.arange(k, device=xs.device)
        visible = query_visibility(k, xs.device)
        return self.read_out(self.read_states(inputs, slice(k, None), torch.cat([order, order]), visible))[..., 0]
