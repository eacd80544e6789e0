"""Does the token estimator hold off the languages it was fitted on? (``python analysis/study_estimator.py``;
skips without ``../shared``.)

1. **NTREX-128, languages left out.** ``fit-estimator`` on NTREX's 128 languages (line-aligned, 20 %
   of the lines held out) for cl100k_base, o200k_base and Qwen3: the error of each language's total on
   its held-out lines with its own weights (a language the fit saw), and with the languages left out in
   five groups, each estimated from the others' per-script weights (a language the fit never saw;
   its script unseen when no other language writes it).
2. **Fitted on PUD, used on NTREX.** The same fit on UD PUD's 12 languages, applied to every NTREX
   language as a language it never saw: the situation of a model fitted on one corpus and used on
   another, with 21 scripts PUD does not write.

Writes ``analysis/results/estimator/{ntrex.csv,pud_on_ntrex.csv,summary.csv}``; exits 1 when a target
of the issue is missed: fitted on NTREX, median |total error| ≤ 5 % on languages it saw and ≤ 15 %
on languages it did not, and no language of an unseen script below −10 % (also from PUD).
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "analysis"))

import ntrex  # noqa: E402

OUT = ROOT / "analysis" / "results" / "estimator"
TOKENIZERS = ["tiktoken:cl100k_base", "tiktoken:o200k_base", "hf:qwen3/tokenizer.json"]


def main() -> int:
    import os

    import numpy as np
    import polars as pl

    from tokstat import load_corpus
    from tokstat.estimator import estimate, fit_estimator, main_class, script_counts

    shared = ROOT.parent / "shared"
    if not ntrex.NTREX.is_dir():
        print("../shared/corpora/ntrex-128 is absent: nothing to measure")
        return 0
    os.environ.setdefault("TOKSTAT_TOKENIZERS", str(shared / "tokenizers"))
    OUT.mkdir(parents=True, exist_ok=True)
    rows, pud_rows, summary = [], [], []
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        par = ntrex.parallel_folder(Path(tmp) / "parallel")
        nt = load_corpus(str(par))
        pud = load_corpus(str(shared / "corpora" / "ud-pud"))
        texts = {lang: [] for lang in nt.languages}
        for seg in nt:
            for lang, t in seg.texts.items():
                if t:
                    texts[lang].append(t)
        for spec in TOKENIZERS:
            t0 = time.perf_counter()
            m = fit_estimator(nt, spec)
            print(f"{spec}: fitted on NTREX in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
            for r in m["heldout"]:
                rows.append({"tokenizer": spec, **{k: r[k] for k in ("language", "script", "documents", "total_rel_error",
                                                                     "unseen_total_rel_error", "unseen_script",
                                                                     "chars4_total_rel_error")}})
            lo = m["leave_languages_out"]
            seen = float(np.median([abs(r["total_rel_error"]) for r in m["heldout"]]))
            unseen_scripts = [r["unseen_total_rel_error"] for r in m["heldout"] if r["unseen_script"]]
            # the same tokenizer fitted on PUD (12 languages), used on every NTREX language as an unseen one
            mp = fit_estimator(pud, spec)
            from tokstat.compare import resolve_tokenizers

            a = resolve_tokenizers([spec], nt)[0]
            for lang, ts in texts.items():
                true = float(a.token_counts(ts).sum())
                est = float(sum(estimate(t, mp) for t in ts))
                pud_rows.append({"tokenizer": spec, "language": lang, "script": next(
                    r["script"] for r in m["heldout"] if r["language"] == lang), "total_rel_error": est / true - 1,
                    "unseen_script": main_class(script_counts(t) for t in ts) not in mp["weights"]})
            pr = pl.DataFrame([r for r in pud_rows if r["tokenizer"] == spec])
            summary.append({"tokenizer": spec, "seen_median_abs": seen,
                            "seen_max_abs": max(abs(r["total_rel_error"]) for r in m["heldout"]),
                            "unseen_median_abs": lo["median_abs_total_rel_error"],
                            "unseen_median_abs_seen_scripts": lo["median_abs_total_rel_error_seen_scripts"],
                            "unseen_script_lowest": min(unseen_scripts) if unseen_scripts else None,
                            "pud_on_ntrex_median_abs": float(pr["total_rel_error"].abs().median()),
                            "pud_on_ntrex_unseen_script_lowest": pr.filter(pl.col("unseen_script"))["total_rel_error"].min(),
                            "chars4_median_abs": float(np.median([abs(r["chars4_total_rel_error"]) for r in m["heldout"]]))})
            if seen > 0.05 or lo["median_abs_total_rel_error"] > 0.15 or (unseen_scripts and min(unseen_scripts) < -0.10) \
                    or (summary[-1]["pud_on_ntrex_unseen_script_lowest"] or 0) < -0.10:
                ok = False
    df = pl.DataFrame(rows)
    df.write_csv(OUT / "ntrex.csv")
    pl.DataFrame(pud_rows).write_csv(OUT / "pud_on_ntrex.csv")
    s = pl.DataFrame(summary)
    s.write_csv(OUT / "summary.csv")
    pl.Config.set_tbl_cols(20)
    pl.Config.set_tbl_rows(60)
    pl.Config.set_fmt_str_lengths(40)
    print(s)
    by = (df.filter(pl.col("unseen_total_rel_error").is_not_null())
          .group_by("tokenizer", "script").agg(pl.len().alias("languages"), pl.col("unseen_script").any(),
                                               pl.col("unseen_total_rel_error").median().alias("median"),
                                               pl.col("unseen_total_rel_error").min().alias("lowest"),
                                               pl.col("unseen_total_rel_error").max().alias("highest"))
          .sort("tokenizer", "languages", "script", descending=[False, True, False]))
    print(by)
    print("targets met" if ok else "targets missed")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
