"""tokstat budget: the cluster sample's interval covers the exact count (100 seeds), the exact pass
equals the tokenizer library called directly, clusters partition the documents, and bad requests
are one clear error."""

from __future__ import annotations

import json
import random

import numpy as np
import polars as pl
import pytest

from tokstat import TokstatError, load_corpus
from tokstat.budget import BLOCK, TOTAL, budget, clusters, expand, read_cluster
from tokstat.cli import main

SENTS = {lang: [s.texts[lang] for s in load_corpus("sample")] for lang in ("en", "zh")}


def _docs(n: int, rng: random.Random, zh_share: float) -> list[dict]:
    out = []
    for _ in range(n):
        lang = "zh" if rng.random() < zh_share else "en"
        k = rng.randint(1, 6)
        out.append({"text": (" " if lang == "en" else "").join(rng.choice(SENTS[lang]) for _ in range(k)),
                    "language": "cmn" if lang == "zh" else "eng",
                    "language_script": "Hani" if lang == "zh" else "Latn"})
    return out


@pytest.fixture(scope="module")
def shards(tmp_path_factory):
    """20 Parquet shards of 10 row groups and 6 JSONL shards, languages mixed unevenly across them."""
    d = tmp_path_factory.mktemp("shards")
    rng = random.Random(7)
    for i in range(20):
        pl.DataFrame(_docs(400, rng, 0.1 + 0.04 * i)).write_parquet(d / f"{i:03d}.parquet", row_group_size=40)
    for i in range(6):
        with open(d / f"{i:03d}.jsonl", "w", encoding="utf-8") as f:
            for r in _docs(300, rng, 0.5):
                f.write(json.dumps(r, ensure_ascii=False) + "\n")
    return d


def test_clusters_partition_the_documents(shards):
    """Every document is read by exactly one cluster: row groups, and JSONL blocks cut inside lines."""
    c = load_corpus(str(shards))
    files = c.meta["files"]
    for block in (4096, 777, BLOCK):
        cls = clusters(files, block)
        got = [t for cl in cls for _, t in read_cluster(cl, text_col="text", lang_col="language", block=block)]
        want = [t for seg in c for t in seg.texts.values()]
        assert sorted(got) == sorted(want) and len(got) == len(want)


def test_exact_counts_equal_the_library(shards, tiktoken_encoding):
    enc = tiktoken_encoding("cl100k_base")
    c = load_corpus(str(shards))
    want: dict[str, int] = {}
    for seg in c:
        for lang, t in seg.texts.items():
            want[lang] = want.get(lang, 0) + len(enc.encode_ordinary(t))
    want[TOTAL] = sum(want.values())                                 # the per-tokenizer total row
    df = budget(c, ["tiktoken:cl100k_base"], sample=1.0, exact=True, workers=1, block=4096)
    for r in df.iter_rows(named=True):
        assert r["exact"] == want[r["language"]]
        assert r["tokens"] == pytest.approx(want[r["language"]])       # every cluster drawn: the estimate is exact
        assert r["tokens_low"] == r["tokens_high"] == pytest.approx(r["tokens"])
        assert r["fraction_read"] == pytest.approx(1.0) and r["estimator"].startswith("every cluster read")
    langs = df.filter(pl.col("language") != TOTAL)
    assert langs["token_share"].sum() == pytest.approx(1.0) and langs["byte_share"].sum() == pytest.approx(1.0)


@pytest.mark.slow
def test_the_interval_covers_the_exact_count_in_90_of_100_seeds(shards):
    c = load_corpus(str(shards))
    exact = budget(c, ["tiktoken:cl100k_base"], sample=1.0, block=4096)
    truth = {r["language"]: r["tokens"] for r in exact.iter_rows(named=True)}
    covered = {lang: 0 for lang in truth}
    widths = []
    for seed in range(100):
        df = budget(c, ["tiktoken:cl100k_base"], sample=0.15, seed=seed, block=4096)
        for r in df.iter_rows(named=True):
            covered[r["language"]] += r["tokens_low"] is not None and r["tokens_low"] <= truth[r["language"]] <= r["tokens_high"]
            widths.append((r["tokens_high"] - r["tokens_low"]) / truth[r["language"]])
    assert all(v >= 90 for v in covered.values()), covered
    assert 0 < np.median(widths) < 0.5          # an interval, not a shrug


