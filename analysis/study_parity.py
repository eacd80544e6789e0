"""Study 5: the two parities side by side, and TokSuite's formula re-implemented as a cross-check.

TokSuite (2025) reports parity as the mean over sentences of len(tokenize(zh))/len(tokenize(en))
on FLORES-200 dev (``compute_parity`` in github r-three/TokSuite,
toksuite/scripts/calculate_intrinsic_tokenizer_metrics.py; its table is
results/intrinsic_metrics/parity.csv). FLORES-200 is not on this machine, so this study does the
next best thing on UD PUD (1,000 parallel sentences, ../shared): it computes TokSuite's parity
*with TokSuite's own formula* (tiktoken called directly, one ratio per sentence, sentences with an
empty English side skipped, the plain mean) and checks that tokstat's ``premium_mean_of_ratios``
gives the same number, for PUD's Traditional Chinese and for the same sentences converted to
Simplified (OpenCC t2s: FLORES's zho_Hans is Simplified). TokSuite's published FLORES figures are
printed beside them for scale; they are a different corpus and are not expected to match.

Writes analysis/results/parity/parity.csv and prints a Markdown table for docs/metrics.md.

    python analysis/study_parity.py      (exit 2 when ../shared is absent)
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import polars as pl

from shared_tokenizers import SHARED, SPECS

OUT = Path(__file__).resolve().parent / "results" / "parity"

# results/intrinsic_metrics/parity.csv in r-three/TokSuite (FLORES-200 dev, zho_Hans vs eng_Latn)
TOKSUITE_FLORES_ZH = {"r50k_base": 3.211, "o200k_base": 1.266}


def toksuite_parity(enc, zh: list[str], en: list[str]) -> float:
    """TokSuite's compute_parity for one language pair: mean of per-sentence token ratios."""
    ratios = []
    for t1, t2 in zip(zh, en):
        n1, n2 = len(enc.encode_ordinary(t1)), len(enc.encode_ordinary(t2))
        if n2 > 0:
            ratios.append(n1 / n2)
    return sum(ratios) / len(ratios)


def main() -> int:
    if not (SHARED / "corpora/ud-pud").is_dir():
        print("../shared is absent", file=sys.stderr)
        return 2
    import hashlib
    import os
    import shutil

    import opencc
    import tiktoken

    from tokstat import compare, load_corpus
    from tokstat.io import write_table

    pud = load_corpus(str(SHARED / "corpora/ud-pud")).select(["en", "zh"])
    segs = [s for s in pud if s.texts.get("en") and s.texts.get("zh")]
    en = [s.texts["en"] for s in segs]
    hant = [s.texts["zh"] for s in segs]
    t2s = opencc.OpenCC("t2s")
    hans = [t2s.convert(t) for t in hant]
    with tempfile.TemporaryDirectory() as tmp:
        # tiktoken's own constructors, fed from a local cache of the shared files (no network)
        os.environ["TIKTOKEN_CACHE_DIR"] = tmp
        for name in TOKSUITE_FLORES_ZH:
            url = f"https://openaipublic.blob.core.windows.net/encodings/{name}.tiktoken"
            shutil.copy(SPECS[name].split(":", 1)[1], Path(tmp) / hashlib.sha1(url.encode()).hexdigest())
        tsv = Path(tmp) / "pud-hans.tsv"
        tsv.write_text("en\tzh\n" + "".join(f"{a}\t{b}\n" for a, b in zip(en, hans)), encoding="utf-8")
        corpora = {"Hant (PUD as published)": (SHARED / "corpora/ud-pud", hant),
                   "Hans (OpenCC t2s)": (tsv, hans)}
        rows = []
        for name in TOKSUITE_FLORES_ZH:
            spec = SPECS[name]
            enc = tiktoken.get_encoding(name)
            for script, (corpus, zh) in corpora.items():
                df = compare(str(corpus), [spec], languages=["en", "zh"], n_boot=1000, boot_seed=0)
                r = df.filter(pl.col("language") == "zh").row(0, named=True)
                rows.append({"tokenizer": name, "chinese": script,
                             "premium_ratio_of_sums": r["premium"],
                             "premium_mean_of_ratios": r["premium_mean_of_ratios"],
                             "mor_ci_low": r["premium_mor_ci_low"], "mor_ci_high": r["premium_mor_ci_high"],
                             "toksuite_formula": toksuite_parity(enc, zh, en),
                             "toksuite_published_flores": TOKSUITE_FLORES_ZH[name]})
    df = pl.DataFrame(rows)
    OUT.mkdir(parents=True, exist_ok=True)
    write_table(df, OUT / "parity.csv")
    bad = df.filter((pl.col("premium_mean_of_ratios") - pl.col("toksuite_formula")).abs() > 1e-5)
    print("| tokenizer | Chinese | ratio of sums (Petrov) | mean of ratios (TokSuite) [95 % CI] "
          "| TokSuite's formula, direct | TokSuite on FLORES dev (published) |")
    print("|---|---|---|---|---|---|")
    for r in df.iter_rows(named=True):
        print(f"| {r['tokenizer']} | {r['chinese']} | {r['premium_ratio_of_sums']:.3f} | "
              f"{r['premium_mean_of_ratios']:.3f} [{r['mor_ci_low']:.3f}, {r['mor_ci_high']:.3f}] | "
              f"{r['toksuite_formula']:.3f} | {r['toksuite_published_flores']:.3f} |")
    print(f"wrote {OUT / 'parity.csv'}")
    if bad.height:
        print("tokstat's premium_mean_of_ratios differs from TokSuite's formula:", bad, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
