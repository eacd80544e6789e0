"""The model side of the cost model, calibrated against published figures."""

from __future__ import annotations

import math

import pytest

from tokstat import TokstatError
from tokstat.cli import main
from tokstat.cost.hardware import catalogue, gpu, gpu_hours
from tokstat.cost.model import (ModelConfig, allreduce_seconds, kv_cache_bytes_per_token, load_presets,
                                non_embedding_params, preset, total_params, training_flops_per_token,
                                training_memory_bytes)

# published total parameter counts
PUBLISHED = {"gpt2-small": 124.4e6, "gpt2-medium": 354.8e6, "gpt2-large": 774.0e6, "gpt2-xl": 1557.6e6,
             "gpt3-175b": 175e9, "llama2-7b": 6.738e9, "llama2-13b": 13.016e9, "llama2-70b": 68.977e9,
             "llama3-8b": 8.030e9, "llama3-70b": 70.554e9, "mistral-7b": 7.242e9, "qwen2.5-7b": 7.616e9}


@pytest.mark.parametrize("name", sorted(PUBLISHED))
def test_presets_match_published_parameter_counts(name):
    assert total_params(preset(name)) == pytest.approx(PUBLISHED[name], rel=0.005)


def test_gpt3_training_flops():
    # Brown et al. 2020: 175B on 300B tokens ~ 3.14e23 FLOPs
    assert training_flops_per_token(preset("gpt3-175b")) * 300e9 == pytest.approx(3.14e23, rel=0.02)


def test_llama2_7b_kv_cache_and_gpu_hours():
    m = preset("llama2-7b")
    assert kv_cache_bytes_per_token(m) == 0.5 * 2**20
    # Meta's model card: 184,320 A100-80GB GPU-hours for 2T tokens, reproduced at the implied MFU 0.40
    hours = gpu_hours(training_flops_per_token(m) * 2e12, gpu("a100-80gb-sxm"), mfu=0.40)
    assert hours == pytest.approx(184_320, rel=0.10)


def test_gqa_shrinks_kv_cache():
    m70 = preset("llama2-70b")
    assert kv_cache_bytes_per_token(m70) == 2 * 80 * 8 * 128 * 2


def _state_dict_params(shapes: dict[str, tuple[int, ...]], layers: int) -> dict[str, int]:
    """Parameters from a checkpoint's tensor shapes: ``layer.*`` tensors repeat ``layers`` times."""
    out = {"layers": 0, "other": 0, "embedding": 0}
    for name, shape in shapes.items():
        n = math.prod(shape)
        if name.startswith("layer."):
            out["layers"] += layers * n
        elif name in ("wte", "wpe", "embed_tokens", "lm_head"):
            out["embedding"] += n
        else:
            out["other"] += n
    return out


# tensor shapes of the published checkpoints (HF gpt2: Conv1D weights are (in, out); meta-llama/Llama-2-7b-hf)
GPT2_SMALL = {"wte": (50257, 768), "wpe": (1024, 768),
              "layer.ln_1.weight": (768,), "layer.ln_1.bias": (768,), "layer.attn.c_attn.weight": (768, 2304),
              "layer.attn.c_attn.bias": (2304,), "layer.attn.c_proj.weight": (768, 768), "layer.attn.c_proj.bias": (768,),
              "layer.ln_2.weight": (768,), "layer.ln_2.bias": (768,), "layer.mlp.c_fc.weight": (768, 3072),
              "layer.mlp.c_fc.bias": (3072,), "layer.mlp.c_proj.weight": (3072, 768), "layer.mlp.c_proj.bias": (768,),
              "ln_f.weight": (768,), "ln_f.bias": (768,)}
LLAMA2_7B = {"embed_tokens": (32000, 4096), "lm_head": (32000, 4096),
             **{f"layer.self_attn.{x}_proj.weight": (4096, 4096) for x in "qkvo"},
             **{f"layer.mlp.{x}_proj.weight": (11008, 4096) for x in ("gate", "up", "down")},
             "layer.input_layernorm.weight": (4096,), "layer.post_attention_layernorm.weight": (4096,),
             "norm.weight": (4096,)}


@pytest.mark.parametrize("name, shapes, layers, total", [
    ("gpt2-small", GPT2_SMALL, 12, 124_439_808),      # tied: wte is also the unembedding
    ("llama2-7b", LLAMA2_7B, 32, 6_738_415_616),
])
def test_parameters_equal_a_count_of_the_checkpoint_tensors(name, shapes, layers, total):
    """An independent derivation: the sum over the published checkpoint's tensors, not the formula."""
    counted = _state_dict_params(shapes, layers)
    m = preset(name)
    assert sum(counted.values()) == total == total_params(m)
    assert non_embedding_params(m) == counted["layers"] + counted["other"]
    # 6N is the bulk of the training FLOPs per token: N counted from the tensors, plus the unembedding
    assert training_flops_per_token(m) > 6 * (counted["layers"] + counted["other"]) + 6 * m.d_model * m.vocab_size


