"""Benchmark of ``tokstat compare`` (issue 8). Every figure is a ratio measured side by side in one run.

1. compare / the tokenizers' raw batch encoding of the same texts      (target <= 1.25)
2. a naive script (encode per sentence, per-token Python counting,
   a polars table) / compare, with identical per-segment counts         (target >= 4)
3. compare with 1 worker / with 2 workers                              (target >= 1.6)
4. peak memory (RSS of the process and its workers) of ``tokstat compare`` on the corpus repeated
   to 2 GB / to 200 MB                                                  (target <= 1.2)

Corpora: PUD (12 languages) and Tatoeba cmn-eng from ../shared; tokenizers cl100k_base, qwen3,
llama2 and bert-base-chinese from ../shared/tokenizers. Texts are read into memory before 1-3 so
that reading is timed apart (and printed) and both sides of each ratio do the same reading.

    python analysis/bench_compare.py            # everything (the 2 GB run takes a few minutes)
    python analysis/bench_compare.py --small-mb 20 --big-mb 200   # a quicker memory check

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


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--small-mb", type=int, default=200)
    ap.add_argument("--big-mb", type=int, default=2000)
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
    tot = {"raw": 0.0, "tokstat": 0.0, "naive": 0.0, "w1": 0.0, "w2": 0.0}
    for name, (c, segs) in corpora.items():
        texts = [t for s in segs for t in s.texts.values() if t]
        mb = sum(len(t.encode()) for t in texts) / 1e6
        print(f"\n{name}: {len(segs):,} segments, {len(c.languages)} languages, {mb:.1f} MB of text")
        compare(c, adapters, n_boot=1000)  # warm-up (jieba dictionary, page cache)
        raw = best(lambda: [raw_encode(a, texts) for a in adapters])
        tk = best(lambda: compare(c, adapters, n_boot=1000))
        w1 = best(lambda: compare(c, adapters, n_boot=1000, workers=1))
        w2 = best(lambda: compare(c, adapters, n_boot=1000, workers=2))
        t = time.perf_counter()
        ref = naive(c, segs, adapters)
        nv = time.perf_counter() - t
        _, got = compare(c, adapters, n_boot=0, return_segments=True)
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
                                        SPECS["cl100k_base"], "--quiet", "--out", str(Path(d) / "out.parquet")])
            print(f"  {n / 1e6:,.0f} MB of text: peak {peaks[mb]:,.0f} MiB, {wall:.0f} s "
                  f"({n / 1e6 / wall:.1f} MB/s)")
            path.unlink()
    r = peaks[args.big_mb] / peaks[args.small_mb]
    report(f"peak memory {args.big_mb} MB / {args.small_mb} MB", r, "<= 1.2", r <= 1.2)
    print("\nall targets met" if not misses else f"\nMISSED: {', '.join(misses)}")
    return 1 if misses else 0


if __name__ == "__main__":
    sys.exit(main())
