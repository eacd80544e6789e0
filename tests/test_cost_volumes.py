"""What the cost rows train on (the same content for every tokenizer), training memory per GPU
under DP/TP/PP and ZeRO, and serving with separate precisions and a request shape."""

from __future__ import annotations

import polars as pl
import pytest

from tokstat import TokstatError
from tokstat.cli import main
from tokstat.cost.hardware import gpu
from tokstat.cost.model import (active_params, inference_weight_bytes, kv_cache_bytes_per_token, preset, total_params,
                                tp_allreduce_seconds, training_memory_per_gpu)
from tokstat.cost.projection import project

# two tokenizers on the same parallel text: A spends 0.25 tokens per English character, B 0.20
RES = pl.DataFrame({"tokenizer": ["A", "A", "B", "B"], "language": ["en", "zh"] * 2, "vocab_size": [32000] * 4,
                    "tokens_per_char": [0.25, 1.0, 0.20, 0.5], "tokens_per_byte": [0.25, 0.33, 0.20, 0.17],
                    "premium": [1.0, 1.6, 1.0, 1.0], "unk_rate": [0.0] * 4})
M, G = preset("llama2-7b"), gpu("h100-sxm")


def row(df, tok, lang):
    return df.filter((pl.col("tokenizer") == tok) & (pl.col("language") == lang)).row(0, named=True)


def test_token_budgets_are_the_same_content_for_every_tokenizer():
    """--train-tokens T: T English tokens as the reference counts them = T/0.25 characters of
    English; B needs 0.20/0.25 of the tokens for that text, and its premium more in Chinese."""
    df = project(RES, M, G, train_tokens=1e12)
    assert row(df, "A", "en")["training_tokens"] == pytest.approx(1e12)
    assert row(df, "B", "en")["training_tokens"] == pytest.approx(1e12 * 0.20 / 0.25)
    assert row(df, "A", "zh")["training_tokens"] == pytest.approx(1.6e12)
    assert row(df, "B", "zh")["training_tokens"] == pytest.approx(0.8e12)
    assert "as A counts it" in row(df, "B", "zh")["volume"] and "same content" in row(df, "B", "zh")["volume"]
    ref_b = project(RES, M, G, train_tokens=1e12, reference="B")
    assert row(ref_b, "A", "en")["training_tokens"] == pytest.approx(1e12 * 0.25 / 0.20)


def test_default_budget_is_twenty_tokens_per_parameter_and_says_so():
    df = project(RES, M, G)
    assert row(df, "A", "en")["training_tokens"] == pytest.approx(20 * active_params(M))
    assert df["volume"][0].startswith("20 tokens per parameter")
    moe = preset("mixtral-8x7b")
    assert row(project(RES, moe, G, tokens_per_param=10), "A", "en")["training_tokens"] == pytest.approx(
        10 * active_params(moe))


def test_character_and_byte_budgets_are_per_language():
    chars = project(RES, M, G, train_chars=1e12)
    assert row(chars, "B", "zh")["training_tokens"] == pytest.approx(0.5e12) and "characters" in chars["volume"][0]
    nbytes = project(RES, M, G, train_bytes=1e12)
    assert row(nbytes, "A", "zh")["training_tokens"] == pytest.approx(0.33e12) and "bytes" in nbytes["volume"][0]


@pytest.mark.parametrize("kw,msg", [({"train_chars": 1e9, "tokens_per_param": 20}, "both say how much text"),
                                    ({"train_bytes": -1.0}, "--train-bytes must be a finite positive"),
                                    ({"tokens_per_param": float("nan")}, "--tokens-per-param must be"),
                                    ({"reference": "C"}, "reference tokenizer 'C' is not in the results"),
                                    ({"gpus": 8, "tp": 3}, "not a multiple of --tp 3"),
                                    ({"zero": 4}, "ZeRO stage 4"), ({"weights": "int2"}, "unknown precision"),
                                    ({"prompt_chars": 0}, "--prompt-chars must be")])
def test_bad_budgets_and_layouts(kw, msg):
    with pytest.raises(TokstatError, match=msg):
        project(RES, M, G, **kw)


def test_a_token_budget_needs_a_pivot():
    with pytest.raises(TokstatError, match="no pivot language"):
        project(RES.with_columns(pl.lit(None, dtype=pl.Float64).alias("premium")), M, G)


# ---------------------------------------------------------------- training memory

