"""The one columnar pass (tokstat/engine/scan.py): totals equal the libraries called directly,
every worker split and engine gives the same numbers and fingerprint, the fast path is verified on
the corpus's own texts inside the pass, the diagnostic sample is bounded and worker-independent,
and bad input is an error naming the file."""

from __future__ import annotations

import gzip
import json
import random
import unicodedata
import warnings
from collections import Counter

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tokstat import load_corpus
from tokstat.adapters import load_tokenizer
from tokstat.engine.scan import VERIFY_BYTES, Verifier, plan_for, run_scan
from tokstat.errors import TokstatError

TEXTS = {
    "en": ["The cat sat on the mat.", "Prices rose 3.5% in 2024!", "  spaces   and\ttabs ", "e\u0301clair caf\u00e9"],
    "zh": ["我们今天去北京。", "這是繁體中文", "ｆｕｌｌ ｗｉｄｔｈ①", "表情 👩‍👩‍👧 符号"],
    "fr": ["Le garçon a mangé à côté.", "Œuvre d\u2019art — «citation»", "ﬁn", ""],
}


def _docs(n: int, seed: int) -> list[dict]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        lang = rng.choice(sorted(TEXTS))
        k = rng.randint(0, 5)
        text = (" " if lang != "zh" else "").join(rng.choice(TEXTS[lang]) for _ in range(k))
        out.append({"text": text, "language": {"en": "eng", "zh": "cmn", "fr": "fra"}[lang],
                    "language_script": {"en": "Latn", "zh": "Hani", "fr": "Latn"}[lang]})
    return out


@pytest.fixture(scope="module")
def corpus_dir(tmp_path_factory):
    """Parquet shards (language + language_script columns, small row groups), JSONL and gzip JSONL."""
    d = tmp_path_factory.mktemp("scan")
    for i in range(4):
        pl.DataFrame(_docs(300, i)).write_parquet(d / f"{i:03d}.parquet", row_group_size=37)
    with open(d / "010.jsonl", "w", encoding="utf-8") as f:
        for r in _docs(200, 10):
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    with gzip.open(d / "011.jsonl.gz", "wt", encoding="utf-8") as f:
        for r in _docs(100, 11):
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    return d


def _all_docs(d) -> list[tuple[str, str]]:
    out = []
    for p in sorted(d.iterdir()):
        if p.suffix == ".parquet":
            rows = pl.read_parquet(p).to_dicts()
        else:
            opener = gzip.open if p.name.endswith(".gz") else open
            with opener(p, "rt", encoding="utf-8") as f:
                rows = [json.loads(line) for line in f if line.strip()]
        out += [({"eng": "en", "cmn": "zh", "fra": "fr"}[r["language"]], r["text"]) for r in rows]
    return out


def _scan(spec, tokenizers, *, normalize="none", workers=1, block=1 << 20, **kw):
    c = load_corpus(str(spec), normalize=normalize)
    adapters = [load_tokenizer(t) if isinstance(t, str) else t for t in tokenizers]
    plan = plan_for(c, adapters, block=block, **kw)
    return c, plan, run_scan(plan, list(range(len(plan.units))), workers=workers)


def test_totals_equal_the_libraries_called_directly(corpus_dir, tiktoken_encoding):
    """--normalize none: tokens per language equal tiktoken's encode_ordinary, summed; characters
    and bytes equal len() and len(encode())."""
    enc = tiktoken_encoding("cl100k_base")
    c, plan, s = _scan(corpus_dir, ["tiktoken:cl100k_base"], block=1500)   # JSONL cut into many blocks
    want_t, want_c, want_b, want_d = Counter(), Counter(), Counter(), Counter()
    for lang, t in _all_docs(corpus_dir):
        want_d[lang] += 1
        want_t[lang] += len(enc.encode_ordinary(t))
        want_c[lang] += len(t)
        want_b[lang] += len(t.encode())
    for k, lang in enumerate(plan.langs):
        assert s.totals.tokens[0, k] == want_t[lang]
        assert s.totals.chars[k] == want_c[lang] and s.totals.bytes[k] == want_b[lang]
        assert s.totals.docs[k] == want_d[lang]


