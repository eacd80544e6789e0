"""Rows of ``tokstat model-info``: each quantity, its value and the formula behind it."""

from __future__ import annotations

from .model import (ModelConfig, active_params, attention_flops_per_token, embedding_params, forward_flops_per_token,
                    inference_weight_bytes, kv_cache_bytes_per_token, non_embedding_params, total_params,
                    kv_cache_tokens, train_seq_len, training_flops_per_token, training_memory_bytes)


def _n(x: float) -> str:
    for unit, k in (("T", 1e12), ("B", 1e9), ("M", 1e6), ("K", 1e3)):
        if abs(x) >= k:
            return f"{x / k:.3f}{unit}"
    return f"{x:.0f}"


def _gib(x: float) -> str:
    # decimal GB/MB, as in every cost column and the accelerator catalogue (80 GB, 141 GB)
    return f"{x / 1e9:.2f} GB" if x >= 1e9 else f"{x / 1e6:.3f} MB"


def model_summary(m: ModelConfig, context: int | None = None, seq_len: int | None = None) -> dict:
    """``tokstat model-info --json``: the model's numbers under stable keys (docs/cost-model.md).
    Forward and attention FLOPs are per token of a causal sequence of ``context`` tokens (default
    the preset's context); training FLOPs per token at ``seq_len``, the pre-training sequence length
    (default the preset's, :func:`~tokstat.cost.model.train_seq_len`)."""
    s = context or m.context
    t = train_seq_len(m, seq_len)
    return {"name": m.name, "source": m.source, "context": s, "seq_len": t, "seq_len_source":
            "--seq-len" if seq_len is not None else (m.seq_len_source or "the context"),
            "vocab_size": m.vocab_size, "d_model": m.d_model,
            "layers": m.layers, "heads": m.heads, "kv_heads": m.kv_heads, "head_dim": m.d_head,
            "attention": m.attention, "experts": m.experts, "experts_per_token": m.experts_per_token,
            "total_params": total_params(m), "active_params": active_params(m),
            "non_embedding_params": non_embedding_params(m), "active_non_embedding_params": non_embedding_params(m, active=True),
            "embedding_params": embedding_params(m),
            "forward_flops_per_token": forward_flops_per_token(m, s),
            "attention_flops_per_token": attention_flops_per_token(m, s),
            "training_flops_per_token": training_flops_per_token(m, t),
            "kv_cache_bytes_per_token": kv_cache_bytes_per_token(m), "weight_bytes": inference_weight_bytes(m),
            "training_state_bytes": 16 * total_params(m)}


def model_info(m: ModelConfig, seq_len: int | None = None) -> list[tuple[str, str, str]]:
    t = train_seq_len(m, seq_len)
    mem = training_memory_bytes(m, recompute="none", context=t)
    full = training_memory_bytes(m, recompute="full", context=t)
    return [
        ("training sequence length", f"{t:,}", "--seq-len" if seq_len is not None else (m.seq_len_source or "the context")),
        ("parameters (total)", _n(total_params(m)), "non-embedding + embedding; memory holds all of them"),
        ("parameters (active per token)", _n(active_params(m)), "the experts a token uses (= total when dense)"),
        ("non-embedding parameters N", _n(non_embedding_params(m)), "L·(attention + MLP or experts + norms)"),
        ("embedding parameters", _n(embedding_params(m)), "V·d (×2 untied) + learned positions"),
        ("forward FLOPs / token", f"{forward_flops_per_token(m):.3e}",
         "2·N_active + 2·d·V + 2·L·h·(d_qk+d_v)·(s+1)/2 (causal, s = context)"),
        ("training FLOPs / token", f"{training_flops_per_token(m, t):.3e}", "3 × forward at the training length"),
        ("training FLOPs / token, recompute", f"{training_flops_per_token(m, t, recompute=True):.3e}", "4 × forward"),
        ("weights+grads+AdamW", _gib(mem["weights"] + mem["gradients"] + mem["optimizer"]), "16 B / parameter"),
        ("activations (b=1, s=training length)", _gib(mem["activations"]), "L·s·b·d·(34 + 5·a·s/d) (Korthikanti 2022)"),
        ("activations, full recompute", _gib(full["activations"]), "L·2·s·b·d"),
        ("logits buffer (b=1)", _gib(mem["logits"]), "4·b·s·V"),
        ("inference weights bf16 / int8 / int4",
         " / ".join(_gib(inference_weight_bytes(m, d)) for d in ("bf16", "int8", "int4")), "params × bytes"),
        ("KV cache / token (bf16)", _gib(kv_cache_bytes_per_token(m)),
         "L·(kv_lora+rope)·2 B (MLA)" if m.attention == "mla" else "2·L·h_kv·d_head·2 B"),
        ("KV cache, full context", _gib(kv_cache_bytes_per_token(m) * kv_cache_tokens(m, m.context)),
         (f"× context on {m.layers // m.global_every} global layers, × min(context, {m.sliding_window:,}) on the "
          f"{m.layers - m.layers // m.global_every} local ones" if m.global_every else
          f"× min(context, window {m.sliding_window:,})" if m.sliding_window else "× context")),
    ]