def test_training_memory_by_hand_for_every_zero_stage_and_layout():
    p, s, d, L = total_params(M), M.context, M.d_model, M.layers
    act = L * 34 * s * d                       # selective recompute, micro-batch 1
    logits = 4 * s * M.vocab_size
    for zero, (w, g_, o) in {0: (1, 1, 1), 1: (1, 1, 8), 2: (1, 8, 8), 3: (8, 8, 8)}.items():
        mem = training_memory_per_gpu(M, dp=8, zero=zero)
        assert mem == pytest.approx({"weights": 2 * p / w, "gradients": 2 * p / g_, "optimizer": 12 * p / o,
                                     "activations": act, "logits": logits})
    tp2pp2 = training_memory_per_gpu(M, dp=2, tp=2, pp=2, zero=1)
    assert tp2pp2["weights"] == pytest.approx(2 * p / 4) and tp2pp2["optimizer"] == pytest.approx(12 * p / 8)
    assert tp2pp2["activations"] == pytest.approx(act / 2)
    none = training_memory_per_gpu(M, recompute="none")["activations"]
    assert none == pytest.approx(L * s * d * (34 + 5 * M.heads * s / d))
    assert training_memory_per_gpu(M, recompute="full")["activations"] == pytest.approx(L * 2 * s * d)


def test_seven_billion_parameters_do_not_train_on_one_gpu_but_do_on_eight_with_zero():
    one = project(RES, M, gpu("h100-sxm"), gpus=1, zero=0, train_chars=1e9)
    assert set(one["train_fits"]) == {"does not fit"} and one["train_memory_gb_per_gpu"][0] > 108
    eight = project(RES, M, gpu("h100-sxm"), gpus=8, zero=3, train_chars=1e9)
    assert set(eight["train_fits"]) == {"fits"}
    moe = project(RES, preset("mixtral-8x7b"), gpu("h100-sxm"), gpus=8, zero=1, train_chars=1e9)
    assert moe["train_memory_gb_per_gpu"][0] > 2 * total_params(preset("mixtral-8x7b")) / 1e9   # all experts held


# ---------------------------------------------------------------- serving

def test_separate_weight_and_kv_precisions():
    bf = project(RES, M, G, train_chars=1e9, batch=1, mfu=0.4)
    q = project(RES, M, G, train_chars=1e9, batch=1, mfu=0.4, weights="int4", kv_dtype="fp8")
    a, b = row(bf, "A", "en"), row(q, "A", "en")
    assert b["kv_cache_bytes_per_1k_chars"] == pytest.approx(a["kv_cache_bytes_per_1k_chars"] / 2)
    t = 250
    skipped = 0 if M.tied else (M.vocab_size - 1) * M.d_model * 0.5          # the input embedding rows not looked up
    step = (inference_weight_bytes(M, "int4") - skipped + kv_cache_bytes_per_token(M, "fp8") * t / 2) / (G.bandwidth_gb_s * 1e9 * 0.7)
    assert b["decode_s_per_1k_chars"] == pytest.approx(step * t)
    assert b["usd_per_request"] < a["usd_per_request"]


def test_a_request_is_the_same_content_and_its_multiplier_grows_faster_than_the_premium():
    df = project(RES, M, G, train_chars=1e9, mfu=0.4, prompt_chars=4000, output_chars=1000)
    zh = row(df, "A", "zh")
    assert zh["serving_multiplier"] > zh["premium"] > 1          # attention and KV reads grow with tokens
    en = row(df, "A", "en")
    assert en["serving_multiplier"] == 1.0
    # the Chinese request holds the English request's content: 1.6× its tokens, not 4,000 Chinese characters
    assert zh["request_decode_s"] > 1.6 * en["request_decode_s"] * 0.99


def test_multi_gpu_serving_pays_its_all_reduces():
    one = row(project(RES, M, G, gpus=1, train_chars=1e9, mfu=0.4), "A", "en")
    eight = row(project(RES, M, G, gpus=8, train_chars=1e9, mfu=0.4), "A", "en")
    comm = tp_allreduce_seconds(M, 250, 8, G)
    assert comm > 0 and eight["prefill_s_per_1k_chars"] > one["prefill_s_per_1k_chars"] / 8 + comm * 0.99


def test_prices_name_their_source_and_money_prints_as_money(tmp_path, capsys):
    df = project(RES, M, G, train_chars=1e9)
    assert df["price_source"][0].startswith("catalogue: indicative on-demand price as of 2026-12")
    assert project(RES, M, G, train_chars=1e9, price=2.5)["price_source"][0] == "--price"
    RES.write_csv(tmp_path / "r.csv")
    assert main(["cost", "--results", str(tmp_path / "r.csv"), "--model", "llama2-7b", "--gpu", "h100-sxm",
                 "--gpus", "8", "--train-tokens", "1e12"]) == 0
    out = capsys.readouterr().out
    assert "volume: 1e+12 tokens of en text as A counts it" in out and "$3.00 per GPU-hour" in out
    assert "$" in out.split("volume:")[0]
