"""Transformer arithmetic: parameters, FLOPs per token, training and inference memory.

Every function states its formula and source. Conventions: N is the non-embedding parameter
count, d the model width, L layers, V vocabulary, s context length, h_kv the key/value heads.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, fields
from importlib import resources
from pathlib import Path

from ..errors import TokstatError

BYTES = {"fp32": 4, "bf16": 2, "fp16": 2, "int8": 1, "int4": 0.5}


@dataclass(frozen=True)
class ModelConfig:
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
    name: str = "custom"
    source: str = ""

    def __post_init__(self):
        for f in ("d_model", "layers", "heads", "kv_heads", "d_ff", "vocab_size", "context"):
            if getattr(self, f) <= 0:
                raise TokstatError(f"{f} must be positive, got {getattr(self, f)}", fix=f"pass a positive --{f.replace('_', '-')}")
        if self.d_model % self.heads:
            raise TokstatError(f"heads ({self.heads}) do not divide d_model ({self.d_model})",
                               fix="choose heads so that d_model / heads is an integer")
        if self.heads % self.kv_heads:
            raise TokstatError(f"kv_heads ({self.kv_heads}) do not divide heads ({self.heads})",
                               fix="grouped-query attention needs heads to be a multiple of kv_heads")
        if self.mlp not in ("gelu", "swiglu"):
            raise TokstatError(f"unknown mlp {self.mlp!r}", fix="use gelu or swiglu")

    @property
    def head_dim(self) -> int:
        return self.d_model // self.heads

    def with_vocab(self, vocab_size: int) -> ModelConfig:
        return ModelConfig(**{**{f.name: getattr(self, f.name) for f in fields(self)}, "vocab_size": vocab_size})


def load_presets(extra: str | Path | None = None) -> dict[str, ModelConfig]:
    """Built-in presets (``presets.toml``) plus a user TOML file of the same shape."""
    data = tomllib.loads(resources.files("tokstat.cost").joinpath("presets.toml").read_text(encoding="utf-8"))
    if extra is not None:
        p = Path(extra)
        if not p.is_file():
            raise TokstatError("models file not found", path=p, fix="check the path (a TOML file of [name] tables)")
        try:
            data.update(tomllib.loads(p.read_text(encoding="utf-8")))
        except (OSError, tomllib.TOMLDecodeError) as e:
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


def embedding_params(m: ModelConfig) -> int:
    """V·d for the input embedding, + V·d for an untied output (unembedding) matrix, + s·d for learned positions."""
    return m.vocab_size * m.d_model * (1 if m.tied else 2) + (m.context * m.d_model if m.pos == "learned" else 0)


def layer_params(m: ModelConfig) -> int:
    """One block: attention W_q, W_o (d·d each) and W_k, W_v (d·h_kv·d_head each), the MLP
    (2·d·d_ff for GELU, 3·d·d_ff for SwiGLU), two norms (2·d; GPT-2 LayerNorm also has biases, 4·d)
    and, for GPT-2-style models, the linear biases."""
    d, kv = m.d_model, m.kv_heads * m.head_dim
    attn = 2 * d * d + 2 * d * kv
    mlp = (3 if m.mlp == "swiglu" else 2) * d * m.d_ff
    if m.pos == "learned":  # GPT-2/3: biases on every linear layer and LayerNorm weights + biases
        return attn + mlp + (d + 2 * kv + d) + (m.d_ff + d) + 4 * d
    return attn + mlp + 2 * d + ((d + 2 * kv) if m.qkv_bias else 0)


def non_embedding_params(m: ModelConfig) -> int:
    """N = L · layer_params + the final norm (Kaplan et al. 2020 exclude embeddings from N)."""
    return m.layers * layer_params(m) + (2 if m.pos == "learned" else 1) * m.d_model


def total_params(m: ModelConfig) -> int:
    return non_embedding_params(m) + embedding_params(m)


def forward_flops_per_token(m: ModelConfig, context: int | None = None, causal: bool = True) -> float:
    """C_fwd = 2·N + 2·d·V + attention (Kaplan et al. 2020, Table 1, plus the unembedding).

    The attention term (QKᵀ and AV) is 2·L·s·d per token over the whole context; a causal mask
    halves it on average (token t attends to t tokens): L·s·d. 2·d·V is the logits matmul.
    """
    s = context or m.context
    attn = 2 * m.layers * s * m.d_model * (0.5 if causal else 1.0)
    return 2 * non_embedding_params(m) + 2 * m.d_model * m.vocab_size + attn


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


def kv_cache_bytes_per_token(m: ModelConfig, dtype: str = "bf16") -> float:
    """2 (K and V) · L · h_kv · d_head · bytes; grouped-query attention stores only h_kv heads."""
    return 2 * m.layers * m.kv_heads * m.head_dim * BYTES[dtype]


def inference_weight_bytes(m: ModelConfig, dtype: str = "bf16") -> float:
    """All parameters at the serving precision (bf16 2 B, int8 1 B, int4 0.5 B)."""
    return total_params(m) * BYTES[dtype]


def allreduce_seconds(m: ModelConfig, gpus: int, bandwidth_gb_s: float, dtype: str = "bf16") -> float:
    """Ring all-reduce of the gradients: each GPU sends and receives 2·(n−1)/n · bytes
    (Patarasuk & Yuan 2009) over its link of ``bandwidth_gb_s`` GB/s."""
    if gpus <= 1:
        return 0.0
    return 2 * (gpus - 1) / gpus * total_params(m) * BYTES[dtype] / (bandwidth_gb_s * 1e9)