def test_the_fast_path_and_hugging_face_equal_their_libraries(corpus_dir, shared):
    """gigatoken's flat ids (fast path, verified) and tokenizers' batch call give the library's counts."""
    from tokenizers import Tokenizer

    from tokstat.adapters.fast import select_backend

    qwen = shared / "tokenizers" / "qwen3" / "tokenizer.json"
    ref = Tokenizer.from_file(str(qwen))
    adapters = select_backend([load_tokenizer(f"hf:{qwen}"), load_tokenizer("tiktoken:o200k_base")], "auto", [])
    c, plan, s = _scan(corpus_dir, adapters)
    import tiktoken

    o200k = load_tokenizer("tiktoken:o200k_base").enc
    want_q, want_o = Counter(), Counter()
    for lang, t in _all_docs(corpus_dir):
        want_q[lang] += len(ref.encode(t, add_special_tokens=False).ids)
        want_o[lang] += len(o200k.encode_ordinary(t))
    assert isinstance(tiktoken.__version__, str)
    for k, lang in enumerate(plan.langs):
        assert s.totals.tokens[0, k] == want_q[lang]
        assert s.totals.tokens[1, k] == want_o[lang]


@pytest.mark.parametrize("form", ["nfc", "nfkc", "nfc+strip"])
def test_counted_text_is_the_normalised_text(corpus_dir, form, tiktoken_encoding):
    """The ASCII shortcut never changes a count: characters are len(unicodedata.normalize(...))."""
    enc = tiktoken_encoding("cl100k_base")
    c, plan, s = _scan(corpus_dir, ["tiktoken:cl100k_base"], normalize=form)
    base, strip = form.split("+")[0].upper(), form.endswith("+strip")
    want_c, want_t = Counter(), Counter()
    for lang, t in _all_docs(corpus_dir):
        t = unicodedata.normalize(base, t)
        t = t.strip() if strip else t
        want_c[lang] += len(t)
        want_t[lang] += len(enc.encode_ordinary(t))
    for k, lang in enumerate(plan.langs):
        assert s.totals.chars[k] == want_c[lang] and s.totals.tokens[0, k] == want_t[lang]


def test_workers_give_the_same_numbers_fingerprint_and_sample(corpus_dir):
    runs = [_scan(corpus_dir, ["tiktoken:cl100k_base"], workers=w, block=900, keep=frozenset(range(0, 60, 7)),
                  buckets=True, sample_bytes=600, seed=3)[2] for w in (1, 2)]
    a, b = runs
    assert a.fingerprint() == b.fingerprint()
    for k in ("docs", "live", "chars", "bytes", "tokens"):
        assert np.array_equal(getattr(a.totals, k), getattr(b.totals, k))
    assert sorted(a.units) == sorted(b.units) and all(np.array_equal(a.units[k].tokens, b.units[k].tokens) for k in a.units)
    assert np.array_equal(a.bucket_tokens, b.bucket_tokens)
    assert a.sample.docs == b.sample.docs
    # the same pass keeping every document: the sample is the prefix of each language's documents
    # in key order, each kept while those before it hold under 600 bytes
    every = _scan(corpus_dir, ["tiktoken:cl100k_base"], workers=1, block=900, sample_bytes=1 << 40, seed=3)[2]
    assert sum(map(len, every.sample.docs.values())) == int(every.totals.live.sum())
    for lang, docs in every.sample.docs.items():
        before = np.cumsum([0] + [d[3] for d in docs])[:-1]
        assert a.sample.docs[lang] == [d for d, b in zip(docs, before) if b < 600]
        assert 1 <= len(a.sample.docs[lang]) < len(docs)


