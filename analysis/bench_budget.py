"""Benchmark: `tokstat budget` with a 1 % cluster sample against the exact pass, on a generated
corpus in the FineWeb-2 layout (not committed; written to --dir).

    python analysis/bench_budget.py --gb 3 --dir /tmp/fw2        # several GB, as the issue asks
    python analysis/bench_budget.py --gb 0.3                       # a quick run

The corpus: ``DIR/data/{eng_Latn,cmn_Hani}/train/NNN.parquet`` (FineWeb-2's folder layout; a
``text`` column, 1,000-row row groups), documents of 1-40 sentences drawn from the bundled corpus
and (when present) ../shared's Tatoeba. Prints, side by side
in one run: the seconds of the sampled and of the exact pass, their ratio, and whether each exact
count lies inside the sample's 95 % interval.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
import warnings
from pathlib import Path

import polars as pl

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tokstat import load_corpus  # noqa: E402
from tokstat.budget import budget  # noqa: E402


def sentences() -> dict[str, list[str]]:
    out = {"en": [], "zh": []}
    for s in load_corpus("sample"):
        out["en"].append(s.texts["en"])
        out["zh"].append(s.texts["zh"])
    shared = ROOT.parent / "shared" / "corpora"
    tat = shared / "tatoeba-cmn-eng" / "cmn.txt"
    if tat.exists():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for s in load_corpus(str(tat)):
                out["en"].append(s.texts["en"])
                out["zh"].append(s.texts["zh"])
    return out


def write_corpus(d: Path, gb: float, seed: int = 0, rows_per_group: int = 1000) -> int:
    """FineWeb-2-style shards of about ``gb`` GB of text; returns the bytes of text written."""
    rng = random.Random(seed)
    sents = sentences()
    target = int(gb * 1e9)
    written = 0
    shard = 0
    while written < target:
        for lang, code in (("en", "eng_Latn"), ("zh", "cmn_Hani")):
            docs = []
            for _ in range(20_000):
                k = rng.randint(1, 40)
                docs.append((" " if lang == "en" else "").join(rng.choice(sents[lang]) for _ in range(k)))
            out = d / "data" / code / "train"
            out.mkdir(parents=True, exist_ok=True)
            pl.DataFrame({"text": docs}).write_parquet(out / f"{shard:03d}.parquet", row_group_size=rows_per_group)
            written += sum(len(t.encode()) for t in docs)
        shard += 1
    return written


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--gb", type=float, default=3.0)
    ap.add_argument("--dir", default="/tmp/tokstat-bench-budget")
    ap.add_argument("--sample", type=float, default=0.01)
    ap.add_argument("-t", "--tokenizer", default="tiktoken:cl100k_base")
    args = ap.parse_args()
    d = Path(args.dir)
    if not (d / "data").exists():
        t = time.perf_counter()
        n = write_corpus(d, args.gb)
        print(f"wrote {n / 1e9:.2f} GB of text in {time.perf_counter() - t:.0f} s under {d}")
    spec = str(d / "data")
    t0 = time.perf_counter()
    est = budget(spec, [args.tokenizer], sample=args.sample, progress=False)
    t1 = time.perf_counter()
    ex = budget(spec, [args.tokenizer], sample=args.sample, exact=True, progress=False)
    t2 = time.perf_counter()
    sampled, both = t1 - t0, t2 - t1
    exact_only = both - sampled        # the exact pass (the second call also re-draws the sample)
    print(f"sample {args.sample:g}: {sampled:.1f} s; exact pass: {exact_only:.1f} s; ratio {sampled / exact_only:.3f} "
          f"(target < 0.05)")
    for r, e in zip(est.iter_rows(named=True), ex.iter_rows(named=True)):
        inside = r["tokens_low"] <= e["exact"] <= r["tokens_high"]
        print(json.dumps({"language": r["language"], "estimate": round(r["tokens"]), "low": round(r["tokens_low"]),
                          "high": round(r["tokens_high"]), "exact": e["exact"], "inside": inside,
                          "clusters": f"{r['clusters_sampled']}/{r['clusters']}"}))


if __name__ == "__main__":
    main()
