"""tokstat fit-estimator: the fit recovers known weights, the held-out errors are what they say, and
the reference implementations of docs/estimator.md (run as written, Python and JavaScript) equal
tokstat's own estimate."""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokstat.adapters.base import Adapter
from tokstat.cli import main
from tokstat.estimator import estimate, fit_estimator, script_counts

from conftest import ROOT

DOC = (ROOT / "docs/estimator.md").read_text(encoding="utf-8")
SAMPLE = str(ROOT / "corpora/sample-zh-en/sample.tsv")


def block(lang: str) -> str:
    return re.search(rf"```{lang}\n(.*?)```", DOC, re.S).group(1)


class ScriptCounter(Adapter):
    """A tokenizer whose count is exactly 0.25·Latin + 1.5·Han + 0.5·Common characters, rounded:
    the fit must recover these weights."""
    family = "test"
    algorithm = "script counter"
    id = "test/scripts"
    library_version = "test"
    vocab_size = 10
    signature = "test/scripts@0"

    def _encode(self, texts):
        counts = [round(0.25 * c.get("Latn", 0) + 1.5 * c.get("Hani", 0) + 0.5 * c.get("Zyyy", 0))
                  for c in map(script_counts, texts)]
        return np.zeros(sum(counts), np.int64), np.array(counts, np.int64), None, None


def test_the_fit_recovers_the_weights_that_made_the_counts():
    from tokstat import load_corpus

    m = fit_estimator(load_corpus(SAMPLE), ScriptCounter())
    assert m["weights"]["Latn"] == pytest.approx(0.25, abs=0.02)
    assert m["weights"]["Hani"] == pytest.approx(1.5, abs=0.05)
    assert m["weights"]["Zyyy"] == pytest.approx(0.5, abs=0.06)
    for r in m["heldout"]:
        assert abs(r["total_rel_error"]) < 0.02 and r["median_rel_error"] < 0.1


def test_heldout_errors_are_recomputed_by_hand(tiktoken_encoding, shared):
    """The held-out numbers equal a recomputation from the model, the split and tiktoken called directly."""
    from tokstat import load_corpus
    from tokstat.split import Split

    c = load_corpus(SAMPLE)
    m = fit_estimator(c, "tiktoken:cl100k_base", heldout=0.25, seed=3)
    enc = tiktoken_encoding("cl100k_base")
    sp = Split(0.25, 3)
    for r in m["heldout"]:
        docs = [s.texts[r["language"]] for s in c if sp.is_heldout(s.id) and s.texts[r["language"]]]
        true = np.array([len(enc.encode_ordinary(t)) for t in docs], float)
        est = np.array([estimate(t, m) for t in docs])
        err = np.abs(est - true) / true
        assert r["documents"] == len(docs) and r["tokens"] == true.sum()
        assert r["median_rel_error"] == pytest.approx(np.median(err)) and r["p95_rel_error"] == pytest.approx(np.quantile(err, 0.95))
        assert r["total_rel_error"] == pytest.approx((est.sum() - true.sum()) / true.sum())
        chars = np.array([len(t) for t in docs], float)
        assert r["chars4_total_rel_error"] == pytest.approx((chars.sum() / 4 - true.sum()) / true.sum())
    zh = next(r for r in m["heldout"] if r["language"] == "zh")
    assert abs(zh["total_rel_error"]) < 0.05 < abs(zh["chars4_total_rel_error"])


MODEL = {"weights": {"Latn": 0.25, "Hani": 1.1, "Zyyy": 0.5, "Zinh": 0.9, "Arab": 0.3, "Hira": 0.8}, "default": 2.5,
         "intercept": 1.75}
TEXTS = ["", "Hello, world!", "東京で会いましょう", "e\u0301te\u0301 ٱلْعَرَبِيَّة", "👍🏽 1,234.5 — ok", "ᚠᚢᚦᚨᚱᚲ ogham ᚁᚂ",
         "한국어 文字 and ελληνικά", "\u00a0\u3000\t\n"]


def test_the_python_reference_implementation_as_written():
    ns: dict = {}
    exec(block("python"), ns)
    for t in TEXTS:
        assert ns["estimate"](t, MODEL) == pytest.approx(estimate(t, MODEL)), t


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=40))
def test_the_python_reference_on_any_text(text):
    ns: dict = {}
    exec(block("python"), ns)
    assert ns["estimate"](text, MODEL) == pytest.approx(estimate(text, MODEL))


def test_the_javascript_reference_implementation_as_written(tmp_path):
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed (.ci/run installs it)")
    script = block("javascript") + f"\nconst texts = {json.dumps(TEXTS)};\nconst model = {json.dumps(MODEL)};\n" \
        "console.log(JSON.stringify(texts.map((t) => estimate(t, model))));\n"
    (tmp_path / "e.js").write_text(script, encoding="utf-8")
    got = json.loads(subprocess.run([node, str(tmp_path / "e.js")], capture_output=True, text=True, check=True).stdout)
    assert got == pytest.approx([estimate(t, MODEL) for t in TEXTS])


def test_the_command_writes_the_model_and_refuses_what_it_cannot_fit(tmp_path, capsys):
    out = tmp_path / "est.json"
    assert main(["fit-estimator", SAMPLE, "-t", "train:bpe:600", "--out", str(out)]) in (0, None)
    m = json.loads(out.read_text(encoding="utf-8"))
    assert {"tokenizer", "weights", "default", "intercept", "heldout", "schema"} <= set(m) and "Hani" in m["weights"]
    assert "estimates, not billing" in " ".join(capsys.readouterr().out.split())
    small = tmp_path / "s.tsv"
    small.write_text("en\tzh\nHello.\t你好。\nBye.\t再见。\n", encoding="utf-8")
    assert main(["fit-estimator", str(small), "-t", "train:bpe:300", "--out", str(tmp_path / "x.json")]) == 2
    assert "the fit needs at least 20 and 5" in capsys.readouterr().err
    assert main(["fit-estimator", SAMPLE, "-t", "train:bpe:300", "--out", str(tmp_path / "x.csv")]) == 2
    assert "--out must end in .json" in capsys.readouterr().err
    assert not (tmp_path / "x.json").exists()