def test_expansion_estimator_by_hand():
    """Cochran's expansion estimator: M/m·Σy and M²(1 − m/M)s²/m."""
    y = np.array([10.0, 14.0, 6.0])
    est, lo, hi = expand(y, 12)
    assert est == pytest.approx(12 / 3 * 30)
    se = 12 * np.sqrt((1 - 3 / 12) * y.var(ddof=1) / 3)
    assert hi - est == pytest.approx(4.303 * se)       # t with 2 degrees of freedom
    assert lo == max(0.0, est - 4.303 * se)


def test_cli_json_records(shards, capsys):
    assert main(["budget", str(shards), "-t", "tiktoken:cl100k_base", "--sample", "40", "--json", "--quiet"]) == 0
    recs = json.loads(capsys.readouterr().out)
    assert {r["language"] for r in recs} == {"en", "zh", TOTAL}
    for r in recs:
        for k in ("tokenizer", "language", "bytes", "documents_sampled", "tokens", "tokens_low", "tokens_high", "exact"):
            assert k in r, k
        assert r["exact"] is None and r["clusters_sampled"] == 40
        assert r["tokens_low"] <= r["tokens"] <= r["tokens_high"]


@pytest.mark.parametrize("argv,msg", [
    (["budget", "sample", "-t", "tiktoken:cl100k_base"], "is a parallel corpus"),
    (["budget", "SHARDS", "-t", "tiktoken:cl100k_base", "--sample", "0"], "--sample must be"),
    (["budget", "SHARDS", "-t", "tiktoken:cl100k_base", "--sample", "nan"], "--sample must be"),
    (["budget", "SHARDS", "-t", "tiktoken:cl100k_base", "--sample", "2.5"], "a fraction is at most 1"),
    (["budget", "SHARDS", "-t", "tiktoken:cl100k_base", "--sample", "lots"], "bad --sample"),
])
def test_bad_budget_requests(shards, argv, msg, capsys):
    argv = [str(shards) if a == "SHARDS" else a for a in argv]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("tokstat: error: ") and msg in err and len(err.strip().splitlines()) == 1, err


def test_budget_needs_a_monolingual_corpus():
    with pytest.raises(TokstatError, match="parallel corpus"):
        budget("sample", ["tiktoken:cl100k_base"])


def test_a_budget_file_makes_a_report_section_and_an_answer(shards, tmp_path):
    """The report reads a budget table: one answer stating each tokenizer's total with its
    interval, as the table gives it, and the evidence table."""
    import re

    from tokstat.fmt import si
    from tokstat.report import report

    df = budget(str(shards), ["tiktoken:cl100k_base", "tiktoken:o200k_base"], sample=40)
    p = tmp_path / "b.parquet"
    df.write_parquet(p)
    page = report([p], tmp_path / "r.html").read_text()
    ans = re.search(r'data-answer="budget"><h3>.*?</h3><div class="lead">(.*?)</div>', page, re.S).group(1)
    text = re.sub(r"<[^>]+>", "", ans)
    for r in df.filter(pl.col("language") == TOTAL).iter_rows(named=True):    # the total's own interval
        assert f"{si(r['tokens'])} tokens with {r['tokenizer']} (95 % interval {si(r['tokens_low'])}–{si(r['tokens_high'])})" in text
    assert 'id="budget"' in page and "share of tokens" in page


def test_a_dataset_without_files_is_refused_with_the_way_out(tmp_path):
    import datasets

    datasets.Dataset.from_dict({"text": ["hello", "你好"], "language": ["en", "zh"]}).save_to_disk(str(tmp_path / "ds"))
    with pytest.raises(TokstatError, match="Dataset.to_parquet"):
        budget(load_corpus(str(tmp_path / "ds"), kind="monolingual"), ["tiktoken:cl100k_base"])
