"""Determinism: two runs with the same inputs, in fresh processes with different hash seeds and
worker counts, write byte-identical outputs with identical signatures."""

from __future__ import annotations

import os
import subprocess
import sys

import polars as pl
import pytest

from conftest import ROOT

SAMPLE = str(ROOT / "corpora/sample-zh-en/sample.tsv")


def _run(args: list[str], hashseed: str) -> None:
    env = {**os.environ, "PYTHONHASHSEED": hashseed}
    r = subprocess.run([sys.executable, "-m", "tokstat.cli", *args], cwd=ROOT, env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


@pytest.mark.slow
@pytest.mark.parametrize("suffix", [".parquet", ".csv", ".json"])
def test_compare_outputs_byte_identical(tmp_path, suffix):
    outs = []
    for k, (seed, workers) in enumerate((("1", "1"), ("2", "2"))):
        o, s = tmp_path / f"r{k}{suffix}", tmp_path / f"s{k}{suffix}"
        _run(["compare", SAMPLE, "-t", "tiktoken:cl100k_base", "-t", "train:bpe:1200", "--workers", workers,
              "--quiet", "--out", str(o), "--segments-out", str(s)], seed)
        outs.append((o.read_bytes(), s.read_bytes()))
    assert outs[0] == outs[1]
    if suffix == ".parquet":
        df = pl.read_parquet(tmp_path / "r0.parquet")
        assert df["signature"].n_unique() == 4 and df["premium_ci_low"].null_count() == 0


@pytest.mark.slow
def test_train_outputs_byte_identical(tmp_path):
    for algo in ("bpe", "spm-unigram", "wordpiece"):
        got = []
        for k, seed in enumerate(("1", "2")):
            d = tmp_path / f"{algo}{k}"
            _run(["train", SAMPLE, "--algo", algo, "--vocab-size", "2000", "--out", str(d)], seed)
            got.append({p.name: p.read_bytes() for p in sorted(d.iterdir())})
        assert got[0] == got[1], algo
        assert set(got[0]) == {"metadata.json", "tokenizer.json" if algo != "spm-unigram" else "tokenizer.model"}


@pytest.mark.slow
def test_sweep_outputs_byte_identical(tmp_path):
    got = []
    for k, seed in enumerate(("1", "2")):
        o = tmp_path / f"sw{k}.csv"
        _run(["sweep", SAMPLE, "--algo", "bpe", "--sizes", "800,1600", "--out", str(o)], seed)
        got.append(o.read_bytes())
    assert got[0] == got[1] and got[0].count(b"\n") == 1 + 2 * 2
