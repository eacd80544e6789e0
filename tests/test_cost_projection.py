"""The per-language projection, checked against the formulas computed by hand."""

from __future__ import annotations

import polars as pl
import pytest

from tokstat import TokstatError
from tokstat.cli import main
from tokstat.cost.hardware import gpu
from tokstat.cost.model import (forward_flops_per_token, inference_weight_bytes, kv_cache_bytes_per_token, preset,
                                training_flops_per_token)
from tokstat.cost.projection import COST_COLUMNS, project

RES = pl.DataFrame({"tokenizer": ["t", "t"], "language": ["en", "zh"], "tokens_per_char": [0.25, 1.0],
                    "premium": [1.0, 1.6]})


def test_training_columns_by_hand():
    m, g = preset("llama2-7b"), gpu("a100-80gb-sxm")
    df = project(RES, m, g, gpus=8, mfu=0.4, train_chars=1e12, price=2.0, mix={"zh": 0.5, "en": 0.5})
    assert df.columns == COST_COLUMNS
    zh = df.filter(pl.col("language") == "zh").row(0, named=True)
    assert zh["training_tokens"] == 1e12
    assert zh["training_flops"] == 1e12 * training_flops_per_token(m)
    assert zh["gpu_hours"] == pytest.approx(zh["training_flops"] / (312e12 * 0.4 * 3600))
    assert zh["dollars"] == pytest.approx(zh["gpu_hours"] * 2.0)
    en = df.filter(pl.col("language") == "en").row(0, named=True)
    # the same characters in each language: the dollars (and their ratio, the multiplier) follow tokens/char
    assert zh["cost_multiplier"] == pytest.approx(zh["dollars"] / en["dollars"]) == pytest.approx(1.0 / 0.25)
    same_content = project(RES, m, g, gpus=8, mfu=0.4, train_tokens=1e12, price=2.0)
    z2 = same_content.filter(pl.col("language") == "zh").row(0, named=True)
    assert z2["cost_multiplier"] == pytest.approx(1.6)     # the same content: the premium
    assert zh["kv_cache_bytes_per_1k_chars"] == kv_cache_bytes_per_token(m) * 1000
    assert zh["chars_in_context"] == 4096
    # the mix is shares of content by default: per unit of content en has 1.0 tokens and 1/0.25 = 4
    # characters, zh 1.6 tokens and 1.6/1.0 = 1.6 characters (premium / tokens per character)
    mix = df.filter(pl.col("language") == "mix").row(0, named=True)
    assert mix["premium"] == pytest.approx(0.5 * 1.0 + 0.5 * 1.6)
    assert mix["tokens_per_char"] == pytest.approx(1.3 / (0.5 * 4 + 0.5 * 1.6))
    assert mix["mix_shares"].startswith("content zh 50% · en 50% = characters zh 29% · en 71%")
    assert mix["training_tokens"] == pytest.approx(1e12 * mix["tokens_per_char"])     # 1e12 characters of the mix
    # the same shares stated in characters: tokens per character is the char-weighted mean, and the
    # content shares behind it give the premium
    chars = project(RES, m, g, gpus=8, mfu=0.4, train_chars=1e12, price=2.0, mix="zh=0.5,en=0.5", mix_unit="chars")
    cm = chars.filter(pl.col("language") == "mix").row(0, named=True)
    w_en, w_zh = 0.5 / 4, 0.5 / 1.6
    assert cm["tokens_per_char"] == pytest.approx(0.625)
    assert cm["premium"] == pytest.approx((w_en * 1.0 + w_zh * 1.6) / (w_en + w_zh))
    # a token mix is shares of this tokenizer's tokens: zh=0.5 of tokens is 0.5/1.6 of the content per token
    toks = project(RES, m, g, gpus=8, mfu=0.4, train_chars=1e12, price=2.0, mix="zh=0.5,en=0.5", mix_unit="tokens")
    tm = toks.filter(pl.col("language") == "mix").row(0, named=True)
    t_en, t_zh = 0.5 / 1.0, 0.5 / 1.6
    assert tm["premium"] == pytest.approx((t_en * 1.0 + t_zh * 1.6) / (t_en + t_zh))
    assert "tokens zh 50% · en 50%" in tm["mix_shares"]
    tok = project(RES, m, g, train_tokens=2e12)
    assert tok.filter(pl.col("language") == "zh")["training_tokens"][0] == pytest.approx(3.2e12)


def test_roofline_bounds_and_fit():
    m, g = preset("llama2-7b"), gpu("h100-sxm")
    one = project(RES, m, g, train_chars=1e9, batch=1, mfu=0.4)
    r = one.row(0, named=True)
    assert r["decode_bound"] == "memory"  # batch-1 decoding reads every weight per token
    # a decoding step reads every weight but the untied input embedding table (one row of it per sequence)
    step = (inference_weight_bytes(m) - (m.vocab_size - 1) * m.d_model * 2 + kv_cache_bytes_per_token(m) * 250 / 2) / (3350e9 * 0.7)
    assert r["decode_s_per_1k_chars"] == pytest.approx(step * 250)
    big = project(pl.DataFrame({"tokenizer": ["t"], "language": ["en"], "tokens_per_char": [20.0], "premium": [1.0]}),
                  m, g, train_chars=1e9, batch=512, mfu=0.4)
    assert big["prefill_bound"][0] == "compute"
    assert big["decode_bound"][0] == "memory"  # 512 long KV caches to read per step
    gqa = project(RES, preset("llama3-8b"), g, train_chars=1e9, batch=1024)
    assert gqa["decode_bound"][0] == "compute"  # short sequences, 8 KV heads, large batch
    assert big["prefill_s_per_1k_chars"][0] == pytest.approx(
        20000 * forward_flops_per_token(m, context=20000) / (989e12 * 0.4))
    huge = project(RES, preset("llama2-70b"), gpu("t4"), train_chars=1e9)
    assert set(huge["fits"]) == {"does not fit"}
    assert set(project(RES, preset("llama2-70b"), gpu("h100-sxm"), gpus=4, train_chars=1e9, batch=1)["fits"]) == {"fits"}


