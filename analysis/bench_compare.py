"""Benchmark of ``tokstat compare`` (issue 8). Every figure is a ratio measured side by side in one run.

1. compare / the tokenizers' raw batch encoding of the same texts      (target <= 1.25)
2. a naive script (encode per sentence, per-token Python counting,
   a polars table) / compare, with identical per-segment counts         (target >= 4)
3. compare with 1 worker / with 2 workers                              (target >= 1.6)
4. peak memory (RSS of the process and its workers) of ``tokstat compare`` on the corpus repeated
   to 2 GB / to 200 MB                                                  (target <= 1.2)
5. the fast path (issue 30), cl100k_base + o200k_base: ``--backend reference`` / ``--backend fast``
   a. counting in memory (tokenizers loaded once), words included, per-segment rows identical
   c. the same without words or premium, one worker (what ``budget --exact`` counts)
   b. end to end, ``tokstat compare FILE -t … --backend X`` on PUD and on Tatoeba each repeated to
      ``--fast-mb`` MB (loading, verification, words, spans, metrics: everything), identical
      per-segment output                                                (target >= 3)

6. ``compare --join`` (one text per language, the FLORES-200 convention) / the libraries' own
   encoding of the same joined texts, cl100k_base + llama2, on PUD (FLORES-200 is not in ../shared;
   issue 28's target, <= 1.5, is stated for FLORES-200: this is the same workload on 12 languages)

Sections 1-3 run with ``backend="reference"`` (the libraries' own encoding is what they measure).

Corpora: PUD (12 languages) and Tatoeba cmn-eng from ../shared; tokenizers cl100k_base, qwen3,
llama2 and bert-base-chinese from ../shared/tokenizers. Texts are read into memory before 1-3 so
that reading is timed apart (and printed) and both sides of each ratio do the same reading.

    python analysis/bench_compare.py            # everything (the 2 GB run takes a few minutes)
    python analysis/bench_compare.py --small-mb 20 --big-mb 200   # a quicker memory check
    python analysis/bench_compare.py --only-fast --fast-mb 50       # section 5 only

Exits 1 when a target is missed, 2 when ../shared is absent.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import polars as pl

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))   # the pure-Python reference counts (the naive baseline) live in tests/
SHARED = ROOT.parent / "shared"
T = SHARED / "tokenizers"
SPECS = {"cl100k_base": f"tiktoken:{T}/cl100k_base/cl100k_base.tiktoken",
         "qwen3": f"hf:{T}/qwen3/tokenizer.json",
         "llama2": f"spm:{T}/llama2/tokenizer.model",
         "bert-base-chinese": f"wordpiece:{T}/bert-base-chinese/vocab.txt"}


def in_memory(spec: str):
    from tokstat import load_corpus
    from tokstat.corpus import Corpus

    c = load_corpus(spec)
    segs = list(c)
    return Corpus(c.name, c.languages, lambda: iter(segs), c.sources, c.meta, c.gold_words), segs


def raw_encode(adapter, texts: list[str]) -> None:
    """What a user would call: each library's own batch API with its default threads."""
    if hasattr(adapter, "enc"):
        adapter.enc.encode_ordinary_batch(texts)
    elif hasattr(adapter, "tok"):
        adapter.tok.encode_batch(texts, add_special_tokens=False)
    else:
        adapter.sp.encode(texts)


def naive(corpus, segs, adapters) -> pl.DataFrame:
    """Per sentence: encode, count every column with plain Python (tests/counts_reference.py), one row each."""
    from counts_reference import reference_counts   # tests/ is on sys.path (below)
    from tokstat.segmenters import segmenter_name, word_spans

    rows = []
    for a in adapters:
        for lang in corpus.languages:
            gold = lang in corpus.gold_words
            seg_words = segmenter_name(lang, gold) is not None
            for s in segs:
                t = s.texts.get(lang, "")
                enc = a.encode_spans([t])
                w = word_spans(lang, t, s.words.get(lang, []) if gold else None) if seg_words else None
                rows.append({"tokenizer": a.id, "language": lang, "segment": s.id,
                             **reference_counts(t, enc.tokens(0), enc.spans(0), w, a)})
    return pl.DataFrame(rows)


