"""Coverage of the calibrated premium's interval (compare --calibrate) against the direct premium.

Monolingual documents and calibration pairs come from disjoint parts of one parallel set, so the
truth is known: the direct premium of the documents' own content.

* PUD (12 languages, pivot en): documents = one half of the sentences (each text a document in its
  language), calibration pairs = the other half; halves drawn at random (SEEDS seeds) and as the
  contiguous first/second half by sentence id. Truth: the direct premium on the documents' half.
* Tatoeba (cmn-eng, pivot en): English documents from one third, Chinese documents from another,
  calibration pairs from the last; thirds contiguous (file order: the shifted case) and random.
  Truth: the direct premium on the whole set (the documents have no common content).

For each case the interval of tokstat's estimator (sampling intervals of the calibrated premium
and of the calibration set's direct premium joined; see compare.calibrated_premium) and the
sampling-only interval it replaced are checked against the truth; nominal 95 %. PUD's contiguous
halves are cut at ten places (offsets 0, 100, …, 900 of the sentence-id order, wrapping around).

    python analysis/study_coverage_calibrate.py [--seeds 10] [--out analysis/results/coverage_calibrate.csv]

Needs $TOKSTAT_DATA (ud-pud, tatoeba) and $TOKSTAT_TOKENIZERS (cl100k_base, o200k_base).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import warnings
from pathlib import Path

import polars as pl
from corpus_parts import write_parallel

from tokstat import compare, load_corpus

cmp_mod = sys.modules["tokstat.compare"]

TOKS = ["tiktoken:cl100k_base", "tiktoken:o200k_base"]


def write_docs(path: Path, segs, langs) -> None:
    with open(path, "w", encoding="utf-8") as f:
        for s in segs:
            for lang in langs:
                t = s.texts.get(lang, "")
                if t.strip():
                    f.write(json.dumps({"text": t, "language": lang}, ensure_ascii=False) + "\n")


def estimate(docs: Path, cal: Path, sampling_only: bool) -> pl.DataFrame:
    real = cmp_mod.calibration_tokens
    if sampling_only:        # the interval before the transfer check: no calibration tokens, no join
        cmp_mod.calibration_tokens = lambda a, c: {}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return compare(str(docs), TOKS, calibrate=str(cal), n_boot=400, workers=1, words=False, progress=False)
    finally:
        cmp_mod.calibration_tokens = real


def direct(path: Path) -> pl.DataFrame:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return compare(str(path), TOKS, n_boot=0, workers=1, words=False, progress=False)


def score(case: str, est: pl.DataFrame, truth: pl.DataFrame, rule: str) -> list[dict]:
    t = {(r["tokenizer"], r["language"]): r["premium"] for r in truth.iter_rows(named=True)}
    out = []
    for r in est.filter(pl.col("language") != "en").iter_rows(named=True):
        want = t.get((r["tokenizer"], r["language"]))
        if want is None or r["premium_ci_low"] is None:
            continue
        out.append({"case": case, "rule": rule, "tokenizer": r["tokenizer"], "language": r["language"],
                    "truth": want, "premium": r["premium"], "low": r["premium_ci_low"], "high": r["premium_ci_high"],
                    "covered": r["premium_ci_low"] <= want <= r["premium_ci_high"],
                    "transfer": r.get("calibration_transfer")})
    return out


def pud_cases(seeds: int):
    c = load_corpus("ud-pud")
    segs = sorted(c, key=lambda s: s.id)
    langs = list(c.languages)
    for seed in range(seeds):
        rng = random.Random(seed)
        order = segs[:]
        rng.shuffle(order)
        yield f"pud random halves (seed {seed})", order[:500], order[500:], langs, None
    for k in range(0, 1000, 100):       # contiguous halves (by sentence id), cut at ten places
        rot = segs[k:] + segs[:k]
        yield f"pud contiguous halves (offset {k})", rot[:500], rot[500:], langs, None


def tatoeba_cases(seeds: int):
    c = load_corpus("tatoeba")
    segs = [s for s in c if s.texts.get("en", "").strip() and s.texts.get("zh", "").strip()]
    n = len(segs) // 3
    yield "tatoeba contiguous thirds", segs[:n], segs[n:2 * n], segs[2 * n:], ["en", "zh"]
    for seed in range(min(seeds, 3)):
        order = segs[:]
        random.Random(seed).shuffle(order)
        yield f"tatoeba random thirds (seed {seed})", order[:n], order[n:2 * n], order[2 * n:], ["en", "zh"]


def study(seeds: int) -> pl.DataFrame:
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        for case, a, b, langs, _ in pud_cases(seeds):
            write_docs(d / "docs.jsonl", a, langs)
            write_parallel(d / "cal.jsonl", b, langs)
            write_parallel(d / "truth.jsonl", a, langs)
            truth = direct(d / "truth.jsonl")
            for rule, only in (("joined (tokstat)", False), ("sampling only", True)):
                rows += score(case, estimate(d / "docs.jsonl", d / "cal.jsonl", only), truth, rule)
            print(case, file=sys.stderr)
        whole = None
        for case, en, zh, cal, langs in tatoeba_cases(seeds):
            if whole is None:
                write_parallel(d / "all.jsonl", en + zh + cal, langs)
                whole = direct(d / "all.jsonl")
            with open(d / "docs.jsonl", "w", encoding="utf-8") as f:
                for s in en:
                    f.write(json.dumps({"text": s.texts["en"], "language": "en"}, ensure_ascii=False) + "\n")
                for s in zh:
                    f.write(json.dumps({"text": s.texts["zh"], "language": "zh"}, ensure_ascii=False) + "\n")
            write_parallel(d / "cal.jsonl", cal, langs)
            for rule, only in (("joined (tokstat)", False), ("sampling only", True)):
                rows += score(case, estimate(d / "docs.jsonl", d / "cal.jsonl", only), whole, rule)
            print(case, file=sys.stderr)
    return pl.DataFrame(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--out", default="analysis/results/coverage_calibrate.csv")
    a = ap.parse_args()
    df = study(a.seeds)
    df.write_csv(a.out)
    kind = pl.col("case").str.replace(r" \((seed|offset) \d+\)", "")
    summary = (df.with_columns(kind.alias("design")).group_by("design", "rule", maintain_order=True)
               .agg(pl.len().alias("intervals"), pl.col("covered").mean().alias("coverage"),
                    ((pl.col("high") - pl.col("low")) / pl.col("truth")).median().alias("median_rel_width"),
                    (pl.col("transfer") - 1).abs().median().alias("median_|transfer-1|")))
    with pl.Config(tbl_rows=40, tbl_width_chars=160):
        print(summary)
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