@pytest.mark.parametrize("kw,msg", [({"train_chars": 1, "train_tokens": 1}, "exactly one of"),
                                    ({"train_chars": 1, "mfu": 1.2}, "MFU"), ({"train_chars": 1, "mbu": 0}, "MBU"),
                                    ({"train_chars": 1, "mix": {"fr": 1.0}}, "not in the results"),
                                    ({"train_chars": 1, "gpus": 0}, "at least 1")])
def test_bad_inputs(kw, msg):
    with pytest.raises(TokstatError, match=msg):
        project(RES, preset("gpt2-small"), gpu("t4"), **kw)


def test_missing_columns():
    with pytest.raises(TokstatError, match="lack columns"):
        project(RES.drop("premium"), preset("gpt2-small"), gpu("t4"), train_chars=1)


@pytest.mark.slow
def test_sweep_results_use_each_vocabulary_and_recommend_one(tmp_path):
    from tokstat.sweep import sweep

    sw = sweep("sample", "bpe", [500, 1000, 4000], n_boot=0)
    df = project(sw, preset("gpt2-small"), gpu("a100-80gb-sxm"), train_chars=1e10, mix={"zh": 0.5, "en": 0.5})
    assert sorted(set(df["vocab_size"])) == [500, 1000, 4000]
    assert df.group_by("language").agg(pl.col("recommended").sum())["recommended"].to_list() == [1, 1, 1]
    # a bigger vocabulary costs more per token (2·d·V) but saves tokens; both terms are in the FLOPs
    m = preset("gpt2-small")
    r = df.filter((pl.col("language") == "en") & (pl.col("vocab_size") == 4000)).row(0, named=True)
    assert r["training_flops"] == pytest.approx(r["training_tokens"] * training_flops_per_token(m.with_vocab(4000)))


@pytest.mark.slow
def test_cli_cost_on_compare_and_sweep_output(tmp_path, capsys):
    cmp = tmp_path / "c.parquet"
    assert main(["compare", "sample", "-t", "train:bpe:1000", "--out", str(cmp)]) == 0
    assert main(["cost", "--results", str(cmp), "--model", "llama2-7b", "--gpu", "h100-sxm", "--gpus", "8",
                 "--train-chars", "1e12", "--mix", "zh=0.4,en=0.6", "--out", str(tmp_path / "cost.csv")]) == 0
    assert pl.read_csv(tmp_path / "cost.csv").height == 3
    sw = tmp_path / "s.parquet"
    assert main(["sweep", "sample", "--sizes", "500,1000", "--out", str(sw)]) == 0
    assert main(["cost", "--results", str(sw), "--model", "gpt2-small", "--gpu", "t4", "--train-tokens", "1e9"]) == 0
    assert main(["cost", "--results", str(sw), "--model", "gpt2-small", "--gpu", "nope", "--train-tokens", "1"]) == 2
    assert main(["cost", "--results", str(tmp_path / "missing.parquet"), "--model", "gpt2-small", "--gpu", "t4",
                 "--train-tokens", "1"]) == 2


@pytest.mark.parametrize("argv, msg", [
    (["--price", "nan"], "--price must be a finite positive number"),
    (["--price", "-2"], "--price must be a finite positive number"),
    (["--train-chars", "inf"], "--train-chars must be a finite positive number"),
    (["--train-chars", "-1e12"], "--train-chars must be a finite positive number"),
    (["--mfu", "nan"], "--mfu must be in (0, 1], got nan"),
    (["--mbu", "nan"], "--mbu must be in (0, 1], got nan"),
    (["--mix", "zh=-1,en=2"], "not a finite non-negative number"),
    (["--mix", "zh=0,en=0"], "the weights are all zero"),
    (["--mix", "zh=0.6,en=0.6"], "sum to 1.2, not 1"),
    (["--mix", "zh=0.7"], "sum to 0.7, not 1"),
])
def test_cost_inputs_never_give_nan_or_negative_money(tmp_path, capsys, argv, msg):
    from tokstat import compare
    from tokstat.cli import main

    cmp = tmp_path / "cmp.parquet"
    compare("sample", ["train:bpe:300"], n_boot=10).write_parquet(cmp)
    base = ["cost", "--results", str(cmp), "--model", "llama2-7b", "--gpu", "h100-sxm"]
    if "--train-chars" not in argv:
        base += ["--train-chars", "1e12"]
    rc = main(base + argv + ["--out", str(tmp_path / "cost.csv")])
    err = capsys.readouterr().err
    assert rc == 2 and msg in err and len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "cost.csv").exists()