def best(f, n: int = 3) -> float:
    out = []
    for _ in range(n):
        t = time.perf_counter()
        f()
        out.append(time.perf_counter() - t)
    return min(out)


def peak_rss(cmd: list[str]) -> tuple[float, float]:
    """Run ``cmd``; peak of the summed RSS (MiB) of it and its descendants, sampled every 50 ms; wall s."""
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    peak = 0
    stop = threading.Event()

    def tree_rss() -> int:
        kids, total = {p.pid}, 0
        procs = []
        for d in os.listdir("/proc"):
            if d.isdigit():
                try:
                    st = open(f"/proc/{d}/stat").read().rsplit(")", 1)[1].split()
                    procs.append((int(d), int(st[1]), int(st[21])))  # pid, ppid, rss pages
                except (OSError, IndexError):
                    pass
        grew = True
        while grew:
            grew = False
            for pid, ppid, _ in procs:
                if ppid in kids and pid not in kids:
                    kids.add(pid)
                    grew = True
        for pid, _, rss in procs:
            if pid in kids:
                total += rss
        return total * os.sysconf("SC_PAGE_SIZE")

    def sample():
        nonlocal peak
        while not stop.is_set():
            peak = max(peak, tree_rss())
            time.sleep(0.05)

    th = threading.Thread(target=sample, daemon=True)
    t0 = time.perf_counter()
    th.start()
    _, err = p.communicate()
    stop.set()
    th.join()
    if p.returncode:
        sys.exit(f"{' '.join(cmd)} failed:\n{err.decode()[-2000:]}")
    return peak / 2**20, time.perf_counter() - t0