def test_the_fingerprint_sees_one_changed_character(tmp_path):
    rows = _docs(200, 1)
    for name, rs in (("a", rows), ("b", rows[:150] + [{**rows[150], "text": rows[150]["text"] + "."}] + rows[151:])):
        (tmp_path / name).mkdir()
        pl.DataFrame(rs).write_parquet(tmp_path / name / "x.parquet", row_group_size=50)
    fa = _scan(tmp_path / "a", ["tiktoken:cl100k_base"])[2].fingerprint()
    fb = _scan(tmp_path / "b", ["tiktoken:cl100k_base"])[2].fingerprint()
    assert fa != fb and len(fa) == 64


def test_a_fast_library_that_differs_on_the_corpus_is_turned_off_and_the_pass_rerun(corpus_dir, monkeypatch):
    """gigatoken made wrong on one French text: the in-pass verification finds it, one warning, and
    the counts are the reference library's (not a mix)."""
    from tokstat.adapters import fast as fastmod

    [fa] = fastmod.select_backend([load_tokenizer("tiktoken:cl100k_base")], "fast", [])
    assert isinstance(fa, fastmod.FastAdapter)
    real = fastmod.FastAdapter.encode_fast

    def wrong(self, texts):
        ids, counts = real(self, texts)
        if any("garçon" in t for t in texts) and len(ids):
            ids = ids.copy()
            ids[0] = (ids[0] + 1) % 1000
        return ids, counts

    monkeypatch.setattr(fastmod.FastAdapter, "encode_fast", wrong)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        c, plan, s = _scan(corpus_dir, [fa])
    assert fa.disabled and any("gave other ids" in str(x.message) for x in w)
    ref = _scan(corpus_dir, ["tiktoken:cl100k_base"])[2]
    assert np.array_equal(s.totals.tokens, ref.totals.tokens)


def test_the_verification_is_bounded_whatever_the_number_of_languages():
    """200 languages: each worker verifies at most VERIFY_BYTES plus one text per language."""
    from tokstat.adapters.fast import select_backend

    [fa] = select_backend([load_tokenizer("tiktoken:cl100k_base")], "fast", [])

    class P:
        adapters, langs = [fa], [f"l{i}" for i in range(200)]

    v = Verifier(P())
    seen = []
    v.fast = [type("F", (), {"disabled": None, "id": "x"})()]
    import tokstat.adapters.fast as fm

    orig = fm.first_difference
    fm.first_difference = lambda a, texts: seen.extend(texts)
    try:
        rng = np.random.default_rng(0)
        for _ in range(50):
            idx = rng.integers(0, 200, 500)
            texts = ["x" * 3000] * 500
            v.check(idx, texts, np.full(500, 3000))
    finally:
        fm.first_difference = orig
    assert sum(map(len, seen)) <= VERIFY_BYTES + 200 * 3000
    assert len(v.done) == 200          # every language verified


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.tuples(st.integers(-1, 3), st.integers(0, 6)), max_size=30), min_size=1, max_size=6),
       st.integers(1, 15))
