"""Benchmark: a 5-size BPE sweep vs one training at the largest size, measured side by side.

Target (issue: vocabulary sweep): the sweep costs at most 1.5x one training at the largest size.
Corpus: the bundled sample plus PUD zh/en (when ../shared is present). Prints each figure and its
target; exits non-zero when the target is missed.

    python analysis/bench_sweep.py [--sizes 4000,8000,16000,32000,64000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from itertools import chain
from pathlib import Path

from tokstat import load_corpus
from tokstat.corpus import Corpus
from tokstat.sweep import sweep
from tokstat.train import train

ROOT = Path(__file__).resolve().parent.parent
PUD = ROOT.parent / "shared" / "corpora" / "ud-pud"


def corpus() -> Corpus:
    sample = load_corpus("sample")
    if not PUD.is_dir():
        return sample
    pud = load_corpus(PUD).select(["zh", "en"])
    return Corpus("sample+pud-zh-en", ["en", "zh"], lambda: chain(sample, pud), sample.sources + pud.sources,
                  {"loader": "bench"})


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="4000,8000,16000,32000,64000")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    sizes = [int(x) for x in args.sizes.split(",")]
    c = corpus()
    one, full = [], []
    for _ in range(args.repeats):  # interleaved, so both see the same machine load
        t = time.perf_counter()
        train(c, "bpe", max(sizes))
        one.append(time.perf_counter() - t)
        t = time.perf_counter()
        df = sweep(c, "bpe", sizes)
        full.append(time.perf_counter() - t)
    a, b = statistics.median(one), statistics.median(full)
    ratio = b / a
    print(f"corpus: {c.name}; sizes {sizes}; actual vocabulary sizes {sorted(set(df['vocab_size'].to_list()))}")
    print(f"one training at {max(sizes)}: {a:.2f} s (median of {args.repeats})")
    print(f"sweep of {len(sizes)} sizes (train once + derive + compare each): {b:.2f} s")
    ok = ratio <= 1.5
    print(f"sweep / one training = {ratio:.2f}  (target <= 1.50)  {'OK' if ok else 'MISSED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
