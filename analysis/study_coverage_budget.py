"""Coverage of budget's 95 % intervals over seeds, on NTREX-128 shards laid out three ways.

NTREX-128's documents (128 languages, ``analysis/ntrex.py``; each document repeated ``--copies``
times) are written as FineWeb-2-style Parquet shards (``text``, ``language``, ``language_script``)
with small row groups of unequal size (3, 7 and 16 rows in turn, so that a language spans tens of
row groups):

* ``shuffled``: every language in every row group;
* ``language``: written language by language, as a dump is (a row group holds one language, or two
  at a boundary);
* ``length``: sorted by length, so that row groups differ in bytes by orders of magnitude and each
  language sits where its documents' lengths put it.

Every cluster is counted once (the one pass, every unit kept); then, for each of SEEDS seeds, the
design budget draws (``tokstat.sampling.draw``) and the estimates budget prints
(``tokstat.budget.estimates``, the same functions) are compared with the exact counts: per language
and for the total, how often the 95 % interval holds the count, how often a language present in the
data has no number (not sampled) or no interval, the mean relative width and the share of the text
read. Nominal 95 %; the target is at least 93 % in every layout, per language and for the total.
A few seeds are also run through ``budget()`` itself, which must print the same numbers.

    python analysis/study_coverage_budget.py [--seeds 200] [--sample 0.01] [--copies 3]

Needs ../shared (NTREX-128) and $TOKSTAT_TOKENIZERS with cl100k_base (or tiktoken's cache).
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import polars as pl

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "analysis"))

import ntrex  # noqa: E402

TOK = "tiktoken:cl100k_base"
LAYOUTS = ("shuffled", "language", "length")


def unit_counts(c, tok: str):
    """Every cluster's documents, bytes and tokens per language (the one pass, every unit kept)."""
    from tokstat.compare import resolve_tokenizers, with_backend
    from tokstat.engine.scan import BLOCK, clusters, plan_for, run_scan
    from tokstat.sampling import frame

    cls = clusters(c.meta["files"], BLOCK)
    fr = frame(c, cls, BLOCK)
    adapters = with_backend(resolve_tokenizers([tok], c), "auto", None, list(c.languages))
    plan = plan_for(c, adapters, cls, keep=frozenset(range(len(cls))))
    scan = run_scan(plan, list(range(len(cls))), workers=1)
    L = len(c.languages)
    docs = np.array([scan.units[k].docs for k in range(len(cls))], dtype=float).reshape(len(cls), L)
    nbytes = np.array([scan.units[k].bytes for k in range(len(cls))], dtype=float).reshape(len(cls), L)
    toks = np.array([scan.units[k].tokens for k in range(len(cls))], dtype=float).reshape(len(cls), 1, L).transpose(1, 0, 2)
    return fr, docs, nbytes, toks, adapters


def study(seeds: int, sample: float, copies: int) -> pl.DataFrame:
    from tokstat import budget, load_corpus
    from tokstat.budget import TOTAL, estimates
    from tokstat.sampling import MIN_CLUSTERS, draw

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for layout in LAYOUTS:
            d = ntrex.fineweb_shards(Path(tmp) / layout, order=layout, copies=copies, row_groups=(3, 7, 16))
            c = load_corpus(str(d))
            t0 = time.perf_counter()
            fr, docs, nbytes, toks, adapters = unit_counts(c, TOK)
            M = len(fr.units)
            truth = {lang: toks[0, :, k].sum() for k, lang in enumerate(c.languages)}
            truth[TOTAL] = toks[0].sum()
            f = min(1.0, max(MIN_CLUSTERS, math.ceil(sample * M)) / M)
            stats = {k: {"hit": 0, "none": 0, "noint": 0, "width": 0.0, "n": 0} for k in truth}
            read = []
            for seed in range(seeds):
                drawn, pi = draw(fr, f, seed)
                read.append(fr.size[drawn].sum() / fr.size.sum())
                est = estimates(fr, drawn, pi, docs[drawn], nbytes[drawn], toks[:, drawn])
                for (_, lang, _), e in est.items():
                    tk, s = e["tokens"], stats[lang]
                    if tk.value is None:
                        s["none"] += 1
                    elif tk.low is None:
                        s["noint"] += 1
                    else:
                        s["hit"] += tk.low <= truth[lang] <= tk.high
                        s["width"] += (tk.high - tk.low) / truth[lang] if truth[lang] else 0.0
                        s["n"] += 1
                if seed < 3:        # budget() itself prints the same numbers
                    df = budget(c, [TOK], sample=sample, seed=seed, progress=False)
                    for r in df.iter_rows(named=True):
                        k = c.languages.index(r["language"]) if r["language"] != TOTAL else None
                        want = est[(0, r["language"], k)]["tokens"].value
                        assert (r["tokens"] is None and want is None) or abs(r["tokens"] - want) <= 1e-6 * max(1, want), \
                            (layout, seed, r["language"], r["tokens"], want)
            print(f"{layout}: {M} clusters, counted in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
            for lang, s in stats.items():
                rows.append({"layout": layout, "language": lang, "seeds": seeds, "clusters": M,
                             "coverage": s["hit"] / seeds, "not_sampled": s["none"], "no_interval": s["noint"],
                             "mean_relative_width": s["width"] / max(1, s["n"]),
                             "mean_fraction_read": float(np.mean(read))})
    return pl.DataFrame(rows)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=200)
    ap.add_argument("--sample", type=float, default=0.01)
    ap.add_argument("--copies", type=int, default=3)
    ap.add_argument("--out", default=str(ROOT / "analysis/results/coverage_budget.csv"))
    a = ap.parse_args()
    if not ntrex.NTREX.is_dir():
        print("../shared/corpora/ntrex-128 is absent: nothing to measure")
        return 0
    from tokstat.budget import TOTAL

    df = study(a.seeds, a.sample, a.copies)
    df.write_csv(a.out)
    summary = (df.with_columns((pl.col("language") == TOTAL).alias("total"))
               .group_by("layout", "total", maintain_order=True)
               .agg(pl.len().alias("rows"), pl.col("coverage").mean().alias("coverage"),
                    pl.col("coverage").min().alias("lowest_language"),
                    (pl.col("not_sampled").sum() / pl.col("seeds").sum()).alias("not_sampled"),
                    (pl.col("no_interval").sum() / pl.col("seeds").sum()).alias("no_interval"),
                    pl.col("mean_relative_width").median().alias("median_width"),
                    pl.col("mean_fraction_read").first().alias("text_read")))
    with pl.Config(tbl_rows=20, tbl_width_chars=160, tbl_cols=12):
        print(summary)
    worst = summary["coverage"].min()
    print(f"lowest coverage (per language pooled, and the total) over the layouts: {worst:.1%} (target ≥ 93 % at 95 % nominal)")
    print(f"wrote {a.out}")
    return 0 if worst >= 0.93 else 1


if __name__ == "__main__":
    sys.exit(main())
