"""Coverage of vocab-plan's 90 % interval: does the interval from part of a corpus hold the answer
the whole corpus gives?

Population: UD PUD in six languages (zh, en, ja, ko, ar, hi; mix 30/30/10/10/10/10, llama2-7b).
The answer on all 1,000 sentences, swept at 4k-64k, is the truth. DRAWS random halves (500
sentences) are swept on the same grid and planned; each interval is checked against the truth.
(An optimum has no population value beyond the data it is fitted on: this asks the question a user
can ask, "would more of the same text move the answer out of my interval?")

    python analysis/study_coverage_vocab.py [--draws 20] [--out analysis/results/coverage_vocab.csv]

Needs $TOKSTAT_DATA (ud-pud).
"""

from __future__ import annotations

import argparse
import random
import tempfile
import warnings
from pathlib import Path

import polars as pl
from corpus_parts import pud_segments, write_parallel

from tokstat import sweep
from tokstat.cost.model import preset
from tokstat.vocabplan import plan_from

LANGS = ["zh", "en", "ja", "ko", "ar", "hi"]
MIX = "zh=0.3,en=0.3,ja=0.1,ko=0.1,ar=0.1,hi=0.1"
SIZES = [4000, 8000, 16000, 32000, 64000]


def plan_of(path: Path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sw = sweep(str(path), "bpe", SIZES, mix=MIX, progress=False)
        return plan_from(sw, model=preset("llama2-7b"), mix=MIX)[0]


def study(draws: int) -> pl.DataFrame:
    segs = pud_segments(LANGS)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)

        def write(part, name):
            return write_parallel(d / name, part, LANGS)
        truth = plan_of(write(segs, "all.jsonl")).recommended_vocab_size
        for k in range(draws):
            p = plan_of(write(random.Random(k).sample(segs, len(segs) // 2), "half.jsonl"))
            lo, hi = p.interval or (None, None)
            rows.append({"draw": k, "truth": truth, "answer": p.recommended_vocab_size, "low": lo, "high": hi,
                         "covered": lo is not None and lo <= truth <= hi})
    return pl.DataFrame(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--draws", type=int, default=20)
    ap.add_argument("--out", default="analysis/results/coverage_vocab.csv")
    a = ap.parse_args()
    df = study(a.draws)
    df.write_csv(a.out)
    print(df)
    print(f"coverage {df['covered'].mean():.1%} of {df.height} (nominal 90 %); truth {df['truth'][0]:,}; "
          f"median width {((df['high'] - df['low']) / df['truth']).median():.1%}")
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
