"""Coverage of compare's intervals: the premium (ratio of sums), the mean-of-ratios premium and
tokens per character, each a seeded percentile bootstrap over segments (their hash buckets), and
the paired interval on the ratio of two tokenizers' tokens for a mix (``tokstat.cost.choice``'s
runner-up gap; the price of fairness is the same estimator on plain vs parity-aware BPE).

Population: all of UD PUD (1,000 aligned sentences, pivot en). The truth is each quantity on the
whole population; DRAWS samples of N sentences are drawn without replacement, compared, and each
95 % interval is checked against the truth. (Sampling without replacement from a finite
population makes the bootstrap slightly conservative: N/1000 of the variance is not there.)

    python analysis/study_coverage_intervals.py [--draws 100] [--n 200] [--out analysis/results/coverage_intervals.csv]

Needs $TOKSTAT_DATA (ud-pud) and $TOKSTAT_TOKENIZERS (o200k_base).
"""

from __future__ import annotations

import argparse
import random
import tempfile
import warnings
from pathlib import Path

import polars as pl
from corpus_parts import pud_segments, write_parallel

from tokstat import compare

TOK = "tiktoken:o200k_base"
OTHER = "tiktoken:cl100k_base"
LANGS = ["en", "zh", "ja", "ko", "ar", "hi", "de", "ru"]
QUANTITIES = {"premium": ("premium_ci_low", "premium_ci_high"),
              "premium_mean_of_ratios": ("premium_mor_ci_low", "premium_mor_ci_high"),
              "tokens_per_char": ("tokens_per_char_ci_low", "tokens_per_char_ci_high")}


def run(path: Path, n_boot: int) -> pl.DataFrame:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return compare(str(path), [TOK, OTHER], n_boot=n_boot, workers=1, words=False, progress=False)


def pair_ratio(df: pl.DataFrame) -> tuple[float, float | None, float | None]:
    """cl100k_base's tokens for an equal-content mix over o200k_base's, − 1, with the 95 % paired
    percentile interval of choice.choose (the same replicate = the same draw of segments)."""
    import numpy as np

    from tokstat.cost.choice import char_shares, replicates

    w = char_shares(df.filter(pl.col("tokenizer") == "tiktoken/o200k_base").to_dicts(), None)
    score, reps = {}, {}
    for (tok,), g in df.group_by("tokenizer"):
        by = {r["language"]: r for r in g.iter_rows(named=True)}
        score[tok] = sum(v * by[k]["tokens_per_char"] for k, v in w.items())
        b = [replicates(by[k]["tokens_per_char_boot"]) for k in w]
        reps[tok] = None if any(x is None for x in b) else sum(v * x for v, x in zip(w.values(), b))
    a, o = "tiktoken/o200k_base", "tiktoken/cl100k_base"
    est = score[o] / score[a] - 1
    if reps[a] is None:
        return est, None, None
    lo, hi = np.quantile(reps[o] / reps[a] - 1, [0.025, 0.975])
    return est, float(lo), float(hi)


def study(draws: int, n: int) -> pl.DataFrame:
    segs = pud_segments(LANGS)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)

        def write(part, name):
            return write_parallel(d / name, part, LANGS)
        whole = run(write(segs, "all.jsonl"), 0)
        truth = {r["language"]: r for r in whole.filter(pl.col("tokenizer") == "tiktoken/o200k_base").iter_rows(named=True)}
        pair_truth = pair_ratio(whole)[0]
        for k in range(draws):
            part = random.Random(k).sample(segs, n)
            df = run(write(part, "s.jsonl"), 1000)
            est, lo_, hi_ = pair_ratio(df)
            rows.append({"quantity": "paired ratio of two tokenizers' mix tokens", "language": "mix", "draw": k,
                         "truth": pair_truth, "low": lo_, "high": hi_, "covered": lo_ <= pair_truth <= hi_})
            for r in df.filter(pl.col("tokenizer") == "tiktoken/o200k_base").iter_rows(named=True):
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
