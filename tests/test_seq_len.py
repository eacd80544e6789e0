"""Training is priced at the pre-training sequence length, not the longest context: every preset
carries ``seq_len`` with its source; ``--seq-len`` overrides it in cost, model-info, vocab-plan and
report; Llama 3.1 405B at its paper's MFU lands within 10 % of its published GPU-hours."""

from __future__ import annotations

import json

import polars as pl
import pytest

from tokstat.cli import main
from tokstat.cost.calibration import runs
from tokstat.cost.hardware import gpu, gpu_hours
from tokstat.cost.model import load_presets, preset, train_seq_len, training_flops_per_token
from tokstat.cost.projection import project


def test_every_preset_states_its_training_length_and_source():
    for name, m in load_presets().items():
        assert m.seq_len_source, name
        assert 1 <= train_seq_len(m) <= m.context, name


def test_presets_agree_with_the_calibration_runs():
    """The runs the MFU is calibrated on state their training context: the presets say the same."""
    import tomllib
    from importlib import resources

    cal = tomllib.loads(resources.files("tokstat.cost").joinpath("calibration.toml").read_text(encoding="utf-8"))
    assert len(cal) >= 6
    for r in cal.values():
        assert train_seq_len(preset(r["model"])) == r["train_context"], r["model"]


def test_llama31_405b_lands_within_ten_percent_of_its_published_hours():
    m, g = preset("llama3.1-405b"), gpu("h100-sxm")
    r = next(x for x in runs() if x["model"] == "llama3.1-405b")
    flops = training_flops_per_token(m, context=train_seq_len(m)) * r["tokens"]
    assert abs(gpu_hours(flops, g, 0.38) / r["gpu_hours"] - 1) < 0.10        # the paper's MFU: 38-43 %
    at_context = training_flops_per_token(m, context=m.context) * r["tokens"]
    assert gpu_hours(at_context, g, 0.38) / r["gpu_hours"] > 1.3              # what pricing at 131,072 gave


def _results() -> pl.DataFrame:
    return pl.DataFrame({"tokenizer": ["t", "t"], "language": ["en", "zh"], "tokens_per_char": [0.25, 1.0],
                         "premium": [1.0, 1.5], "vocab_size": [128256, 128256]})


@pytest.mark.parametrize("seq_len", [None, 4096, 131072])
def test_cost_prices_training_at_the_sequence_length(seq_len):
    m, g = preset("llama3.1-405b"), gpu("h100-sxm")
    df = project(_results(), m, g, gpus=16384, tp=8, pp=16, train_tokens=15.6e12, mfu=0.4, seq_len=seq_len)
    s = seq_len or 8192
    assert df["seq_len"].unique().to_list() == [s]
    en = df.filter(pl.col("language") == "en").row(0, named=True)
    assert en["training_flops"] == pytest.approx(en["training_tokens"] * training_flops_per_token(m, context=s))


