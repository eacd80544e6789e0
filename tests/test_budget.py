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
from tokstat.budget import BLOCK, TOTAL, budget, clusters, estimates, read_cluster
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


# ------------------------------------------------------------------------ the design and its estimators

def _lang_sorted(d, rows_per_group=(3, 7, 16)):
    """Shards written language by language: en, then zh, then a rare ja held by two row groups."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = random.Random(3)
    docs = [("eng", "Latn", " ".join(rng.choice(SENTS["en"]) for _ in range(rng.randint(1, 5)))) for _ in range(600)]
    docs += [("cmn", "Hani", "".join(rng.choice(SENTS["zh"]) for _ in range(rng.randint(1, 5)))) for _ in range(300)]
    docs += [("jpn", "Jpan", "東京で会いましょう。" * rng.randint(1, 3)) for _ in range(9)]
    d.mkdir(parents=True, exist_ok=True)
    table = lambda part: pa.table({"text": [x[2] for x in part], "language": [x[0] for x in part],  # noqa: E731
                                   "language_script": [x[1] for x in part]})
    with pq.ParquetWriter(d / "000.parquet", table(docs[:1]).schema) as w:
        i = g = 0
        while i < len(docs):
            n = rows_per_group[g % len(rows_per_group)]
            w.write_table(table(docs[i:i + n]), row_group_size=n)
            i, g = i + n, g + 1
    return d


def test_a_language_in_the_data_is_never_an_estimate_of_zero(tmp_path):
    """Written language by language, with a rare language in two row groups: over 30 seeds every
    language has a positive estimate (the rare one read whole, exactly), never 0 [0, 0]."""
    d = _lang_sorted(tmp_path / "s")
    exact = budget(str(d), ["tiktoken:cl100k_base"], sample=1.0)
    truth = dict(zip(exact["language"], exact["tokens"]))
    for seed in range(30):
        df = budget(str(d), ["tiktoken:cl100k_base"], sample=0.02, seed=seed)
        assert df["clusters_sampled"][0] < df["clusters"][0]          # a sample, not the whole
        for r in df.iter_rows(named=True):
            assert r["tokens"] is None or r["tokens"] > 0, r
            if r["language"] == "ja":
                assert r["tokens"] == r["tokens_low"] == r["tokens_high"] == truth["ja"]
        # the documents per language are known from the language column: exact, whatever the sample
        assert sorted(df.filter(pl.col("language") != TOTAL)["documents"].to_list()) == [9.0, 300.0, 600.0]


def test_fraction_read_is_the_share_of_the_text(tmp_path):
    """The share of the text read (the sampled row groups' stored bytes over all of them, from the
    footers), not the share of clusters."""
    import pyarrow.parquet as pq

    d = _lang_sorted(tmp_path / "s", rows_per_group=(2, 30))
    df = budget(str(d), ["tiktoken:cl100k_base"], sample=0.1, seed=4)
    from tokstat import load_corpus
    from tokstat.sampling import draw, frame

    c = load_corpus(str(d))
    cls = clusters(c.meta["files"], BLOCK)
    fr = frame(c, cls, BLOCK)
    md = pq.ParquetFile(d / "000.parquet").metadata
    sizes = np.array([md.row_group(i).column(0).total_uncompressed_size for i in range(md.num_row_groups)], float)
    assert fr.size.tolist() == sizes.tolist()
    drawn, _ = draw(fr, max(30, int(np.ceil(0.1 * len(cls)))) / len(cls), 4)
    assert df["fraction_read"][0] == pytest.approx(sizes[drawn].sum() / sizes.sum())
    assert abs(df["fraction_read"][0] - df["clusters_sampled"][0] / df["clusters"][0]) > 0.02


def test_pareto_sampling_has_its_size_and_its_probabilities():
    """A fixed sample size (round Σπ) and each unit drawn with about its probability π."""
    from tokstat.engine.scan import Cluster
    from tokstat.sampling import Frame, draw, probabilities

    rng = np.random.default_rng(0)
    units = [Cluster("f", None, "rowgroup", i) for i in range(60)]
    docs = rng.integers(0, 20, size=(60, 3)).astype(float)
    docs[:, 2] = 0
    docs[[5, 40], 2] = [3, 1]                          # a rare language in two units
    fr = Frame(units, ["a", "b", "c"], rng.uniform(100, 5000, 60), docs)
    pi = probabilities(fr, 0.1)
    assert pi[5] == pi[40] == 1.0 and (pi > 0).all() and pi.max() <= 1
    n = round(pi.sum())
    hits = np.zeros(60)
    for seed in range(3000):
        drawn, _ = draw(fr, 0.1, seed)
        assert len(drawn) == n and {5, 40} <= set(drawn)
        hits[drawn] += 1
    assert np.abs(hits / 3000 - pi).max() < 0.05      # Pareto πps: π closely (Rosén 1997)


def test_the_ratio_estimate_and_its_variance_by_hand():
    from tokstat.sampling import ratio

    y = np.array([30.0, 12.0, 0.0, 25.0])
    x = np.array([3.0, 1.0, 0.0, 2.0])
    pi = np.array([0.5, 0.25, 0.5, 1.0])
    e = ratio(y, x, pi, 20.0, True)
    R = (30 / 0.5 + 12 / 0.25 + 25) / (3 / 0.5 + 1 / 0.25 + 2)
    assert e.value == pytest.approx(R * 20)
    res = (y - R * x)[:3]
    w, z = 1 - pi[:3], res / pi[:3]
    A = (w * z).sum() / w.sum()
    var = (20 / (3 / 0.5 + 1 / 0.25 + 2)) ** 2 * 2 / 1 * 3 / 2 * (w * (z - A) ** 2).sum()   # n = 2 hold it, m = 3
    assert e.high - e.value == pytest.approx(12.706 * np.sqrt(var))
    assert ratio(y, x, pi, 20.0, False).value == pytest.approx((y / pi).sum())         # read whole: the sum
    assert ratio(y, np.zeros(4), pi, 5.0, True).value is None                           # in the data, not sampled


def test_budget_prints_the_estimates_of_its_draw(shards):
    """budget()'s rows are tokstat.budget.estimates of the draw tokstat.sampling.draw makes."""
    from tokstat import load_corpus
    from tokstat.engine.scan import plan_for, run_scan
    from tokstat.compare import resolve_tokenizers
    from tokstat.sampling import draw, frame

    c = load_corpus(str(shards))
    cls = clusters(c.meta["files"], 4096)
    fr = frame(c, cls, 4096)
    drawn, pi = draw(fr, max(30, int(np.ceil(0.1 * len(cls)))) / len(cls), 2)
    a = resolve_tokenizers(["tiktoken:cl100k_base"], c)
    scan = run_scan(plan_for(c, a, cls, block=4096, keep=frozenset(drawn)), drawn, workers=1)
    L = len(c.languages)
    docs = np.array([scan.units[k].docs for k in drawn], float).reshape(len(drawn), L)
    nb = np.array([scan.units[k].bytes for k in drawn], float).reshape(len(drawn), L)
    tk = np.array([scan.units[k].tokens for k in drawn], float).reshape(len(drawn), 1, L).transpose(1, 0, 2)
    est = estimates(fr, drawn, pi, docs, nb, tk)
    df = budget(c, ["tiktoken:cl100k_base"], sample=0.1, seed=2, block=4096)
    for r in df.iter_rows(named=True):
        k = c.languages.index(r["language"]) if r["language"] != TOTAL else None
        e = est[(0, r["language"], k)]["tokens"]
        assert (r["tokens"], r["tokens_low"], r["tokens_high"]) == pytest.approx((e.value, e.low, e.high))
    # the JSONL shards' languages were counted per block before sampling: documents are known, not estimated
    assert "known documents per language" in df["estimator"][0]
    assert df.filter(pl.col("language") != TOTAL)["documents_low"].to_list() == \
        df.filter(pl.col("language") != TOTAL)["documents"].to_list()
