"""Benchmark of the one columnar pass (issue 43): `tokstat budget` and `tokstat compare --kind
monolingual` against the fastest exact libraries, CPU seconds per MB side by side in one run.

    python analysis/bench_budget.py                      # 200 MB, 12 languages (+ a 200-language case)
    python analysis/bench_budget.py --mb 40 --skip-compare   # a quick run (--skip-many, --skip-ray)

The corpus (generated, not committed; under --dir): FineWeb-2-style Parquet shards with ``text``,
``language`` and ``language_script`` columns, every shard mixing the languages, documents of 1-40
sentences drawn from PUD's 12 languages (../shared; the bundled corpus's en/zh without it),
row groups small enough that 200 MB holds >= 500 of them. A second corpus of the same size spreads
the same texts over 200 language codes (FLORES-200 has 204).

Printed, each measured in this run: the libraries' own batch encoding of the same texts held in
memory (gigatoken ``encode_batch``, tiktoken ``encode_ordinary_batch``, default threads) and the
tokstat commands run as a user runs them (a subprocess: start-up, reading, verification,
counting, writing; each ``budget`` and Ray command twice, the run of least CPU kept), CPU = user +
system of the process and its workers. For ``--engine ray``,
whose actors and daemons are not children the command waits for, the machine's busy CPU from
``/proc/stat`` (run it on an idle machine), at 1 MB and at the full size, so the start-up and the
per-MB cost come apart (target: Ray's per-MB cost within 10 % of local workers', the run-to-run
noise). Exits 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import compileall
import csv
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import polars as pl

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"
FW2 = {"en": ("eng", "Latn"), "zh": ("cmn", "Hani"), "ar": ("arb", "Arab"), "fr": ("fra", "Latn"),
       "de": ("deu", "Latn"), "hi": ("hin", "Deva"), "ja": ("jpn", "Jpan"), "ko": ("kor", "Hang"),
       "ru": ("rus", "Cyrl"), "es": ("spa", "Latn"), "th": ("tha", "Thai"), "tr": ("tur", "Latn")}
TOK = "tiktoken:cl100k_base"


def sentences() -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    pud = SHARED / "corpora" / "ud-pud"
    if pud.exists():
        for d in sorted(pud.glob("UD_*-PUD")):
            lang = {"Arabic": "ar", "Chinese": "zh", "English": "en", "French": "fr", "German": "de", "Hindi": "hi",
                    "Japanese": "ja", "Korean": "ko", "Russian": "ru", "Spanish": "es", "Thai": "th",
                    "Turkish": "tr"}[d.name[3:-4]]
            for f in d.glob("*.conllu"):
                out.setdefault(lang, []).extend(line[9:].strip() for line in f.open(encoding="utf-8")
                                                if line.startswith("# text = "))
        return out
    sys.path.insert(0, str(ROOT))
    from tokstat import load_corpus

    for s in load_corpus("sample"):
        for lang, t in s.texts.items():
            out.setdefault(lang, []).append(t)
    return out


def write_corpus(d: Path, mb: float, codes: list[tuple[str, str, str]], seed: int = 0, rows_per_group: int = 50) -> int:
    """Shards of about ``mb`` MB of text; ``codes``: (source language, language, script) per
    language code written. Returns the bytes of text."""
    rng = random.Random(seed)
    sents = sentences()
    target, written, shard = int(mb * 1e6), 0, 0
    d.mkdir(parents=True, exist_ok=True)
    while written < target:
        rows = []
        size = 0
        while size < 10e6 and written + size < target:
            src, lang, script = rng.choice(codes)
            sep = "" if src in ("zh", "ja", "th") else " "
            t = sep.join(rng.choice(sents[src]) for _ in range(rng.randint(1, 40)))
            rows.append({"text": t, "language": lang, "language_script": script})
            size += len(t.encode())
        pl.DataFrame(rows).write_parquet(d / f"{shard:03d}.parquet", row_group_size=rows_per_group)
        written += size
        shard += 1
    return written


def many_codes(n: int) -> list[tuple[str, str, str]]:
    """``n`` ISO 639-3 codes (from tokstat's language table), each given one of the source languages' text."""
    sys.path.insert(0, str(ROOT))
    srcs = sorted(sentences())
    with open(ROOT / "tokstat" / "data" / "languages.csv", encoding="utf-8") as f:
        iso = sorted({r["iso639_3"] for r in csv.DictReader(f) if len(r["iso639_3"] or "") == 3})
    from tokstat.errors import TokstatError
    from tokstat.langs import normalize_lang

    rng = random.Random(1)
    rng.shuffle(iso)
    out: list[tuple[str, str, str]] = []
    seen: set[str] = set()
    for code in iso:               # codes tokstat reads as FineWeb-2 spells them (code + script), each once
        src = srcs[len(out) % len(srcs)]
        try:
            norm = normalize_lang(f"{code}_{FW2[src][1]}")
        except TokstatError:
            continue
        if norm not in seen:
            seen.add(norm)
            out.append((src, code, FW2[src][1]))
        if len(out) == n:
            return out
    raise SystemExit(f"only {len(out)} language codes found")


def texts_of(d: Path) -> list[str]:
    return [t for p in sorted(d.glob("*.parquet")) for t in pl.read_parquet(p, columns=["text"])["text"].to_list()]


def in_batches(texts: list[str], size: int = 8 << 20) -> list[list[str]]:
    """``texts`` cut into consecutive batches of about ``size`` bytes."""
    out, cur, n = [], [], 0
    for t in texts:
        cur.append(t)
        n += len(t.encode())
        if n >= size:
            out.append(cur)
            cur, n = [], 0
    return out + ([cur] if cur else [])


def first_pass(tok, batches: list[list[str]], parallel: bool | None = False) -> tuple[float, float]:
    """(CPU, wall) seconds of ``tok`` (gigatoken, built afresh by the caller: its word cache is cold)
    encoding ``batches``; ``parallel`` as gigatoken takes it (False: on this thread)."""
    return cpu_of(lambda: [tok.encode_batch(b, parallel=parallel) for b in batches])


def shard_runs(d: Path, columns: list[str] | None = None):
    """Every shard's ``columns`` (the text alone by default) read as the pass reads them: one table per
    run of row groups, on one thread."""
    import pyarrow.parquet as pq

    from tokstat.engine.scan import RUN_UNITS

    for p in sorted(d.glob("*.parquet")):
        pf = pq.ParquetFile(p)
        n = pf.num_row_groups
        for i in range(0, n, RUN_UNITS):
            yield pf.read_row_groups(list(range(i, min(n, i + RUN_UNITS))), columns=columns or ["text"],
                                     use_threads=False)


def read_shards(d: Path) -> None:
    """:func:`shard_runs`, read and dropped (the cost of decoding alone)."""
    for _ in shard_runs(d):
        pass


def checked_floor(d: Path, ref, full: bool = False) -> float:
    """CPU seconds of a bare loop of the library calls that make one exact, checked pass, with no
    tokstat code between them: each run of row groups read (pyarrow), made one buffer and checked
    to be UTF-8 (Arrow), scanned for text NFC would change (RE2), hashed (sha256), and encoded by
    a fresh gigatoken on this thread, and its characters counted (Arrow). The floor of any pass that
    counts what tokstat's does and guarantees what it does.

    ``full``: also every other library call the pass makes, so that what the pass costs beyond this
    loop is tokstat's own Python: the language and script columns read and dictionary-encoded
    (Arrow) and each row's language found (numpy), the fast path's spelling check (the tokens' byte
    lengths gathered and summed per text, numpy) and the sums per language (numpy ``bincount``)."""
    import hashlib

    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    from tokstat.adapters.base import unspelt
    from tokstat.adapters.fast import FastAdapter, _build, gather
    from tokstat.corpus import unsettled
    from tokstat.utf8 import FlatTexts, numpy_of

    tok, pat = _build(ref), unsettled("NFC")
    lens = FastAdapter(ref)._lens_narrow
    cols = ["text", "language", "language_script"] if full else ["text"]

    def go():
        for t in shard_runs(d, cols):
            arr = t.column("text").combine_chunks().cast(pa.large_string())
            arr.validate(full=True)
            pc.match_substring_regex(arr, pat)
            nchars = numpy_of(pc.utf8_length(arr)).astype(np.int64)
            ft = FlatTexts(arr)
            hashlib.sha256(ft.buffer()).digest()
            out = tok.encode_batch(ft.awkward(), parallel=False)
            if full:
                lay = out.layout
                off = np.asarray(lay.offsets.data, dtype=np.int64)
                ids = np.asarray(lay.content.data)[off[0]:off[-1]]
                nbytes = ft.nbytes()
                unspelt(gather(lens, ids), np.diff(off), ft, nbytes)
                la = pc.dictionary_encode(t.column("language").combine_chunks())
                sc = pc.dictionary_encode(t.column("language_script").combine_chunks())
                code = numpy_of(la.indices).astype(np.int64) * len(sc.dictionary) + numpy_of(sc.indices)
                _, idx = np.unique(code, return_inverse=True)
                for w in (None, nchars, nbytes, np.diff(off)):
                    np.bincount(idx, weights=w)
    return cpu_of(go)[0]


def pass_alone(corpus: Path, ref) -> float:
    """CPU seconds of tokstat's pass (``run_scan`` of ``budget --exact --backend fast``, one worker)
    in this process, with a fresh gigatoken (a cold word cache, as :func:`checked_floor`'s): the
    same work as ``checked_floor(full=True)`` plus tokstat's own Python between the library calls."""
    from tokstat import load_corpus
    from tokstat.adapters.fast import FastAdapter
    from tokstat.engine.scan import plan_for, run_scan

    c = load_corpus(str(corpus))
    fast = FastAdapter(ref)
    fast.tok.encode_batch(["x"], parallel=False)      # built before the clock starts, as checked_floor's
    plan = plan_for(c, [fast])
    return cpu_of(lambda: run_scan(plan, list(range(len(plan.units))), workers=1))[0]


def library_startup(ranks: Path) -> float:
    """CPU seconds of a fresh interpreter that only does what any command counting with these libraries
    does before its first document: import them (numpy, polars, pyarrow, rich, click, langcodes,
    tiktoken, gigatoken; awkward inside gigatoken's first call), load the encoding through tiktoken's
    registry, build gigatoken from the same ranks (``ranks``: the file tokstat hands it) and encode
    one text. The least of three runs."""
    code = ("import numpy, polars, pyarrow.parquet, pyarrow.compute, rich.console, click, langcodes, tiktoken, "
            "gigatoken\n"
            f"tiktoken.get_encoding({TOK.split(':')[1]!r})\n"
            f"g = gigatoken.Tokenizer.from_tiktoken({str(ranks)!r}, pretokenizer='cl100k', special_tokens={{}})\n"
            "g.encode_batch(['hello world'], parallel=False)\n")
    return cpu_of_code(code)


def cpu_of_code(code: str, reps: int = 3) -> float:
    """CPU seconds of a fresh interpreter running ``code``, the least of ``reps`` runs."""
    return min(child(["-c", code], code.splitlines()[0])[0] for _ in range(reps))


#: the word segmenters' own start-up, as their documentation loads them: jieba's dictionary,
#: MeCab with UniDic Lite (fugashi), PyThaiNLP's newmm trie (each segmenting one short text)
SEGMENTERS = ("import logging, jieba\njieba.setLogLevel(logging.WARNING)\nt = jieba.Tokenizer()\nt.initialize()\n"
              "t.lcut('我来到北京清华大学')\nimport fugashi\nfugashi.Tagger()('私は東京の大学で勉強しています。')\n"
              "from pythainlp.tokenize import word_tokenize\nword_tokenize('ฉันรักภาษาไทย', engine='newmm')\n")


#: a command run with its pass timed from inside (tokstat's ``run_scan``: from the workers' start to
#: the merged counts), printed to stderr as ``bench-pass-wall SECONDS`` (summed over its passes)
PASS_TIMER = """
import sys, time
import tokstat.budget
B = sys.modules["tokstat.budget"]       # the module (the package re-exports its function by that name)
inner, spent = B.run_scan, [0.0]
def timed(*a, **k):
    t = time.perf_counter()
    try:
        return inner(*a, **k)
    finally:
        spent[0] += time.perf_counter() - t
B.run_scan = timed
from tokstat.cli import main
sys.argv = ["tokstat", *sys.argv[1:]]
try:
    rc = main()
finally:
    print(f"bench-pass-wall {spent[0]:.4f}", file=sys.stderr)
sys.exit(rc)
"""


def pass_wall(args: list[str], reps: int = 2) -> tuple[float, float]:
    """(wall seconds of the whole command, of its pass alone) of ``tokstat ARGS``, the run of least
    wall of ``reps``."""
    best = None
    for _ in range(reps):
        _, wall, err = child(["-c", PASS_TIMER, *args], f"tokstat {' '.join(args)}")
        inner = float(next(line.split()[1] for line in err.splitlines() if line.startswith("bench-pass-wall")))
        if best is None or wall < best[0]:
            best = (wall, inner)
    return best


#: where the pass's CPU goes: (stage, the functions whose own CPU it is); measured in-process
STAGES = [("gigatoken (the library)", ["<method 'encode_batch' of 'builtins.BPETokenizer' objects>",
                                        "awkward/_dispatch.py:dispatch"]),
          ("Parquet decoding (pyarrow)", ["parquet/core.py:read_row_groups"]),
          ("UTF-8 check, column to one buffer (pyarrow)", ["tokstat/engine/scan.py:_read_groups"]),
          ("normalisation check (RE2) and NFC", ["tokstat/engine/scan.py:normalised*"]),
          ("characters per text (pyarrow)", ["tokstat/utf8.py:nchars*"]),
          ("fingerprint (sha256)", ["<method 'update' of '_hashlib.HASH' objects>"]),
          ("spelling check (numpy)", ["tokstat/adapters/fast.py:token_counts", "tokstat/adapters/fast.py:gather*",
                                      "tokstat/adapters/base.py:unspelt*"])]


def profile_pass(corpus: Path, lib_cpu: float) -> None:
    """``budget --exact --backend fast --workers 1`` in this process under cProfile (CPU clock):
    the CPU of each stage of the pass (:data:`STAGES`; ``*``: with what it calls), beside the library's."""
    import cProfile
    import pstats

    from tokstat import budget

    prof = cProfile.Profile(time.process_time)
    prof.enable()
    budget(str(corpus), [TOK], exact=True, backend="fast", workers=1, progress=False)
    prof.disable()
    st = pstats.Stats(prof).stats
    total = sum(v[2] for v in st.values())
    names = {k: (k[2] if k[0] == "~" else f"{'/'.join(Path(k[0]).parts[-3:])}:{k[2]}") for k in st}
    print(f"  where the pass's CPU goes (budget --exact --workers 1 under cProfile, this process): {total:.2f} CPU s")
    seen = 0.0
    for label, pats in STAGES:
        cpu = 0.0
        for pat in pats:
            cum = pat.endswith("*")
            for k, n in names.items():
                if n.endswith(pat.rstrip("*")):
                    cpu += st[k][3] if cum else st[k][2]
        seen += cpu
        print(f"    {label:48s} {cpu:6.2f} CPU s  {cpu / lib_cpu:5.2f}x the library baseline")
    print(f"    {'the rest (start-up: imports, tokenizer, probes; verification; Python)':48s} {total - seen:6.2f} CPU s")


#: where compare's CPU goes: disjoint stages, each a function with what it calls
COMPARE_STAGES = [("the pass (exact counts, as budget's)", ["tokstat/engine/scan.py:run_scan"]),
                  ("word segmenters (jieba, MeCab, PyThaiNLP): loading, then the sample's documents",
                   ["tokstat/segmenters.py:word_spans"])]


def profile_compare(corpus: Path) -> None:
    """``compare --kind monolingual --workers 1`` in this process under cProfile (its default clock,
    the wall: the sample's compare engine runs threads, which a CPU clock would charge to the
    function the main thread waits in): its fixed cost apart from the pass. This process has
    imported the libraries and loaded the tokenizer already: what is profiled is the work after
    the start-up. The command's table and warnings are dropped."""
    import contextlib
    import io
    import cProfile
    import pstats

    from tokstat.cli import main as cli

    f = Path(tempfile.mkdtemp()) / "c.csv"
    prof = cProfile.Profile()
    argv = sys.argv
    sys.argv = ["tokstat", "compare", str(corpus), "-t", TOK, "--kind", "monolingual", "--quiet", "--workers", "1",
                "--out", str(f)]
    prof.enable()
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            cli()
    except SystemExit:
        pass
    finally:
        prof.disable()
        sys.argv = argv
    st = pstats.Stats(prof).stats
    total = sum(v[2] for v in st.values())
    names = {k: f"{'/'.join(Path(k[0]).parts[-3:])}:{k[2]}" for k in st}
    print(f"  where compare's time goes (--workers 1 under cProfile, this process): {total:.2f} s")
    seen = 0.0
    for label, pats in COMPARE_STAGES:
        # a function's cumulative time, once (recursive calls are counted in it already)
        cpu = sum(st[k][3] for k, n in names.items() for pat in pats if n.endswith(pat))
        seen += cpu
        print(f"    {label:78s} {cpu:6.2f} s")
    print(f"    {'the rest (the sample through the compare engine: spans, histograms, round-trip; writing)':78s} "
          f"{total - seen:6.2f} s")


def half_of(d: Path) -> tuple[Path, float]:
    """A corpus of the first half of ``d``'s shards (links to them) and its MB of text."""
    h = d.with_name(d.name + "-half")
    shards = sorted(d.glob("*.parquet"))
    shards = shards[: max(1, len(shards) // 2)]
    if not h.exists():
        h.mkdir()
        for p in shards:
            (h / p.name).symlink_to(p)
    return h, sum(len(t.encode()) for t in texts_of(h)) / 1e6


def cpu_of(fn) -> tuple[float, float]:
    """(CPU seconds of this process, all threads; wall seconds) of ``fn()``."""
    c0, w0 = time.process_time(), time.perf_counter()
    fn()
    return time.process_time() - c0, time.perf_counter() - w0


def child(argv: list[str], what: str) -> tuple[float, float, str]:
    """(CPU seconds of the process and its workers, wall seconds, its stderr) of a fresh interpreter
    run with ``argv``; a failure ends the benchmark, naming ``what`` ran."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    w0 = time.perf_counter()
    r = subprocess.run([sys.executable, *argv], capture_output=True, text=True)
    wall = time.perf_counter() - w0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode:
        sys.exit(f"{what} failed:\n{r.stderr[-3000:]}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), wall, r.stderr


def run(args: list[str]) -> tuple[float, float]:
    """(CPU seconds of the command and its workers, wall seconds) of ``tokstat ARGS``."""
    return child(["-m", "tokstat.cli", *args], f"tokstat {' '.join(args)}")[:2]


def least_of(args: list[str], out: Path, reps: int = 2) -> tuple[float, float]:
    """:func:`run` of ``tokstat ARGS`` (which writes ``out``), the run of least CPU of ``reps``: this
    machine's noise moves single runs by up to 15 %. ``out`` is removed before each run."""
    best = None
    for _ in range(reps):
        out.unlink(missing_ok=True)
        got = run(args)
        if best is None or got[0] < best[0]:
            best = got
    return best


def machine_cpu() -> float:
    """CPU seconds the whole machine has spent busy (``/proc/stat``): counts the processes a command
    does not wait for (Ray's raylet, object store and actors); meaningful on an idle machine."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return (sum(v) - v[3] - v[4]) / os.sysconf("SC_CLK_TCK")      # all but idle and iowait


def machine_run(args: list[str]) -> tuple[float, float]:
    """(busy CPU seconds of the machine, wall seconds) while ``tokstat ARGS`` runs."""
    c0 = machine_cpu()
    _, wall = run(args)
    return machine_cpu() - c0, wall


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=float, default=200)
    ap.add_argument("--dir", default="/tmp/tokstat-bench-onepass")
    ap.add_argument("--skip-compare", action="store_true")
    ap.add_argument("--skip-many", action="store_true")
    ap.add_argument("--skip-ray", action="store_true")
    a = ap.parse_args()
    base = Path(a.dir)
    twelve, many = base / f"fw2-12-{a.mb:g}", base / f"fw2-200-{a.mb:g}"
    if not twelve.exists():
        n = write_corpus(twelve, a.mb, [(k, *v) for k, v in FW2.items() if k in sentences()])
        print(f"wrote {n / 1e6:.0f} MB of text under {twelve}")
    if not a.skip_many and not many.exists():
        n = write_corpus(many, a.mb, many_codes(200))
        print(f"wrote {n / 1e6:.0f} MB of text in 200 languages under {many}")
    sys.path.insert(0, str(ROOT))
    import gigatoken  # noqa: F401

    from tokstat.adapters import load_tokenizer
    from tokstat.adapters.fast import _build

    compileall.compile_dir(str(ROOT / "tokstat"), quiet=1)   # byte-compiled, as pip installs it
    texts = texts_of(twelve)
    mb = sum(len(t.encode()) for t in texts) / 1e6
    ref = load_tokenizer(TOK)
    giga = _build(ref)
    print(f"machine: {os.cpu_count()} cores; corpus {twelve.name}: {mb:.0f} MB of text, {len(texts):,} documents, "
          f"12 languages; tokenizer {TOK}")
    batches = in_batches(texts)
    g1_cpu, g1_wall = cpu_of(lambda: giga.encode_batch(texts))
    # each a first pass of a tokenizer built afresh: a second pass over the same texts finds every
    # word in gigatoken's cache, which no pass over a corpus does
    gs = {}
    for par in (None, False, None, False):       # the least of two, each a first pass of a fresh tokenizer
        c = first_pass(_build(ref), batches, par)
        gs[par] = min(gs.get(par, c), c)
    t1_cpu, t1_wall = cpu_of(lambda: ref.enc.encode_ordinary_batch(texts))
    ts_cpu, ts_wall = cpu_of(lambda: [ref.enc.encode_ordinary_batch(b) for b in batches])
    g_cpu, t_cpu = min(g1_cpu, *(c for c, _ in gs.values())), min(t1_cpu, ts_cpu)
    print(f"  gigatoken encode_batch (in memory), CPU s: one call on every text {g1_cpu:.2f} ({g1_wall:.1f} s wall); "
          f"in {len(batches)} batches of 8 MiB {gs[None][0]:.2f} ({gs[None][1]:.1f} s wall), the same on one "
          f"thread {gs[False][0]:.2f} (each the least of two first passes of a "
          f"fresh tokenizer); the baseline is the least: {g_cpu:.2f} CPU s, {mb / g_cpu:.0f} MB per CPU s")
    print(f"  tiktoken encode_ordinary_batch (in memory), CPU s: one call {t1_cpu:.1f}, in batches {ts_cpu:.1f}; "
          f"the baseline: {t_cpu:.1f} CPU s, {mb / t_cpu:.1f} MB per CPU s")
    want = sum(len(x) for x in ref.enc.encode_ordinary_batch(texts))
    texts.clear()
    batches.clear()
    rd_cpu, _ = cpu_of(lambda: read_shards(twelve))
    print(f"  reading the text column of the shards with pyarrow (decompression and decoding only): {rd_cpu:.2f} CPU s; "
          f"the floor of any pass that reads Parquet and counts with gigatoken: {(g_cpu + rd_cpu) / g_cpu:.2f}x the "
          f"library's CPU")
    fl_cpu = min(checked_floor(twelve, ref) for _ in range(2))
    print(f"  the same with tokstat's checks, as a bare loop of library calls (read, UTF-8 check, NFC scan, sha256, "
          f"gigatoken on one thread): {fl_cpu:.2f} CPU s, {fl_cpu / g_cpu:.2f}x the library's CPU")
    ff_cpu = min(checked_floor(twelve, ref, full=True) for _ in range(2))
    pa_cpu = min(pass_alone(twelve, ref) for _ in range(2))
    print(f"  with every other library call of the pass (language columns read and encoded, the spelling check, "
          f"the sums per language): {ff_cpu:.2f} CPU s, {ff_cpu / g_cpu:.2f}x; tokstat's pass on one core in this "
          f"process (run_scan, a fresh gigatoken): {pa_cpu:.2f} CPU s, {pa_cpu / g_cpu:.2f}x: tokstat's own code "
          f"in the pass (its Python between the library calls, and the worker's verification of 256 KiB through both "
          f"libraries) {pa_cpu - ff_cpu:+.2f} CPU s ({(pa_cpu - ff_cpu) / pa_cpu:+.0%} of the pass)")
    out = Path(tempfile.mkdtemp())
    results = []

    def check(label: str, value: float, target: float, above: bool = False) -> None:
        ok = value >= target if above else value <= target
        results.append(ok)
        print(f"  {label}: {value:.2f}  (target {'>=' if above else '<='} {target:g})  {'ok' if ok else 'MISSED'}")

    def budget(corpus: Path, *extra: str, name: str = "b", reps: int = 2) -> tuple[float, float, pl.DataFrame]:
        """CPU and wall of ``tokstat budget`` (:func:`least_of` ``reps`` runs) and its output."""
        f = out / f"{name}.csv"
        cpu, wall = least_of(["budget", str(corpus), "-t", TOK, "--quiet", "--out", str(f), *extra], f, reps)
        return cpu, wall, pl.read_csv(f)

    small = base / "fw2-12-1"
    if not small.exists():
        write_corpus(small, 1, [(k, *v) for k, v in FW2.items() if k in sentences()])
    s_mb = sum(len(t.encode()) for t in texts_of(small)) / 1e6
    f0_cpu, f0_wall, _ = budget(small, "--exact", "--backend", "fast", "--workers", "2", name="f0")
    f_cpu, f_wall, fdf = budget(twelve, "--exact", "--backend", "fast", "--workers", "2")
    r_cpu, r_wall, rdf = budget(twelve, "--exact", "--backend", "reference", "--workers", "2", reps=1)
    got = {d.filter(pl.col("language") == "(all)")["exact"][0] for d in (fdf, rdf)}
    print(f"  budget --exact --backend fast: {f_cpu:.1f} CPU s ({f_wall:.1f} s wall); "
          f"--backend reference: {r_cpu:.1f} CPU s ({r_wall:.1f} s wall)")
    print(f"  exact tokens: tokstat fast {fdf.filter(pl.col('language') == '(all)')['exact'][0]:,}, reference "
          f"{rdf.filter(pl.col('language') == '(all)')['exact'][0]:,}, tiktoken directly {want:,}")
    results.append(got == {want})
    print(f"  identical totals to the library (--normalize nfc on NFC text): {got == {want}}")
    check("budget --exact (fast) CPU / gigatoken CPU", f_cpu / g_cpu, 1.5)
    marginal = (f_cpu - f0_cpu) / (mb - s_mb) * mb / g_cpu
    print(f"  budget --exact (fast) on {s_mb:.0f} MB: {f0_cpu:.1f} CPU s ({f0_wall:.1f} s wall): the start-up "
          f"(imports, tokenizer, probes, verification); beyond it, CPU per MB / gigatoken's: {marginal:.2f}")
    rf = out / "ranks.tiktoken"
    rf.write_bytes(ref.ranks_bytes)
    lib0 = library_startup(rf)
    print(f"  the libraries' own start-up (a fresh interpreter importing them, tiktoken's registry load, gigatoken "
          f"built, one text encoded): {lib0:.2f} CPU s; with the checked floor, the least CPU of any checked pass of "
          f"{mb:.0f} MB on one core: {lib0 + fl_cpu:.2f} CPU s, {(lib0 + fl_cpu) / g_cpu:.2f}x the library's "
          f"encoding alone (target 1.5x)")
    n_cpu, n_wall, ndf = budget(twelve, "--exact", "--backend", "fast", "--workers", "2", "--normalize", "none",
                                name="fn")
    print(f"  budget --exact (fast) --normalize none: {n_cpu:.1f} CPU s ({n_wall:.1f} s wall), CPU / gigatoken's "
          f"{n_cpu / g_cpu:.2f}: NFC's share {(f_cpu - n_cpu) / g_cpu:.2f}x; tokens "
          f"{ndf.filter(pl.col('language') == '(all)')['exact'][0]:,}")
    half, h_mb = half_of(twelve)
    hb = in_batches(texts_of(half))
    gh_cpu = min(first_pass(_build(ref), hb)[0] for _ in range(2))    # the library on the same first half
    hb.clear()
    fh_cpu, _, _ = budget(half, "--exact", "--backend", "fast", "--workers", "2", name="fh")
    print(f"  budget --exact (fast) on the first {h_mb:.0f} MB of the shards: {fh_cpu:.1f} CPU s (gigatoken alone "
          f"{gh_cpu:.2f}); from {h_mb:.0f} to {mb:.0f} MB, CPU / gigatoken's over the same MB: "
          f"{(f_cpu - fh_cpu) / (g_cpu - gh_cpu):.2f}")
    print(f"  the same against gigatoken's one call on every text (this benchmark's baseline before): "
          f"{f_cpu / g1_cpu:.2f}, beyond the start-up {marginal * g_cpu / g1_cpu:.2f}")
    profile_pass(twelve, g_cpu)
    check("budget --exact (reference) CPU / tiktoken batch CPU", r_cpu / t_cpu, 1.3)
    w1_cpu, w1_wall, _ = budget(twelve, "--exact", "--backend", "fast", "--workers", "1")
    check("budget --exact: --workers 1 wall / --workers 2 wall", w1_wall / f_wall, 1.7, above=True)
    w10_cpu, w10_wall, _ = budget(small, "--exact", "--backend", "fast", "--workers", "1", name="w10")
    print(f"  --workers 1 / --workers 2, wall beyond the start-up (the {s_mb:.0f} MB runs' wall taken off): "
          f"{(w1_wall - w10_wall) / (f_wall - f0_wall):.2f}")
    walls = {w: pass_wall(["budget", str(twelve), "-t", TOK, "--quiet", "--exact", "--backend", "fast",
                           "--workers", str(w), "--out", str(out / f"pw{w}.csv")]) for w in (1, 2)}
    (c1, p1), (c2, p2) = walls[1], walls[2]
    serial = c1 - p1
    print(f"  the pass itself (run_scan, timed inside the command: from the workers' start to the merged counts), "
          f"wall: --workers 1 {p1:.2f} s, --workers 2 {p2:.2f} s: {p1 / p2:.2f}x; the rest of the command (start-up, "
          f"planning, writing) {serial:.2f} s wall on one core. With that part as it is, even a pass exactly twice "
          f"as fast would make the command {(serial + p1) / (serial + p1 / 2):.2f}x (measured {c1 / c2:.2f}x); "
          f"1.7x needs the rest under {max(0.0, (p1 - 1.7 * p1 / 2) / 0.7):.2f} s")
    one_mb = (w1_cpu - w10_cpu) / (mb - s_mb) * mb
    print(f"  on one core, as the baseline runs (--workers 1, {w1_cpu:.1f} CPU s): CPU / gigatoken's {w1_cpu / g_cpu:.2f}, "
          f"per MB beyond the start-up ({w10_cpu:.1f} CPU s on {s_mb:.0f} MB) "
          f"{one_mb / g_cpu:.2f}; a second worker adds "
          f"{f_cpu - w1_cpu:+.1f} CPU s (its own start-up and its own cold word cache in the library)")
    print(f"  on one core, per MB beyond the start-up, over every library call of the pass: "
          f"{one_mb / ff_cpu:.2f}x; tokstat's own code costs {(one_mb - ff_cpu) / g_cpu:+.2f}x the library's CPU")
    own0 = w10_cpu - lib0 - ff_cpu * s_mb / mb
    parts = [("the libraries' start-up", lib0), ("the pass's library calls", ff_cpu),
             ("tokstat's code in the pass (its Python, the verification)", pa_cpu - ff_cpu),
             ("tokstat's start-up beyond the libraries' (ranks hashed, verification, discovery, writing)", own0),
             ("the second worker (its fork, verification and cold word cache)", f_cpu - w1_cpu)]
    print(f"  budget --exact (fast, --workers 2), {f_cpu:.2f} CPU s, {f_cpu / g_cpu:.2f}x, is: "
          + "; ".join(f"{k} {v:.2f} ({v / g_cpu:.2f}x)" for k, v in parts)
          + f"; left over (run-to-run noise) {f_cpu - sum(v for _, v in parts):+.2f}")
    s_cpu, s_wall, sdf = budget(twelve, "--sample", "0.01")
    row = sdf.filter(pl.col("language") == "(all)").row(0, named=True)
    print(f"  budget --sample 0.01: {s_wall:.1f} s wall, {row['clusters_sampled']} of {row['clusters']} clusters")
    results.append(row["clusters"] >= 500)
    check("budget --sample 0.01: share of the bytes read (%)", 100 * row["fraction_read"], 3)
    if not a.skip_many:
        m_cpu, m_wall, mdf = budget(many, "--exact", "--backend", "fast", "--workers", "2", name="m")
        m_mb = mdf.filter(pl.col("language") == "(all)")["exact_bytes"][0] / 1e6
        m_tok = mdf.filter(pl.col("language") == "(all)")["exact"][0]
        m_texts = texts_of(many)
        m_batches = in_batches(m_texts)
        m_lib = min(first_pass(_build(ref), m_batches)[0] for _ in range(2))
        m_texts.clear()
        m_batches.clear()
        print(f"  200 languages: budget --exact (fast) {m_cpu:.1f} CPU s on {m_mb:.0f} MB ({m_tok:,} tokens), "
              f"{m_cpu / m_mb:.3f} CPU s per MB against {f_cpu / mb:.3f} with 12 ({want:,} tokens): "
              f"{(m_cpu / m_mb) / (f_cpu / mb):.2f}x; gigatoken alone on each corpus's texts (one thread, 8 MiB "
              f"batches): {m_lib:.2f} and {gs[False][0]:.2f} CPU s")
        check("budget --exact CPU per MB over the library's on the same texts, 200 languages / 12 languages",
              (m_cpu / m_lib) / (f_cpu / gs[False][0]), 1.15)
    if not a.skip_compare:
        def compare_cpu(corpus: Path, name: str, *extra: str) -> tuple[float, float]:
            """CPU and wall of ``tokstat compare`` (:func:`least_of` two runs)."""
            return least_of(["compare", str(corpus), "-t", TOK, "--kind", "monolingual", "--quiet", "--workers", "2",
                             *extra, "--out", str(out / name)], out / name)

        c_cpu, c_wall = compare_cpu(twelve, "c.csv")
        print(f"  compare --kind monolingual (default columns, diagnostics on a sample): {c_cpu:.1f} CPU s "
              f"({c_wall:.1f} s wall)")
        check("compare --kind monolingual CPU / gigatoken CPU", c_cpu / g_cpu, 2.5)
        c0_cpu, c0_wall = compare_cpu(small, "c0.csv", "--diagnostics", "sample")
        print(f"  compare on {s_mb:.0f} MB (diagnostics on a sample, of every document at this size): {c0_cpu:.1f} CPU s: "
              f"the start-up and the sample's diagnostics")
        ch_cpu, _ = compare_cpu(half, "ch.csv")        # the first half of the shards, as budget's above
        per_mb = (c_cpu - ch_cpu) / (mb - h_mb)
        print(f"  compare on the first {h_mb:.0f} MB of the shards: {ch_cpu:.1f} CPU s; from {h_mb:.0f} to {mb:.0f} MB "
              f"(the same diagnostic sample size): CPU / gigatoken's over the same MB "
              f"{(c_cpu - ch_cpu) / (g_cpu - gh_cpu):.2f}, fixed {c_cpu - per_mb * mb:.1f} CPU s")
        profile_compare(twelve)
        seg0 = cpu_of_code(SEGMENTERS)
        print(f"  the word segmenters' own start-up (a fresh interpreter loading jieba's dictionary, MeCab with UniDic "
              f"Lite, PyThaiNLP's newmm; one short text each): {seg0:.2f} CPU s; with the libraries' start-up "
              f"({lib0:.2f}), {seg0 + lib0:.2f} of compare's fixed {c_cpu - per_mb * mb:.1f} CPU s; the rest is the "
              f"diagnostics of the sample (words, spans, round-trip of its documents)")
        ce = pl.read_csv(out / "c.csv")
        print(f"  compare tokens, all languages: {ce['tokens'].sum():,} (tiktoken directly {want:,})")
        results.append(ce["tokens"].sum() == want)
        if not a.skip_many:
            piv = "hi" if "hi" in mdf["language"].to_list() else mdf["language"][0]   # no English among the 200
            cm_cpu, _ = compare_cpu(many, "cm.csv", "--pivot", piv)
            cm = pl.read_csv(out / "cm.csv")
            print(f"  200 languages: compare {cm_cpu:.1f} CPU s, its diagnostic sample {cm['diag_documents'].sum():,} "
                  f"documents (12 languages: {ce['diag_documents'].sum():,}; the same 3 MiB of text)")
            check("compare CPU per MB over the library's on the same texts, 200 languages / 12 languages",
                  (cm_cpu / m_lib) / (c_cpu / gs[False][0]), 1.15)
    if not a.skip_ray:
        cost = {}
        for engine in ("local", "ray"):
            for name, corpus in (("small", small), ("big", twelve)):
                f = out / f"r-{engine}-{name}.csv"
                for _ in range(2):          # the least of two: a difference of noisy runs
                    f.unlink(missing_ok=True)
                    c = machine_run(["budget", str(corpus), "-t", TOK, "--exact", "--backend", "fast",
                                     "--workers", "2", "--engine", engine, "--quiet", "--out", str(f)])
                    cost[engine, name] = min(cost.get((engine, name), c), c)
                if name == "big":
                    got = pl.read_csv(f).filter(pl.col("language") == "(all)")["exact"][0]
                    results.append(got == want)
        fixed = {e: cost[e, "small"][0] for e in ("local", "ray")}
        per_mb = {e: (cost[e, "big"][0] - cost[e, "small"][0]) / (mb - 1) for e in ("local", "ray")}
        print(f"  --engine ray (a local instance, 2 actors), machine CPU from /proc/stat: 1 MB {fixed['ray']:.1f} CPU s "
              f"({cost['ray', 'small'][1]:.1f} s wall), {mb:.0f} MB {cost['ray', 'big'][0]:.1f} CPU s "
              f"({cost['ray', 'big'][1]:.1f} s wall); local workers: 1 MB {fixed['local']:.1f}, "
              f"{mb:.0f} MB {cost['local', 'big'][0]:.1f}")
        print(f"  --engine ray start-up (fixed, the 1 MB run over local's): {fixed['ray'] - fixed['local']:.1f} CPU s, "
              f"{cost['ray', 'small'][1] - cost['local', 'small'][1]:.1f} s wall")
        check("--engine ray CPU per MB beyond start-up / local workers' (1 MB to 200 MB)", per_mb["ray"] / per_mb["local"],
              1.1)
    print(f"  a terabyte: budget --exact {(f_cpu - f0_cpu) / (mb - s_mb) * 1e6 / 3600:.1f} CPU-hours (the per-MB cost "
          f"beyond the start-up; {f_cpu / mb * 1e6 / 3600:.1f} at the 200 MB run's rate), gigatoken alone "
          f"{g_cpu / mb * 1e6 / 3600:.1f}, tiktoken alone {t_cpu / mb * 1e6 / 3600:.0f}")
    print("all targets met" if all(results) else "some target MISSED")
    sys.exit(0 if all(results) else 1)


if __name__ == "__main__":
    main()
