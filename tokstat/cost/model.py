"""Transformer arithmetic: parameters, FLOPs per token, training and inference memory.

Every function states its formula and source. Conventions: N is the non-embedding parameter
count, d the model width, L layers, V vocabulary, s context length, h_kv the key/value heads.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, fields
from importlib import resources
from pathlib import Path

from ..errors import TokstatError

BYTES = {"fp32": 4, "bf16": 2, "fp16": 2, "fp8": 1, "int8": 1, "int4": 0.5}


@dataclass(frozen=True)
class ModelConfig:
    """A decoder-only transformer. Beyond the dense shape (``d_model``, ``layers``, ``heads``,
    ``kv_heads``, ``d_ff``): ``head_dim`` when it is not d/heads (Mistral-NeMo, Qwen3: 128);
    mixture-of-experts (``experts`` routed experts, ``experts_per_token`` of them active,
    ``shared_experts`` always active, each with ``expert_d_ff``; the first ``dense_layers`` layers
    are dense with ``d_ff``); multi-head latent attention (``attention="mla"``: ``q_lora_rank``,
    ``kv_lora_rank``, ``qk_nope_head_dim``, ``qk_rope_head_dim``, ``v_head_dim``, DeepSeek-V2/V3);
    ``sliding_window`` (keys attended per token, 0 = the whole context) on every layer, or, with
    ``global_every`` = k, on all but every k-th layer, which attends to the whole context (Gemma 2:
    k = 2, local and global layers alternating; Gemma 3: k = 6, five local layers to one global);
    ``qk_norm`` (per-head RMSNorm on queries and keys, Qwen3, Gemma 3); ``norms_per_layer`` (2, or 4
    for Gemma's norms before and after each sub-block); ``mlp`` ``gelu``, ``swiglu`` or ``geglu``
    (gated: three matrices, as SwiGLU)."""

    d_model: int
    layers: int
    heads: int
    kv_heads: int
    d_ff: int
    vocab_size: int
    context: int
    tied: bool = False
    mlp: str = "swiglu"
    pos: str = "rope"
    qkv_bias: bool = False
    head_dim: int = 0
    experts: int = 0
    experts_per_token: int = 0
    shared_experts: int = 0
    expert_d_ff: int = 0
    dense_layers: int = 0
    attention: str = "mha"
    q_lora_rank: int = 0
    kv_lora_rank: int = 0
    qk_nope_head_dim: int = 0
    qk_rope_head_dim: int = 0
    v_head_dim: int = 0
    sliding_window: int = 0
    global_every: int = 0
    qk_norm: bool = False
    norms_per_layer: int = 2
    seq_len: int = 0                    # pre-training sequence length (0: the context)
    seq_len_source: str = ""
    name: str = "custom"
    source: str = ""

    def __post_init__(self):
        for f in ("d_model", "layers", "heads", "kv_heads", "d_ff", "vocab_size", "context"):
            if getattr(self, f) <= 0:
                raise TokstatError(f"{f} must be positive, got {getattr(self, f)}", fix=f"pass a positive --{f.replace('_', '-')}")
        for f in ("head_dim", "experts", "experts_per_token", "shared_experts", "expert_d_ff", "dense_layers",
                  "q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim", "sliding_window",
                  "seq_len", "global_every", "norms_per_layer"):
            if getattr(self, f) < 0:
                raise TokstatError(f"{f} must not be negative, got {getattr(self, f)}", fix=f"pass {f} >= 0")
        if not self.head_dim and self.d_model % self.heads:
            raise TokstatError(f"heads ({self.heads}) do not divide d_model ({self.d_model})",
                               fix="choose heads so that d_model / heads is an integer, or give head_dim")
        if self.heads % self.kv_heads:
            raise TokstatError(f"kv_heads ({self.kv_heads}) do not divide heads ({self.heads})",
                               fix="grouped-query attention needs heads to be a multiple of kv_heads")
        if self.mlp not in ("gelu", "swiglu", "geglu"):
            raise TokstatError(f"unknown mlp {self.mlp!r}", fix="use gelu, swiglu or geglu")
        if self.global_every and not self.sliding_window:
            raise TokstatError("global_every needs a sliding_window (the local layers' window)",
                               fix="give sliding_window, or drop global_every")
        if self.attention not in ("mha", "mla"):
            raise TokstatError(f"unknown attention {self.attention!r}", fix="use mha (incl. GQA/MQA) or mla")
        if self.attention == "mla" and not (self.kv_lora_rank and self.qk_nope_head_dim and self.v_head_dim):
            raise TokstatError("mla attention needs kv_lora_rank, qk_nope_head_dim, qk_rope_head_dim and v_head_dim",
                               fix="copy them from the model's config.json")
        if self.experts and not (0 < self.experts_per_token <= self.experts and self.expert_d_ff):
            raise TokstatError(f"a mixture of {self.experts} experts needs 0 < experts_per_token <= experts and expert_d_ff",
                               fix="copy num_experts_per_tok and moe_intermediate_size from config.json")
        if self.dense_layers > self.layers:
            raise TokstatError(f"dense_layers ({self.dense_layers}) exceed layers ({self.layers})", fix="check the shape")

    @property
    def d_head(self) -> int:
        """Width of one attention head (``head_dim``, else d/heads)."""
        return self.head_dim or self.d_model // self.heads

    @property
    def d_qk(self) -> int:
        """Query/key width per head (MLA: the non-positional plus the rotary part)."""
        return self.qk_nope_head_dim + self.qk_rope_head_dim if self.attention == "mla" else self.d_head

    @property
    def d_v(self) -> int:
        return self.v_head_dim if self.attention == "mla" else self.d_head

    @property
    def layer_windows(self) -> list[tuple[int, int]]:
        """``[(layers, window), ...]``: how many layers attend through which window (0 = the whole
        context).

        >>> ModelConfig(8, 6, 2, 2, 8, 10, 64, sliding_window=16, global_every=3).layer_windows
        [(4, 16), (2, 0)]
        """
        if not self.sliding_window:
            return [(self.layers, 0)]
        if not self.global_every:
            return [(self.layers, self.sliding_window)]
        g = self.layers // self.global_every
        return [(self.layers - g, self.sliding_window), (g, 0)]

    @property
    def moe_layers(self) -> int:
        return self.layers - self.dense_layers if self.experts else 0

    def with_vocab(self, vocab_size: int) -> ModelConfig:
        return ModelConfig(**{**{f.name: getattr(self, f.name) for f in fields(self)}, "vocab_size": vocab_size})


def load_presets(extra: str | Path | None = None) -> dict[str, ModelConfig]:
    """Built-in presets (``presets.toml``) plus a user TOML file of the same shape."""
    data = tomllib.loads(resources.files("tokstat.cost").joinpath("presets.toml").read_text(encoding="utf-8"))
    if extra is not None:
        from ..io import read_input

        p = Path(extra)
        if not os.path.lexists(p):
            raise TokstatError("models file not found", path=p, fix="check the path (a TOML file of [name] tables)")
        raw = read_input(p, "models file")
        try:
            data.update(tomllib.loads(raw.decode("utf-8")))
        except UnicodeDecodeError as e:
            raise TokstatError(f"invalid UTF-8 at byte {e.start}", path=p, fix="save the models file as UTF-8") from None
        except tomllib.TOMLDecodeError as e:
            raise TokstatError(f"cannot read model presets ({e})", path=p, fix="write [name] tables of model fields") from None
    out = {}
    for name, d in data.items():
        try:
            out[name] = ModelConfig(name=name, **d)
        except TypeError as e:
            raise TokstatError(f"preset {name!r}: {e}", path=extra, fix="use the fields of presets.toml") from None
    return out


def preset(name: str, extra: str | Path | None = None) -> ModelConfig:
    ps = load_presets(extra)
    if name not in ps:
        raise TokstatError(f"unknown model preset {name!r}", fix=f"use one of {', '.join(ps)} or --models-file")
    return ps[name]


def model_config(name: str | None = None, models_file: str | Path | None = None, **shape) -> ModelConfig:
    """A preset by ``name`` with any ``shape`` field overridden, or (no name) an explicit shape; unset
    (``None``) fields are ignored. ``kv_heads`` defaults to ``heads`` (multi-head attention).

    >>> model_config("llama2-7b", d_ff=None).d_ff
    11008
    >>> model_config(d_model=512, layers=2, heads=8).d_ff
    Traceback (most recent call last):
    ...
    tokstat.errors.TokstatError: missing --d-ff, --vocab-size, --context (fix: pass --model PRESET or every shape option)
    """
    given = {k: v for k, v in shape.items() if v is not None}
    unknown = set(given) - {f.name for f in fields(ModelConfig)}
    if unknown:
        raise TokstatError(f"unknown model field(s) {', '.join(sorted(unknown))}", fix="see tokstat model-info --help")
    if name:
        base = preset(name, models_file)
        return ModelConfig(**{**{f.name: getattr(base, f.name) for f in fields(base)}, **given}) if given else base
    missing = [k for k in ("d_model", "layers", "heads", "d_ff", "vocab_size", "context") if k not in given]
    if missing:
        raise TokstatError(f"missing {', '.join('--' + k.replace('_', '-') for k in missing)}",
                           fix="pass --model PRESET or every shape option")
    given.setdefault("kv_heads", given["heads"])
    return ModelConfig(**given)


def train_seq_len(m: ModelConfig, seq_len: int | None = None) -> int:
    """The sequence length training is priced at: ``seq_len`` if given, else the preset's
    pre-training length (``seq_len``), else its context. A length beyond the context is refused.

    >>> train_seq_len(preset("llama3.1-405b")), preset("llama3.1-405b").context, train_seq_len(preset("gpt2-small"), 512)
    (8192, 131072, 512)
    """
    s = seq_len if seq_len is not None else (m.seq_len or m.context)
    if not isinstance(s, int) or isinstance(s, bool) or not 1 <= s <= m.context:
        raise TokstatError(f"--seq-len must be a whole number of tokens in [1, {m.context:,}] ({m.name}'s context), got {s}",
                           fix=f"e.g. --seq-len {m.seq_len or m.context}")
    return s


def embedding_params(m: ModelConfig) -> int:
    """V·d for the input embedding, + V·d for an untied output (unembedding) matrix, + s·d for learned positions."""
    return m.vocab_size * m.d_model * (1 if m.tied else 2) + (m.context * m.d_model if m.pos == "learned" else 0)


def attention_params(m: ModelConfig) -> int:
    """One attention block. MHA/GQA: W_q and W_o (d·h·d_head each), W_k and W_v (d·h_kv·d_head
    each), optional q/k/v biases and per-head q/k norms. MLA (DeepSeek-V2 §2.1): queries through a
    rank-``q_lora_rank`` bottleneck (or directly), keys and values from one ``kv_lora_rank`` latent
    plus a shared rotary key, each low-rank input normalised; W_o from h·d_v."""
    d, h = m.d_model, m.heads
    if m.attention == "mla":
        q_out = h * (m.qk_nope_head_dim + m.qk_rope_head_dim)
        q = d * m.q_lora_rank + m.q_lora_rank + m.q_lora_rank * q_out if m.q_lora_rank else d * q_out
        kv = d * (m.kv_lora_rank + m.qk_rope_head_dim) + m.kv_lora_rank + m.kv_lora_rank * h * (m.qk_nope_head_dim + m.v_head_dim)
        return q + kv + h * m.v_head_dim * d
    q, kv = h * m.d_head, m.kv_heads * m.d_head
    bias = (q + 2 * kv) if m.qkv_bias else 0
    return 2 * d * q + 2 * d * kv + bias + (2 * m.d_head if m.qk_norm else 0)


def mlp_params(m: ModelConfig, d_ff: int) -> int:
    """One feed-forward block of width ``d_ff``: 3·d·d_ff (gated: SwiGLU, GeGLU) or 2·d·d_ff (GELU)."""
    return (3 if m.mlp in ("swiglu", "geglu") else 2) * m.d_model * d_ff


def moe_params(m: ModelConfig, active: bool = False) -> int:
    """One mixture-of-experts block: the router (d·experts), the routed experts (all of them, or the
    ``experts_per_token`` a token uses) and the shared experts (always used)."""
    routed = m.experts_per_token if active else m.experts
    return m.d_model * m.experts + (routed + m.shared_experts) * mlp_params(m, m.expert_d_ff)


def layer_params(m: ModelConfig, moe: bool = False, active: bool = False) -> int:
    """One block: attention, the MLP (dense, or a mixture of experts), ``norms_per_layer`` norms
    (2·d; Gemma 4·d; GPT-2 LayerNorm also has biases, 4·d) and, for GPT-2-style models, the linear
    biases."""
    d = m.d_model
    ffn = moe_params(m, active) if moe else mlp_params(m, m.d_ff)
    if m.pos == "learned":  # GPT-2/3: biases on every linear layer and LayerNorm weights + biases
        kv = m.kv_heads * m.d_head
        return attention_params(m) + ffn + (d + 2 * kv + d) + (m.d_ff + d) + 4 * d
    return attention_params(m) + ffn + m.norms_per_layer * d


def non_embedding_params(m: ModelConfig, active: bool = False) -> int:
    """N = the layers (dense first, then mixture-of-experts) + the final norm (Kaplan et al. 2020
    exclude embeddings from N); ``active``: only the experts one token uses."""
    dense = m.layers - m.moe_layers
    return (dense * layer_params(m) + m.moe_layers * layer_params(m, moe=True, active=active)
            + (2 if m.pos == "learned" else 1) * m.d_model)


def total_params(m: ModelConfig) -> int:
    """Every parameter (what memory must hold, all experts included)."""
    return non_embedding_params(m) + embedding_params(m)


def active_params(m: ModelConfig) -> int:
    """The parameters one token runs through (what compute pays for): dense models = total."""
    return non_embedding_params(m, active=True) + embedding_params(m)


def attended_keys(m: ModelConfig, context: int, causal: bool = True) -> float:
    """Mean number of keys a token attends to in a sequence of ``context`` tokens, over the layers:
    (s+1)/2 with a causal mask (token t sees t keys), s without; a sliding window w caps each at w
    on the layers that have it (:attr:`ModelConfig.layer_windows`).

    >>> m = model_config("mistral-7b")
    >>> attended_keys(m, 4), attended_keys(m, 4, causal=False)
    (2.5, 4.0)
    >>> g = model_config("gemma2-9b")      # half the layers local (4,096), half global
    >>> attended_keys(g, 8192, causal=False) == (4096 + 8192) / 2
    True
    """
    s = context
    total = 0.0
    for n, w in m.layer_windows:
        if not causal:
            k = min(s, w) if w else s
        elif not w or w >= s:
            k = (s + 1) / 2
        else:
            k = (w * (w + 1) / 2 + (s - w) * w) / s
        total += n * k
    return total / m.layers


def attention_flops_per_token(m: ModelConfig, context: int | None = None, causal: bool = True) -> float:
    """Scores QKᵀ (2·h·d_qk per key) and the weighted sum AV (2·h·d_v per key), per layer, over
    the keys a token attends to: forward ≈ 2·L·s·d_attn for a causal sequence of s tokens (4·L·s·d_attn
    without the mask, as in PaLM App. B and Chinchilla App. F, which count the full square)."""
    s = context or m.context
    return m.layers * 2 * m.heads * (m.d_qk + m.d_v) * attended_keys(m, s, causal)


def forward_flops_per_token(m: ModelConfig, context: int | None = None, causal: bool = True) -> float:
    """C_fwd = 2·N_active + 2·d·V + attention (Kaplan et al. 2020, Table 1, with the unembedding
    logits matmul 2·d·V and the attention of :func:`attention_flops_per_token`). A mixture of
    experts pays for the experts a token uses; the router is in N."""
    return (2 * non_embedding_params(m, active=True) + 2 * m.d_model * m.vocab_size
            + attention_flops_per_token(m, context, causal))


def training_flops_per_token(m: ModelConfig, context: int | None = None, recompute: bool = False) -> float:
    """Backward ≈ 2× forward, so training = 3× forward (≈ 6·N per token); full activation
    recomputation runs the forward twice: 4× forward."""
    return (4 if recompute else 3) * forward_flops_per_token(m, context)


def training_memory_bytes(m: ModelConfig, *, micro_batch: int = 1, context: int | None = None,
                          recompute: str = "none") -> dict[str, float]:
    """Mixed-precision AdamW: bf16 weights (2 B) + bf16 grads (2 B) + fp32 master weights, m and v
    (12 B) = 16 B/parameter. Activations per layer (Korthikanti et al. 2022, no tensor/sequence
    parallelism): s·b·d·(34 + 5·a·s/d) bytes without recomputation, 34·s·b·d with selective
    recomputation of attention, 2·s·b·d (the layer input) with full recomputation. Logits: b·s·V in fp32."""
    s, b, d = context or m.context, micro_batch, m.d_model
    n = total_params(m)
    per_layer = {"none": s * b * d * (34 + 5 * m.heads * s / d), "selective": 34 * s * b * d,
                 "full": 2 * s * b * d}
    if recompute not in per_layer:
        raise TokstatError(f"unknown recompute {recompute!r}", fix="use none, selective or full")
    return {"weights": 2 * n, "gradients": 2 * n, "optimizer": 12 * n,
            "activations": m.layers * per_layer[recompute], "logits": 4 * b * s * m.vocab_size}


def check_split(m: ModelConfig, tp: int, pp: int) -> None:
    """A tensor-parallel degree must divide the attention heads (and the key/value heads, or be a
    multiple of them, each GPU then holding copies) and a pipeline cannot have more stages than layers.

    >>> check_split(preset("llama2-7b"), 6, 1)
    Traceback (most recent call last):
    ...
    tokstat.errors.TokstatError: --tp 6 does not divide llama2-7b's 32 attention heads (fix: use --tp 1, 2, 4, 8, 16 or 32)
    """
    if m.heads % tp:
        ok = [t for t in range(1, m.heads + 1) if m.heads % t == 0 and (m.kv_heads % t == 0 or t % m.kv_heads == 0)]
        raise TokstatError(f"--tp {tp} does not divide {m.name}'s {m.heads} attention heads",
                           fix="use --tp " + ", ".join(map(str, ok[:-1])) + f" or {ok[-1]}")
    if m.kv_heads % tp and tp % m.kv_heads:
        raise TokstatError(f"--tp {tp} neither divides nor is a multiple of {m.name}'s {m.kv_heads} key/value heads",
                           fix=f"use a --tp that divides {m.kv_heads} or is a multiple of it")
    if pp > m.layers:
        raise TokstatError(f"--pp {pp} is more pipeline stages than {m.name}'s {m.layers} layers",
                           fix=f"use --pp {m.layers} or fewer")


def smallest_fitting_split(m: ModelConfig, memory_bytes: float, gpus: int, *, zero: int = 1, recompute: str = "selective",
                           micro_batch: int = 1, context: int | None = None) -> tuple[int, int, float] | None:
    """``(tp, pp, bytes per GPU)`` of the smallest tensor × pipeline split of ``gpus`` (tp·pp
    dividing them; tp within the heads as :func:`check_split` allows, pp at most the layers) whose
    per-GPU training memory fits ``memory_bytes``, fewest GPUs per model replica first, then the
    smaller tp; None when none does.

    >>> smallest_fitting_split(preset("llama3-8b"), 80e9, 8, context=8192)[:2]
    (1, 2)
    """
    cands = []
    for tp in range(1, m.heads + 1):
        if m.heads % tp or (m.kv_heads % tp and tp % m.kv_heads):
            continue
        for pp in range(1, m.layers + 1):
            if gpus % (tp * pp):
                continue
            cands.append((tp * pp, tp, pp))
    for _, tp, pp in sorted(cands):
        need = sum(training_memory_per_gpu(m, dp=gpus // (tp * pp), tp=tp, pp=pp, zero=zero, recompute=recompute,
                                           micro_batch=micro_batch, context=context).values())
        if need <= memory_bytes:
            return tp, pp, need
    return None


def training_memory_per_gpu(m: ModelConfig, *, dp: int = 1, tp: int = 1, pp: int = 1, zero: int = 0,
                            recompute: str = "selective", micro_batch: int = 1, context: int | None = None) -> dict[str, float]:
    """Bytes one GPU holds while training with data (``dp``), tensor (``tp``, with sequence
    parallelism) and pipeline (``pp``) parallelism and ZeRO stage ``zero`` (Rajbhandari et al. 2020):

    - weights 2·P, gradients 2·P, optimizer 12·P (fp32 master, m, v) per model replica, each split
      over tp·pp; ZeRO-1 also splits the optimizer over dp, ZeRO-2 the gradients too, ZeRO-3 the
      weights too. P is *all* parameters (every expert of a mixture).
    - activations (Korthikanti et al. 2022, eq. 2–5, with sequence parallelism): per layer
      s·b·d·(34 + 5·a·s/d)/tp without recomputation, 34·s·b·d/tp selective (no s² score term, as with
      FlashAttention), 2·s·b·d/tp full; 1F1B pipelining keeps pp micro-batches of L/pp layers in
      flight on the first stage, i.e. L layers' worth whatever pp.
    - the fp32 logits of the last stage, 4·b·s·V/tp.
    """
    for k, v in (("dp", dp), ("tp", tp), ("pp", pp), ("micro_batch", micro_batch)):
        if v < 1:
            raise TokstatError(f"{k} must be at least 1, got {v}", fix=f"pass --{k.replace('_', '-')} 1 or more")
    if zero not in (0, 1, 2, 3):
        raise TokstatError(f"ZeRO stage {zero} does not exist", fix="use --zero 0, 1, 2 or 3")
    check_split(m, tp, pp)
    s, b, d = context or m.context, micro_batch, m.d_model
    per_layer = {"none": s * b * d * (34 + 5 * m.heads * s / d), "selective": 34 * s * b * d, "full": 2 * s * b * d}
    if recompute not in per_layer:
        raise TokstatError(f"unknown recompute {recompute!r}", fix="use none, selective or full")
    shard = total_params(m) / (tp * pp)
    return {"weights": 2 * shard / (dp if zero >= 3 else 1), "gradients": 2 * shard / (dp if zero >= 2 else 1),
            "optimizer": 12 * shard / (dp if zero >= 1 else 1), "activations": m.layers * per_layer[recompute] / tp,
            "logits": 4 * b * s * m.vocab_size / tp}


def kv_cache_bytes_per_token(m: ModelConfig, dtype: str = "bf16") -> float:
    """2 (K and V) · L · h_kv · d_head · bytes; grouped-query attention stores only h_kv heads.
    MLA caches the latent and the rotary key instead: L · (kv_lora_rank + qk_rope_head_dim) · bytes."""
    if m.attention == "mla":
        return m.layers * (m.kv_lora_rank + m.qk_rope_head_dim) * BYTES[dtype]
    return 2 * m.layers * m.kv_heads * m.d_head * BYTES[dtype]


def kv_cache_tokens(m: ModelConfig, context: float) -> float:
    """Tokens whose keys and values are held for a sequence of ``context``, per layer on average: a
    layer with a sliding window keeps w, a global layer all of them (:attr:`ModelConfig.layer_windows`)."""
    return sum(n * (min(context, w) if w else context) for n, w in m.layer_windows) / m.layers


def tp_allreduce_seconds(m: ModelConfig, tokens: float, gpus: int, g) -> float:
    """Tensor-parallel serving over ``gpus`` of accelerator ``g``: two all-reduces of the
    activations (tokens·d bf16) per layer (after attention and after the MLP; Shoeybi et al. 2019),
    each a ring all-reduce with its latency (:func:`~tokstat.cost.hardware.ring_allreduce_seconds`)."""
    from .hardware import ring_allreduce_seconds

    if gpus <= 1:
        return 0.0
    return 2 * m.layers * ring_allreduce_seconds(tokens * m.d_model * 2, gpus, g)


def inference_weight_bytes(m: ModelConfig, dtype: str = "bf16") -> float:
    """All parameters at the serving precision (bf16 2 B, int8 1 B, int4 0.5 B)."""
    return total_params(m) * BYTES[dtype]


def decode_step_flops(m: ModelConfig, batch: int, context: float) -> float:
    """One decoding step of ``batch`` sequences with ``context`` tokens of cache: each new token
    attends to every cached key (``context``, capped by a sliding window), not the causal mean.

    >>> m = preset("llama2-7b")
    >>> decode_step_flops(m, 1, 1000) == forward_flops_per_token(m, 1000, causal=False)
    True
    """
    return batch * forward_flops_per_token(m, context=max(int(context), 1), causal=False)


def decode_step_bytes(m: ModelConfig, batch: int, context: float, weights: str = "bf16", kv_dtype: str = "bf16") -> float:
    """Bytes one decoding step reads: every weight matrix except the input embedding table, of
    which only the ``batch`` rows looked up are read (an untied table; a tied one is read whole as
    the output projection), and the batch's KV caches.

    >>> m = preset("llama2-7b")
    >>> inference_weight_bytes(m) - decode_step_bytes(m, 1, 0) == (m.vocab_size - 1) * m.d_model * 2
    True
    """
    skipped = 0 if m.tied else (m.vocab_size - min(batch, m.vocab_size)) * m.d_model * BYTES[weights]
    return (inference_weight_bytes(m, weights) - skipped
            + batch * kv_cache_bytes_per_token(m, kv_dtype) * kv_cache_tokens(m, context))


def allreduce_seconds(m: ModelConfig, gpus: int, g, dtype: str = "bf16") -> float:
    """Ring all-reduce of the gradients (all parameters at ``dtype``) over ``gpus`` of accelerator
    ``g`` (:func:`~tokstat.cost.hardware.ring_allreduce_seconds`: per-direction bandwidth and NCCL's
    latency model)."""
    from .hardware import ring_allreduce_seconds

    return ring_allreduce_seconds(total_params(m) * BYTES[dtype], gpus, g)