def test_the_verification_picks_what_a_document_by_document_loop_picks(batches, share):
    """Verifier.check (vectorised per language) sends the first-difference check the same texts, in
    the same order, as the loop it replaced: a document of a language under its share is taken."""
    import tokstat.adapters.fast as fm

    v = Verifier.__new__(Verifier)
    v.fast, v.per_lang, v.done = [type("F", (), {"disabled": None, "id": "x"})()], share, {}
    seen, want, done = [], [], {}
    orig = fm.first_difference
    fm.first_difference = lambda a, texts: seen.extend(texts)
    try:
        for b, docs in enumerate(batches):
            idx = np.array([lang for lang, _ in docs], dtype=np.int64)
            nbytes = np.array([n for _, n in docs], dtype=np.int64)
            texts = [f"{b}.{r}" for r in range(len(docs))]
            for r, (lang, n) in enumerate(docs):          # the reference: one document at a time
                if lang >= 0 and n > 0 and done.get(lang, 0) < share:
                    done[lang] = done.get(lang, 0) + n
                    want.append(texts[r])
            v.check(idx, texts, nbytes)
    finally:
        fm.first_difference = orig
    assert seen == want and v.done == done


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.sampled_from(["en", "zh"]), st.text(max_size=40)), min_size=1, max_size=40))
def test_hypothesis_texts_count_as_the_library(tmp_path_factory, tiktoken_encoding, docs):
    enc = tiktoken_encoding("cl100k_base")
    d = tmp_path_factory.mktemp("h")
    docs = [(lang, t.replace("\r", "").replace("\x00", "")) for lang, t in docs]
    docs = [(lang, t.encode("utf-8", "replace").decode("utf-8", "replace")) for lang, t in docs]
    docs = [(lang, "".join(ch for ch in t if not 0xD800 <= ord(ch) <= 0xDFFF)) for lang, t in docs]
    pl.DataFrame({"text": [t for _, t in docs], "language": [lang for lang, _ in docs]}).write_parquet(
        d / "x.parquet", row_group_size=7)
    c, plan, s = _scan(d, ["tiktoken:cl100k_base"], normalize="nfc")
    for k, lang in enumerate(plan.langs):
        mine = [unicodedata.normalize("NFC", t) for g, t in docs if g == lang]
        assert s.totals.tokens[0, k] == sum(len(enc.encode_ordinary(t)) for t in mine)
        assert s.totals.chars[k] == sum(map(len, mine))


def test_bad_input_is_an_error_naming_the_file(tmp_path):
    (tmp_path / "a").mkdir()
    good = json.dumps({"text": "fine", "language": "en"})
    (tmp_path / "a" / "x.jsonl").write_text(good + "\n" + good + "\n", encoding="utf-8")
    c = load_corpus(str(tmp_path / "a"))
    (tmp_path / "a" / "x.jsonl").write_text(good + "\n{not json\n", encoding="utf-8")   # same size: after loading
    plan = plan_for(c, [load_tokenizer("tiktoken:cl100k_base")])
    with pytest.raises(TokstatError, match=r"x\.jsonl.*malformed JSON"):
        run_scan(plan, [0])
    (tmp_path / "b").mkdir()
    pl.DataFrame({"text": [1, 2], "language": ["en", "en"]}).write_parquet(tmp_path / "b" / "y.parquet")
    with pytest.raises(TokstatError, match=r"y\.parquet.*(expected text|text column)"):
        c = load_corpus(str(tmp_path / "b"))
        plan = plan_for(c, [load_tokenizer("tiktoken:cl100k_base")])
        run_scan(plan, [0])


def test_ray_on_a_two_node_cluster_equals_local_workers(corpus_dir):
    """A local Ray cluster of two nodes (head + one joined node, each with its own raylet and object
    store, as a real cluster): actors on both nodes read their own units; numbers and fingerprint are
    the local run's."""
    ray = pytest.importorskip("ray")
    from ray.cluster_utils import Cluster

    local = _scan(corpus_dir, ["tiktoken:cl100k_base"], block=900, keep=frozenset(range(0, 60, 5)))[2]
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "object_store_memory": 80 << 20})
    try:
        cluster.add_node(num_cpus=1, object_store_memory=80 << 20)
        cluster.wait_for_nodes()
        ray.init(address=cluster.address, include_dashboard=False, log_to_driver=False, configure_logging=False)
        assert len([n for n in ray.nodes() if n["Alive"]]) == 2
        c = load_corpus(str(corpus_dir), normalize="none")
        plan = plan_for(c, [load_tokenizer("tiktoken:cl100k_base")], block=900, keep=frozenset(range(0, 60, 5)))
        s = run_scan(plan, list(range(len(plan.units))), workers=2, engine="ray")
        assert len(s.nodes) == 2        # one actor on each node
    finally:
        ray.shutdown()
        cluster.shutdown()
    assert s.fingerprint() == local.fingerprint()
    assert np.array_equal(s.totals.tokens, local.totals.tokens) and np.array_equal(s.totals.bytes, local.totals.bytes)
    assert all(np.array_equal(s.units[k].tokens, local.units[k].tokens) for k in local.units)


