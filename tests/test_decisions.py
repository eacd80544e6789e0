"""Decisions a lead can sign: one parser and one error for a mix everywhere, help for a bare
``tokstat``, a missing tokenizer file that names where it was looked for, and no vocabulary size
without an answer."""

from __future__ import annotations

import polars as pl
import pytest

from tokstat.cli import main

from conftest import ROOT

SAMPLE = str(ROOT / "corpora/sample-zh-en/sample.tsv")


def test_a_bare_tokstat_prints_its_help(capsys):
    assert main([]) in (0, None)
    out, err = capsys.readouterr()
    assert out.startswith("Usage: tokstat") and "compare" in out and "\n" in out.strip() and not err


@pytest.mark.parametrize("argv", [
    ["compare", SAMPLE, "-t", "tiktoken:cl100k_base", "--mix", "zh=0.5,jp=0.5"],
    ["compare", SAMPLE, "-t", "tiktoken:cl100k_base", "--mix", "zh=0.5,jp=0.5", "--mix-unit", "chars"],
])
def test_a_mix_typo_is_one_error_before_anything_is_counted(argv, capsys, monkeypatch):
    import importlib

    m = importlib.import_module("tokstat.compare")

    def never(*a, **k):
        raise AssertionError("counted before the mix was checked")
    monkeypatch.setattr(m, "compare", never)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--mix names languages not in the corpus sample: jp (fix: use en, zh)" in err


def test_cost_and_report_give_the_same_mix_error(tmp_path, capsys):
    from tokstat import compare

    res = tmp_path / "c.parquet"
    compare(SAMPLE, ["tiktoken:cl100k_base"], workers=1, n_boot=0).write_parquet(res)
    errs = []
    for argv in (["cost", "--results", str(res), "--model", "llama2-7b", "--gpu", "h100-sxm", "--mix", "zh=0.5,jp=0.5"],
                 ["report", str(res), "--out", str(tmp_path / "r.html"), "--mix", "zh=0.5,jp=0.5"]):
        assert main(argv) == 2
        errs.append(capsys.readouterr().err.split("error: ", 1)[1])
    assert errs[0] == errs[1] == "--mix names languages not in the results: jp (fix: use en, zh)\n"
    assert not (tmp_path / "r.html").exists()


@pytest.mark.parametrize("spec", ["hf:nothere/tokenizer.json", "spm:nothere/tokenizer.model",
                                  "wordpiece:nothere/vocab.txt", "tiktoken:nothere/x.tiktoken?pattern=cl100k_base"])
@pytest.mark.parametrize("env", [None, "/nonexistent/toks"])
def test_a_missing_relative_tokenizer_file_names_tokstat_tokenizers(spec, env, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    if env is None:
        monkeypatch.delenv("TOKSTAT_TOKENIZERS", raising=False)
    else:
        monkeypatch.setenv("TOKSTAT_TOKENIZERS", env)
    assert main(["compare", SAMPLE, "-t", spec]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not found in this folder" in err and "./tokenizers" in err
    assert "set TOKSTAT_TOKENIZERS" in err and (env or "unset") in err


def test_a_hub_id_and_a_registry_name_are_not_taken_for_files(monkeypatch, tmp_path):
    from tokstat.adapters import _check_found

    monkeypatch.chdir(tmp_path)
    _check_found("hf", "org/name", "org/name")                 # a hub id: the hub adapter says what is wrong
    _check_found("tiktoken", "cl100k_base", "cl100k_base")     # a registry name
    with pytest.raises(Exception, match="not found"):
        _check_found("hf", "org/tokenizer.json", "org/tokenizer.json")


def test_mix_check_is_one_function():
    from tokstat.errors import TokstatError
    from tokstat.mix import Mix, check_languages

    check_languages(Mix({"zh": 0.5, "en": 0.5}), ["en", "zh", "ja"])
    with pytest.raises(TokstatError, match="not in the sweep: jp, xx"):
        check_languages(Mix({"xx": 0.2, "jp": 0.8}), ["ja"], "the sweep")
    assert pl is not None


@pytest.mark.parametrize("out,fmt", [("r.html", "md"), ("r.md", "json"), ("r.txt", None), ("r.json", "html")])
def test_a_report_format_its_file_cannot_hold_is_refused_before_any_work(out, fmt, tmp_path, capsys):
    from tokstat import compare

    res = tmp_path / "c.parquet"
    compare(SAMPLE, ["tiktoken:cl100k_base"], workers=1, n_boot=0).write_parquet(res)
    argv = ["report", str(res), "--out", str(tmp_path / out)] + (["--format", fmt] if fmt else [])
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--out" in err and "internal" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.parquet"]


@pytest.mark.parametrize("gpus,fits", [(1, False), (8, True)])
def test_the_first_screen_says_when_the_priced_training_does_not_fit(gpus, fits, tmp_path):
    """llama2-7b's training memory does not fit one H100 (ZeRO-1, no split) and fits eight: the
    cost card's first-screen sentence says so only in the first case, its interval labelled."""
    import json

    from tokstat import compare

    res, costs = tmp_path / "c.parquet", tmp_path / "k.parquet"
    compare(SAMPLE, ["tiktoken:cl100k_base"], workers=1, n_boot=50).write_parquet(res)
    assert main(["cost", "--results", str(res), "--model", "llama2-7b", "--gpu", "h100-sxm", "--gpus", str(gpus),
                 "--out", str(costs)]) in (0, None)
    assert (pl.read_parquet(costs)["train_fits"] == "fits").all() == fits
    assert main(["report", str(res), str(costs), "--out", str(tmp_path / "a.json")]) in (0, None)
    lead = next(a for a in json.loads((tmp_path / "a.json").read_text())["answers"] if a["key"] == "cost")["lead"]
    assert ("training llama2-7b does not fit 1× h100-sxm as priced" in lead) == (not fits), lead
    assert "(95 % interval " in lead
