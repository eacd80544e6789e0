"""Coverage of compare's intervals: the premium (ratio of sums), the mean-of-ratios premium and
tokens per character, each a seeded percentile bootstrap over segments (their hash buckets).

Population: all of UD PUD (1,000 aligned sentences, pivot en). The truth is each quantity on the
whole population; DRAWS samples of N sentences are drawn without replacement, compared, and each
95 % interval is checked against the truth. (Sampling without replacement from a finite
population makes the bootstrap slightly conservative: N/1000 of the variance is not there.)

    python analysis/study_coverage_intervals.py [--draws 100] [--n 200] [--out analysis/results/coverage_intervals.csv]

Needs $TOKSTAT_DATA (ud-pud) and $TOKSTAT_TOKENIZERS (o200k_base).
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import warnings
from pathlib import Path

import polars as pl

from tokstat import compare, load_corpus

TOK = "tiktoken:o200k_base"
LANGS = ["en", "zh", "ja", "ko", "ar", "hi", "de", "ru"]
QUANTITIES = {"premium": ("premium_ci_low", "premium_ci_high"),
              "premium_mean_of_ratios": ("premium_mor_ci_low", "premium_mor_ci_high"),
              "tokens_per_char": ("tokens_per_char_ci_low", "tokens_per_char_ci_high")}


def run(path: Path, n_boot: int) -> pl.DataFrame:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return compare(str(path), [TOK], n_boot=n_boot, workers=1, words=False, progress=False)


def study(draws: int, n: int) -> pl.DataFrame:
    segs = sorted(load_corpus("ud-pud").select(LANGS), key=lambda s: s.id)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)

        def write(part, name):
            p = d / name
            with open(p, "w", encoding="utf-8") as f:
                for s in part:
                    f.write(json.dumps({"id": s.id, **{k: s.texts[k] for k in LANGS}}, ensure_ascii=False) + "\n")
            return p
        truth = {r["language"]: r for r in run(write(segs, "all.jsonl"), 0).iter_rows(named=True)}
        for k in range(draws):
            part = random.Random(k).sample(segs, n)
            for r in run(write(part, "s.jsonl"), 1000).iter_rows(named=True):
                for q, (lo, hi) in QUANTITIES.items():
                    if r["language"] == "en" and q != "tokens_per_char":
                        continue
                    t = truth[r["language"]][q]
                    rows.append({"quantity": q, "language": r["language"], "draw": k, "truth": t,
                                 "low": r[lo], "high": r[hi], "covered": r[lo] <= t <= r[hi]})
    return pl.DataFrame(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--draws", type=int, default=100)
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--out", default="analysis/results/coverage_intervals.csv")
    a = ap.parse_args()
    df = study(a.draws, a.n)
    df.write_csv(a.out)
    per = df.group_by("quantity", "language", maintain_order=True).agg(pl.col("covered").mean().alias("c"))
    s = df.group_by("quantity", maintain_order=True).agg(pl.len().alias("intervals"),
                                                        pl.col("covered").mean().alias("coverage")).join(
        per.group_by("quantity").agg(pl.col("c").min().alias("worst_language_coverage")), on="quantity")
    with pl.Config(tbl_width_chars=140):
        print(s)
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