def test_compare_with_sampled_diagnostics_keeps_the_exact_columns_exact(corpus_dir):
    """--diagnostics sample: segments, characters, bytes, tokens and their ratios equal the exact run's;
    the sampled rates lie in their intervals' neighbourhood of the exact rates, with the sample named."""
    from tokstat.compare import compare

    c = load_corpus(str(corpus_dir))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ex = compare(c, ["tiktoken:cl100k_base"], pivot=None, diagnostics="exact", n_boot=200)
        sa = compare(c, ["tiktoken:cl100k_base"], pivot=None, diagnostics="sample", n_boot=200, workers=2)
    assert ex.columns == sa.columns
    for col in ("segments", "chars", "bytes", "tokens", "tokens_per_char", "tokens_per_byte"):
        assert ex[col].to_list() == sa[col].to_list(), col
    assert sa["words"].null_count() == sa.height and sa["diag_documents"].min() > 0
    assert ex["diag_documents"].null_count() == ex.height
    assert all("|diag:sample-" in s and "-seed0|" in s for s in sa["signature"])
    assert not any("diag:" in s for s in ex["signature"])
    for r in sa.iter_rows(named=True):
        lo, hi = r["split_char_rate_ci_low"], r["split_char_rate_ci_high"]
        assert lo is not None and lo <= r["split_char_rate"] <= hi
        assert r["tokens_per_char_ci_low"] <= r["tokens_per_char"] <= r["tokens_per_char_ci_high"]


def test_diagnostics_sample_is_refused_where_there_is_no_one_pass():
    from tokstat.compare import compare

    with pytest.raises(TokstatError, match="--diagnostics sample needs the one columnar pass"):
        compare("sample", ["tiktoken:cl100k_base"], diagnostics="sample")
    with pytest.raises(TokstatError, match="unknown --diagnostics"):
        compare("sample", ["tiktoken:cl100k_base"], diagnostics="bogus")


def test_the_ratio_interval_covers_the_population_ratio():
    """The ratio estimator's 95 % interval, on simple random samples of documents, covers the
    population's Σy/Σx in about 95 % of draws (an oracle: the population is known)."""
    from tokstat.diagnose import ratio_interval

    rng = np.random.default_rng(0)
    x = rng.integers(20, 400, 5000).astype(float)
    y = rng.binomial(x.astype(int), rng.beta(2, 20, 5000)).astype(float)
    R = y.sum() / x.sum()
    hits = 0
    for _ in range(400):
        s = rng.choice(5000, 80, replace=False)
        lo, hi = ratio_interval(y[s], x[s], 5000)
        hits += lo <= R <= hi
    assert 0.91 <= hits / 400 <= 0.99


def test_the_one_pass_keeps_compares_guards(corpus_dir, tmp_path):
    """The one-pass path refuses what the exact path refuses: a document over --max-chars (naming its
    file, before anything is encoded) and --calibrate without a pivot; budget --exact too."""
    from tokstat.budget import budget
    from tokstat.compare import compare

    c = load_corpus(str(corpus_dir))
    with pytest.raises(TokstatError, match=r"\.parquet.*over the limit of 20 per text.*--max-chars"):
        compare(c, ["tiktoken:cl100k_base"], pivot=None, diagnostics="sample", max_chars=20)
    with pytest.raises(TokstatError, match="--calibrate needs a pivot"):
        compare(c, ["tiktoken:cl100k_base"], pivot=None, diagnostics="sample", calibrate="sample")
    (tmp_path / "d").mkdir()
    pl.DataFrame({"text": ["x" * 1_000_001], "language": ["en"]}).write_parquet(tmp_path / "d" / "big.parquet")
    with pytest.raises(TokstatError, match=r"big\.parquet.*over the limit") as e:
        budget(str(tmp_path / "d"), ["tiktoken:cl100k_base"], exact=True, workers=1)
    assert "--max-chars" not in str(e.value)       # budget has no such option: the hint does not name it