def repeated(segs, langs, mb: int, path: Path) -> int:
    """Write ``segs`` repeated (with fresh ids) as JSONL until the text reaches ``mb`` MB."""
    base = [{"id": s.id, **{lang: s.texts.get(lang, "") for lang in langs}} for s in segs]
    per = sum(len(v.encode()) for r in base for k, v in r.items() if k != "id")
    copies = -(-mb * 10**6 // per)
    with open(path, "w", encoding="utf-8") as f:
        for k in range(copies):
            f.write("".join(json.dumps({**r, "id": f"{k}:{r['id']}"}, ensure_ascii=False) + "\n" for r in base))
    return copies * per


FAST_SPECS = {"cl100k_base": SPECS["cl100k_base"], "o200k_base": f"tiktoken:{T}/o200k_base/o200k_base.tiktoken"}


def fast_section(args, corpora, report) -> None:
    """Section 5: the fast path against the reference, in memory and end to end."""
    from tokstat import compare, load_tokenizer
    from tokstat.adapters.fast import describe, select_backend

    print("\nfast path (issue 30): cl100k_base + o200k_base, --backend reference vs fast")
    ref = [load_tokenizer(s) for s in FAST_SPECS.values()]
    sample = [t for _, segs in corpora.values() for s in segs[:256] for t in s.texts.values() if t]
    fast = select_backend(ref, "fast", sample)
    print(f"  ids from: {describe(fast)}")
    tr = tf = 0.0
    for name, (c, _) in corpora.items():
        compare(c, fast, n_boot=1000, backend=None)   # warm-up
        r = best(lambda: compare(c, ref, n_boot=1000, backend="reference"))
        f = best(lambda: compare(c, fast, n_boot=1000, backend=None))
        _, a = compare(c, ref, n_boot=0, return_segments=True, backend="reference")
        _, b = compare(c, fast, n_boot=0, return_segments=True, backend=None)
        print(f"  a. {name} in memory: reference {r:.2f} s | fast {f:.2f} s | per-segment rows identical: {a.equals(b)}")
        if not a.equals(b):
            report(f"{name}: per-segment rows differ", 0, "identical", False)
        tr, tf = tr + r, tf + f
    report("a. counting in memory, reference / fast", tr / tf, "(no target)", True)
    tr = tf = 0.0
    for name, (c, _) in corpora.items():       # what budget --exact runs: no words, no premium
        kw = dict(n_boot=0, words=False, pivot=None, workers=1)
        r = best(lambda: compare(c, ref, backend="reference", **kw))
        f = best(lambda: compare(c, fast, backend=None, **kw))
        print(f"  c. {name} in memory, no words, 1 worker: reference {r:.2f} s | fast {f:.2f} s")
        tr, tf = tr + r, tf + f
    report("c. counting without words (budget --exact), reference / fast", tr / tf, "(no target)", True)
    er = ef = 0.0
    with tempfile.TemporaryDirectory() as d:
        for name, (c, segs) in corpora.items():
            path = Path(d) / f"{name}.jsonl"
            n = repeated(segs, c.languages, args.fast_mb, path)
            outs, walls = {}, {}
            for backend in ("reference", "fast"):
                out = Path(d) / f"{name}-{backend}.parquet"
                cmd = [sys.executable, "-m", "tokstat.cli", "compare", str(path), *sum((["-t", s] for s in FAST_SPECS.values()), []),
                       "--backend", backend, "--quiet", "--segments-out", str(out)]
                t = time.perf_counter()
                p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
                walls[backend] = time.perf_counter() - t
                if p.returncode:
                    sys.exit(f"{' '.join(cmd)} failed:\n{p.stderr.decode()[-2000:]}")
                outs[backend] = pl.read_parquet(out)
            same = outs["reference"].equals(outs["fast"])
            print(f"  b. {name} repeated to {n / 1e6:,.0f} MB, end to end: reference {walls['reference']:.1f} s | "
                  f"fast {walls['fast']:.1f} s ({walls['reference'] / walls['fast']:.2f}x) | per-segment output "
                  f"identical: {same}")
            if not same:
                report(f"{name}: per-segment output differs", 0, "identical", False)
            er, ef = er + walls["reference"], ef + walls["fast"]
    report("b. end to end, reference / fast", er / ef, ">= 3", er / ef >= 3)


def join_section(corpora, report) -> None:
    """Section 6: --join against the libraries' own encoding of the joined texts."""
    from tokstat import compare, load_tokenizer

    c, segs = corpora["PUD"]
    adapters = [load_tokenizer(SPECS["cl100k_base"]), load_tokenizer(SPECS["llama2"])]
    texts = [" ".join(s.texts[lang] for s in segs if s.texts.get(lang)) for lang in c.languages]
    compare(c, adapters, join=True, backend="reference")     # warm-up
    raw = best(lambda: [raw_encode(a, texts) for a in adapters])
    tj = best(lambda: compare(c, adapters, join=True, backend="reference"))
    print(f"\n--join on PUD (12 joined texts), cl100k_base + llama2: raw encode {raw:.2f} s | compare --join {tj:.2f} s")
    report("compare --join / raw encoding of the joined texts", tj / raw, "<= 1.5 (issue 28, FLORES-200)", tj / raw <= 1.5)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--small-mb", type=int, default=200)
    ap.add_argument("--big-mb", type=int, default=2000)
    ap.add_argument("--fast-mb", type=int, default=50, help="section 5b: MB of text per repeated corpus")
    ap.add_argument("--only-fast", action="store_true", help="run section 5 only")
    ap.add_argument("--only-join", action="store_true", help="run section 6 only")
    args = ap.parse_args()
    if not SHARED.is_dir():
        print("../shared is absent: nothing to benchmark")
        return 2
    from tokstat import compare, load_tokenizer
    from tokstat.counts import COLUMNS

    cores = os.cpu_count()
    print(f"machine: {cores} cores; tokstat compare with its default --workers ({cores})")
    adapters = [load_tokenizer(s) for s in SPECS.values()]
    t = time.perf_counter()
    corpora = {"PUD": in_memory(str(SHARED / "corpora/ud-pud")),
               "Tatoeba": in_memory(str(SHARED / "corpora/tatoeba-cmn-eng/cmn.txt"))}
    print(f"reading both corpora into memory: {time.perf_counter() - t:.2f} s (outside every ratio)")
    misses = []

    def report(name, value, target, ok):
        print(f"  {name}: {value:.2f}  (target {target})  {'ok' if ok else 'MISSED'}")
        if not ok:
            misses.append(name)

    import warnings

    warnings.simplefilter("ignore")   # bert-base-chinese's unknown-token warnings on Thai etc.
    if args.only_fast:
        fast_section(args, corpora, report)
        return 1 if misses else 0
    if args.only_join:
        join_section(corpora, report)
        return 1 if misses else 0
    tot = {"raw": 0.0, "tokstat": 0.0, "naive": 0.0, "w1": 0.0, "w2": 0.0}
    for name, (c, segs) in corpora.items():
        texts = [t for s in segs for t in s.texts.values() if t]
        mb = sum(len(t.encode()) for t in texts) / 1e6
        print(f"\n{name}: {len(segs):,} segments, {len(c.languages)} languages, {mb:.1f} MB of text")
        compare(c, adapters, n_boot=1000, backend="reference")  # warm-up (jieba dictionary, page cache)
        raw = best(lambda: [raw_encode(a, texts) for a in adapters])
        tk = best(lambda: compare(c, adapters, n_boot=1000, backend="reference"))
        w1 = best(lambda: compare(c, adapters, n_boot=1000, workers=1, backend="reference"))
        w2 = best(lambda: compare(c, adapters, n_boot=1000, workers=2, backend="reference"))
        t = time.perf_counter()
        ref = naive(c, segs, adapters)
        nv = time.perf_counter() - t
        _, got = compare(c, adapters, n_boot=0, return_segments=True, backend="reference")
        same = got.select("tokenizer", "language", "segment", *COLUMNS).equals(
            ref.select("tokenizer", "language", "segment", *COLUMNS))
        print(f"  raw batch encode {raw:.2f} s | compare {tk:.2f} s | 1 worker {w1:.2f} s | "
              f"2 workers {w2:.2f} s | naive {nv:.2f} s | per-segment counts identical: {same}")
        if not same:
            misses.append(f"{name}: naive counts differ")
        for k, v in zip(tot, (raw, tk, nv, w1, w2)):
            tot[k] += v
    print("\nboth corpora together:")
    report("compare / raw batch encoding", tot["tokstat"] / tot["raw"], "<= 1.25", tot["tokstat"] / tot["raw"] <= 1.25)
    report("naive / compare (speed-up)", tot["naive"] / tot["tokstat"], ">= 4", tot["naive"] / tot["tokstat"] >= 4)
    report("1 worker / 2 workers (speed-up)", tot["w1"] / tot["w2"], ">= 1.6", tot["w1"] / tot["w2"] >= 1.6)

    print(f"\npeak memory: PUD repeated, cl100k_base, tokstat compare --workers {cores}")
    _, segs = corpora["PUD"]
    peaks = {}
    with tempfile.TemporaryDirectory() as d:
        for mb in (args.small_mb, args.big_mb):
            path = Path(d) / f"pud-{mb}.jsonl"
            n = repeated(segs, corpora["PUD"][0].languages, mb, path)
            peaks[mb], wall = peak_rss([sys.executable, "-m", "tokstat.cli", "compare", str(path), "-t",
                                        SPECS["cl100k_base"], "--backend", "reference", "--quiet", "--out", str(Path(d) / "out.parquet")])
            print(f"  {n / 1e6:,.0f} MB of text: peak {peaks[mb]:,.0f} MiB, {wall:.0f} s "
                  f"({n / 1e6 / wall:.1f} MB/s)")
            path.unlink()
    r = peaks[args.big_mb] / peaks[args.small_mb]
    report(f"peak memory {args.big_mb} MB / {args.small_mb} MB", r, "<= 1.2", r <= 1.2)
    fast_section(args, corpora, report)
    join_section(corpora, report)
    print("\nall targets met" if not misses else f"\nMISSED: {', '.join(misses)}")
    return 1 if misses else 0


if __name__ == "__main__":
    sys.exit(main())