def test_model_info_json_has_seq_len_beside_context(capsys):
    assert main(["model-info", "--model", "llama3.1-405b", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    m = preset("llama3.1-405b")
    assert d["context"] == 131072 and d["seq_len"] == 8192 and "8K" in d["seq_len_source"]
    assert d["training_flops_per_token"] == pytest.approx(training_flops_per_token(m, context=8192))
    assert main(["model-info", "--model", "llama3.1-405b", "--json", "--seq-len", "2048"]) == 0
    d2 = json.loads(capsys.readouterr().out)
    assert d2["seq_len"] == 2048 and d2["seq_len_source"] == "--seq-len"
    assert d2["training_flops_per_token"] < d["training_flops_per_token"]


@pytest.mark.parametrize("argv, msg", [
    (["model-info", "--model", "llama2-7b", "--seq-len", "0"], r"--seq-len must be at least 1, got 0"),
    (["model-info", "--model", "llama2-7b", "--seq-len", "8192"], r"got 8192"),
    (["vocab-plan", "--model", "llama2-7b", "--seq-len", "2048"], r"--seq-len .* needs --serve-chars and --model"),
    (["vocab-plan", "--model", "llama2-7b", "--serve-chars", "1e12", "--seq-len", "-5"], r"--seq-len must be"),
    (["report", "x.csv", "--out", "r.html", "--seq-len", "2048"], r"--seq-len, --train-tokens, --gpus, --sample-bytes and --eval need --corpus"),
])
def test_bad_seq_len_is_one_error(argv, msg, capsys, tmp_path, monkeypatch):
    import re

    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert re.search(msg, err) and len(err.strip().splitlines()) == 1, err


def test_cost_cli_says_the_sequence_length(tmp_path, capsys):
    p = tmp_path / "r.csv"
    _results().write_csv(p)
    assert main(["cost", "--results", str(p), "--model", "llama3-8b", "--gpu", "h100-sxm", "--gpus", "8",
                 "--train-tokens", "1e12", "--seq-len", "4096"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "4,096-token sequences" in out
    # serving is one tensor-parallel replica over all the GPUs, whatever --tp/--pp say: stated
    assert "serving: one tensor-parallel replica over all 8 GPU(s) (--tp/--pp set the training layout only)" in out
    assert main(["cost", "--results", str(p), "--model", "llama3-8b", "--gpu", "h100-sxm", "--seq-len", "100000"]) == 2


# ---------------------------------------------------------------- serving fixes from the audit (#25)

def test_decode_attends_to_every_cached_key_not_the_causal_mean():
    """A new token attends to all ``mid`` cached keys: 2·L·h·(d_qk+d_v)·mid attention FLOPs, by hand."""
    from tokstat.cost.model import decode_step_flops, non_embedding_params

    m = preset("llama2-7b")
    mid = 1000
    by_hand = 2 * non_embedding_params(m, active=True) + 2 * m.d_model * m.vocab_size + \
        m.layers * 2 * m.heads * (m.d_qk + m.d_v) * mid
    assert decode_step_flops(m, 1, mid) == pytest.approx(by_hand)
    w = preset("mistral-7b")                          # a sliding window caps the keys
    assert decode_step_flops(w, 1, 6000) == pytest.approx(decode_step_flops(w, 1, 4096))


def test_mistral_7b_is_v01_and_its_full_context_kv_respects_the_window(capsys):
    m = preset("mistral-7b")
    assert (m.context, m.sliding_window, train_seq_len(m)) == (8192, 4096, 8192)
    assert main(["model-info", "--model", "mistral-7b"]) == 0
    out = capsys.readouterr().out
    kv_full = 2 * m.layers * m.kv_heads * (m.d_model // m.heads) * 2 * 4096 / 1e6   # the window's keys, by hand
    assert f"{kv_full:.3f} MB" in out and "window" in out              # 537 MB, not the 1.07 GB of 8,192 keys


def test_serving_fits_checks_the_requests_not_full_contexts():
    from tokstat.cost.model import inference_weight_bytes, kv_cache_bytes_per_token

    m, g = preset("llama3-8b"), gpu("h100-sxm")
    df = project(_results(), m, g, train_tokens=1e12, batch=64, prompt_chars=1000, output_chars=250)
    en = df.filter(pl.col("language") == "en").row(0, named=True)
    tokens = (1000 + 250) * 0.25                       # the request in pivot tokens
    need = inference_weight_bytes(m) + 64 * kv_cache_bytes_per_token(m) * tokens
    assert (en["fits"] == "fits") == (need <= g.memory_gb * 1e9) and en["fits"] == "fits"
    full = inference_weight_bytes(m) + 64 * kv_cache_bytes_per_token(m) * m.context
    assert full > g.memory_gb * 1e9                    # the old check (full contexts) said it did not fit


def test_fp8_weights_on_a_gpu_without_fp8_are_refused():
    from tokstat.errors import TokstatError

    with pytest.raises(TokstatError, match="has no FP8 support"):
        project(_results(), preset("llama2-7b"), gpu("a100-80gb-sxm"), train_tokens=1e12, weights="fp8")
    project(_results(), preset("llama2-7b"), gpu("h100-sxm"), train_tokens=1e12, weights="fp8")


def test_when_training_memory_does_not_fit_the_smallest_split_that_fits_is_named(tmp_path, capsys):
    """llama3-8b at 8k on 8 H100s with ZeRO-1 does not fit at tp 1 × pp 1 (84.9 GB): the cost table
    names the smallest split that does, checked here by trying every valid split."""
    from tokstat.cost.model import check_split, smallest_fitting_split, training_memory_per_gpu
    from tokstat.errors import TokstatError

    m = preset("llama3-8b")
    got = smallest_fitting_split(m, 80e9, 8, context=8192)
    assert got is not None
    fits = []
    for tp in (1, 2, 4, 8):
        for pp in (1, 2, 4, 8):
            if 8 % (tp * pp):
                continue
            try:
                check_split(m, tp, pp)
            except TokstatError:
                continue
            need = sum(training_memory_per_gpu(m, dp=8 // (tp * pp), tp=tp, pp=pp, zero=1, context=8192).values())
            if need <= 80e9:
                fits.append((tp * pp, tp, pp))
    assert min(fits)[1:] == got[:2]
    p = tmp_path / "r.csv"
    _results().write_csv(p)
    assert main(["cost", "--results", str(p), "--model", "llama3-8b", "--gpu", "h100-sxm", "--gpus", "8",
                 "--train-tokens", "1e12"]) == 0
    out = capsys.readouterr().out.replace("\n", " ")
    assert f"the smallest split of 8 GPUs that fits is --tp {got[0]} --pp {got[1]}" in out


def test_model_info_json_takes_the_gpu_and_gpus(capsys):
    assert main(["model-info", "--model", "llama2-7b", "--json", "--gpu", "h100-sxm", "--gpus", "16"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["gpu"] == "h100-sxm" and d["gpus"] == 16 and d["gradient_allreduce_seconds"] > 0
    assert main(["model-info", "--model", "llama2-7b", "--json", "--gpu", "h100-sxm", "--gpus", "2"]) == 0
    assert json.loads(capsys.readouterr().out)["gradient_allreduce_seconds"] < d["gradient_allreduce_seconds"]


def test_cost_and_report_give_the_same_dollars_for_the_same_question(tmp_path, capsys):
    """One set of defaults: the report's run on a corpus (tokstat.study, what report --corpus runs)
    and `tokstat cost` on the same comparison price the same volume (20 tokens per parameter), GPUs
    and sequence length, to the dollar."""
    from tokstat.io import write_table
    from tokstat.study import study

    data = study("sample", ["train:bpe:300"], model="llama2-7b", gpu="h100-sxm", gpus=8, views=0)
    write_table(data["compare"], tmp_path / "c.parquet")
    assert main(["cost", "--results", str(tmp_path / "c.parquet"), "--model", "llama2-7b", "--gpu", "h100-sxm", "--gpus", "8",
                 "--json"]) == 0
    via_cost = pl.DataFrame(json.loads(capsys.readouterr().out))
    a = data["cost"].sort("language")["dollars"].to_list()
    b = via_cost.sort("language")["dollars"].to_list()
    assert a == pytest.approx(b, rel=1e-12) and len(a) == 2


def test_study_validates_its_arguments_as_the_cli_does():
    from tokstat.errors import TokstatError
    from tokstat.study import study

    with pytest.raises(TokstatError, match=r"study\(\): sweep=\('bpe', \[2000, 4000\]\) is not 'ALGO:SIZE,SIZE'"):
        study("sample", ["train:bpe:300"], sweep=("bpe", [2000, 4000]))