def _alone_and_in_runs(plan):
    """The same units counted one by one (a run of one each) and as runs (count_units over all)."""
    from tokstat.engine.scan import count_unit, count_units

    alone, runs = plan.empty(), plan.empty()
    for k in range(len(plan.units)):
        count_unit(plan, k, alone, None, {})
    count_units(plan, list(range(len(plan.units))), runs, None, {})
    return alone, runs


@pytest.mark.parametrize("run_bytes", [1 << 30, 3000])
def test_a_run_counts_each_of_its_units_as_if_read_alone(corpus_dir, monkeypatch, run_bytes):
    """Row groups read as one run give each unit its own leaf, counts, buckets and sample documents
    (and the runs are cut by the byte cap: 3,000 bytes puts about one row group in each)."""
    import tokstat.engine.scan as scan_mod

    monkeypatch.setattr(scan_mod, "RUN_BYTES", run_bytes)
    c = load_corpus(str(corpus_dir), normalize="nfkc")
    plan = plan_for(c, [load_tokenizer("tiktoken:cl100k_base")], block=900, keep=frozenset(range(0, 60, 3)),
                    buckets=True, sample_bytes=900, seed=5)
    starts, i, cache = [], 0, {}
    while i < len(plan.units):
        starts.append(i)
        i = scan_mod.run_end(plan, list(range(len(plan.units))), i, cache)
    groups = [k for k in starts if plan.units[k].kind == "rowgroup"]
    n_rg = sum(u.kind == "rowgroup" for u in plan.units)
    if run_bytes > 1 << 20:
        assert len(groups) == 4                 # a run per file (9 row groups each)
    else:
        assert n_rg / 2 < len(groups) <= n_rg   # about one row group each
    alone, runs = _alone_and_in_runs(plan)
    assert alone.leaves == runs.leaves and alone.fingerprint() == runs.fingerprint()
    for k in ("docs", "live", "chars", "bytes", "tokens"):
        assert np.array_equal(getattr(alone.totals, k), getattr(runs.totals, k))
        assert all(np.array_equal(getattr(alone.units[u], k), getattr(runs.units[u], k)) for u in alone.units)
    assert sorted(alone.units) == sorted(runs.units)
    assert np.array_equal(alone.bucket_tokens, runs.bucket_tokens) and np.array_equal(alone.bucket_chars, runs.bucket_chars)
    assert alone.sample.docs == runs.sample.docs and alone.read == runs.read


def test_a_run_with_nulls_other_languages_and_a_language_left_out(tmp_path):
    """Null texts and languages, a language the plan leaves out: each row group alone and the run
    agree, and equal the rows counted by hand."""
    import dataclasses

    rows = [{"text": t, "language": lang} for t, lang in
            [("one", "en"), (None, "en"), ("二", "zh"), ("trois", "fr"), ("", None), ("five", "en"), ("六", "zh"),
             ("sept", "fr"), ("e\u0301", "en"), ("ｆｕｌｌ", "zh")] * 7]
    pl.DataFrame(rows).write_parquet(tmp_path / "x.parquet", row_group_size=3)
    c = load_corpus(str(tmp_path / "x.parquet"))
    plan = plan_for(c, [load_tokenizer("tiktoken:cl100k_base")], keep=frozenset(range(30)))
    assert sorted(plan.langs) == ["en", "fr", "und", "zh"]
    plan = dataclasses.replace(plan, langs=["zh", "en"])
    alone, runs = _alone_and_in_runs(plan)
    assert alone.fingerprint() == runs.fingerprint()
    enc = load_tokenizer("tiktoken:cl100k_base")
    for lang in ("en", "zh"):
        texts = [unicodedata.normalize("NFC", r["text"] or "") for r in rows if r["language"] == lang]
        i = plan.langs.index(lang)
        assert runs.totals.docs[i] == len(texts) and runs.totals.live[i] == sum(1 for t in texts if t)
        assert runs.totals.chars[i] == sum(map(len, texts))
        assert runs.totals.tokens[0, i] == sum(enc.token_counts([t for t in texts if t]))
        assert alone.totals.tokens[0, i] == runs.totals.tokens[0, i]