def test_training_memory_korthikanti():
    m = preset("gpt3-175b")
    mem = training_memory_bytes(m, recompute="none")
    s, d, a, L = 2048, 12288, 96, 96
    assert mem["activations"] == L * s * d * (34 + 5 * a * s / d)
    assert training_memory_bytes(m, recompute="full")["activations"] == L * 2 * s * d
    assert mem["optimizer"] == 12 * total_params(m)


def test_allreduce_ring_at_per_direction_bandwidth_with_latency():
    """Independent computation: NVLink 3 (A100) is 600 GB/s *bidirectional*, a ring sends 300 GB/s each
    way; NCCL's ring model adds a base latency (6.6 µs) and 0.6 µs per step (2·(n−1) steps); PCIe
    parts pay 1.0 µs a step over half their 64 GB/s."""
    from tokstat.cost.hardware import gpu

    m, a100 = preset("llama2-7b"), gpu("a100-80gb-sxm")
    nbytes = total_params(m) * 2
    assert allreduce_seconds(m, 8, a100) == pytest.approx(6.6e-6 + 14 * 0.6e-6 + 2 * 7 / 8 * nbytes / 300e9)
    assert allreduce_seconds(m, 1, a100) == 0
    pcie = gpu("a100-80gb-pcie")
    assert pcie.link == "pcie" and allreduce_seconds(m, 4, pcie) == pytest.approx(6.6e-6 + 6 * 1e-6 + 1.5 * nbytes / 32e9)
    # small messages are latency-bound: one token's activations across 8 GPUs cost more than their bytes
    from tokstat.cost.hardware import ring_allreduce_seconds

    assert ring_allreduce_seconds(8192, 8, a100) > 10 * (2 * 7 / 8 * 8192 / 300e9)


@pytest.mark.parametrize("kw,msg", [({"heads": 7}, "do not divide d_model"), ({"kv_heads": 5}, "do not divide heads"),
                                    ({"layers": 0}, "must be positive"), ({"mlp": "relu"}, "unknown mlp")])
def test_impossible_shapes(kw, msg):
    base = dict(d_model=512, layers=4, heads=8, kv_heads=8, d_ff=2048, vocab_size=1000, context=128)
    with pytest.raises(TokstatError, match=msg):
        ModelConfig(**{**base, **kw})


def test_mfu_bounds():
    for bad in (0, -0.1, 1.5):
        with pytest.raises(TokstatError, match="MFU"):
            gpu_hours(1e20, gpu("h100-sxm"), bad)


def test_catalogue_is_dense_and_complete():
    cat = catalogue()
    need = {"a100-40gb-sxm", "a100-80gb-sxm", "a100-40gb-pcie", "a100-80gb-pcie", "h100-sxm", "h100-pcie", "h200",
            "b200", "v100-16gb", "v100-32gb", "t4", "l4", "a10g", "l40s", "rtx-4090", "mi300x", "tpu-v4", "tpu-v5e",
            "tpu-v5p"}
    assert need <= set(cat)
    assert cat["a100-80gb-sxm"].bf16_tflops == 312 and cat["h100-sxm"].bf16_tflops == 989
    for g in cat.values():
        assert g.source and g.price_usd_h > 0
        if g.fp8_tflops:  # FP8 dense is twice BF16 dense on these parts; a sparse BF16 figure would equal it
            assert g.fp8_tflops > 1.5 * g.bf16_tflops


def test_user_presets_file(tmp_path):
    f = tmp_path / "m.toml"
    f.write_text('[tiny]\nd_model = 256\nlayers = 2\nheads = 4\nkv_heads = 4\nd_ff = 1024\nvocab_size = 8000\n'
                 'context = 512\n', encoding="utf-8")
    assert "tiny" in load_presets(f) and total_params(preset("tiny", f)) > 0
    f.write_text("[bad]\nwidth = 3\n", encoding="utf-8")
    with pytest.raises(TokstatError, match="preset 'bad'"):
        load_presets(f)


def test_cli_model_info(capsys):
    assert main(["model-info", "--model", "llama2-7b"]) == 0
    out = capsys.readouterr().out
    assert "6.738B" in out and "0.524 MB" in out          # 524,288 B of KV per token, in decimal MB as cost speaks
    from tokstat.cost.hardware import gpu

    assert f"{allreduce_seconds(preset('llama2-7b'), 8, gpu('a100-80gb-sxm')):.3f} s" in out
    assert main(["model-info", "--d-model", "512", "--layers", "2", "--heads", "7", "--d-ff", "2048",
                 "--vocab-size", "100", "--context", "64"]) == 2