def test_bad_text_inside_a_run_names_its_row_group(tmp_path):
    """Invalid UTF-8 in the fifth row group of a run, and an over-long document in the seventh:
    each error names that row group (and the row), not the run's first."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    texts = [f"document {i}".encode() for i in range(40)]
    texts[13] = b"broken \xff utf-8"
    pq.write_table(pa.table({"text": pa.array(texts, pa.binary()).cast(pa.string(), safe=False)}),
                   tmp_path / "x.parquet", row_group_size=3)
    (tmp_path / "ok").mkdir()
    pl.DataFrame({"text": ["short"] * 20 + ["x" * 500] + ["short"] * 9}).write_parquet(
        tmp_path / "ok" / "y.parquet", row_group_size=3)
    c = load_corpus(str(tmp_path / "ok"), lang="en")
    plan = plan_for(c, [load_tokenizer("tiktoken:cl100k_base")], max_chars=100)
    with pytest.raises(TokstatError, match=r"y\.parquet: a document of 500 characters \(rowgroup 6, row 2\)"):
        run_scan(plan, list(range(len(plan.units))))
    with pytest.raises(TokstatError, match=r"x\.parquet: invalid UTF-8 in the text column \(row group 4\)"):
        c = load_corpus(str(tmp_path / "x.parquet"), lang="en")
        plan = plan_for(c, [load_tokenizer("tiktoken:cl100k_base")])
        run_scan(plan, list(range(len(plan.units))))


def test_the_pass_does_not_import_pandas(corpus_dir):
    """pyarrow's ``to_numpy`` and ``pa.array`` on Python objects import pandas (0.25 CPU s in every
    worker); the pass reads Arrow buffers directly. Run in a fresh interpreter."""
    import subprocess
    import sys

    code = ("import sys\nfrom tokstat import load_corpus\nfrom tokstat.adapters import load_tokenizer\n"
            "from tokstat.engine.scan import plan_for, run_scan\n"
            f"c = load_corpus({str(corpus_dir)!r}, normalize='nfkc')\n"
            "plan = plan_for(c, [load_tokenizer('tiktoken:cl100k_base')], sample_bytes=200, buckets=True)\n"
            "assert 'pandas' not in sys.modules\n"
            "s = run_scan(plan, list(range(len(plan.units))))\n"
            "assert s.totals.tokens.sum() > 0\n"
            "print('pandas' in sys.modules)\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.strip() == "False"


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.floats(0, 1, exclude_max=True), st.text(min_size=1, max_size=12)), min_size=1, max_size=40,
                unique_by=lambda d: d[0]),
       st.integers(1, 60), st.lists(st.booleans(), min_size=40, max_size=40))
def test_the_sample_is_the_byte_prefix_in_key_order_however_it_is_split(docs, share, side):
    """Any split of the documents between two workers, merged, keeps the prefix of all of them in
    key order: each document while those before it hold fewer than ``share`` bytes."""
    from tokstat.engine.scan import Sample

    keys = np.array([k for k, _ in docs])
    texts = [t for _, t in docs]
    nbytes = np.array([len(t.encode("utf-8")) for t in texts])
    parts = [Sample(share), Sample(share)]
    for w in (0, 1):
        rows = np.array([i for i in range(len(docs)) if side[i] == bool(w)], dtype=np.int64)
        for chunk in np.array_split(rows, 3):       # offered unit by unit
            parts[w].offer(0, keys, "u", texts, nbytes, chunk)
    got = parts[0].merge(parts[1]).docs.get(0, [])
    want, before = [], 0
    for i in np.argsort(keys).tolist():
        if before >= share:
            break
        n = len(texts[i].encode("utf-8"))
        want.append((float(keys[i]), f"u:{i}", texts[i], n))
        before += n
    assert got == want
