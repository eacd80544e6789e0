"""Study 4: each word segmenter's own boundary F1 against the gold words of UD PUD (../shared).

For every PUD language, the segmenter tokstat uses when a corpus has no gold words (jieba for
Chinese, fugashi + UniDic Lite for Japanese, PyThaiNLP newmm for Thai, the Unicode regex for the
rest) segments the 1,000 sentences; its word boundaries (the start and end offset of each word)
are compared with the gold words' (multiword tokens count once). Writes
analysis/results/segmenters/segmenters.csv and prints a Markdown table for docs/metrics.md.

    python analysis/study_segmenters.py
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import polars as pl

from shared_tokenizers import SHARED

OUT = Path(__file__).resolve().parent / "results" / "segmenters"


def boundaries(spans):
    return {a for a, _ in spans} | {b for _, b in spans}


def main() -> int:
    if not (SHARED / "corpora/ud-pud").is_dir():
        print("../shared is absent", file=sys.stderr)
        return 2
    from tokstat import load_corpus
    from tokstat.segmenters import gold_spans, segmenter_name, word_spans

    c = load_corpus(SHARED / "corpora/ud-pud")
    segs = list(c)
    rows = []
    for lang in c.languages:
        name = segmenter_name(lang, False)
        if name is None:
            rows.append({"language": lang, "segmenter": "none", "precision": None, "recall": None, "f1": None})
            continue
        tp = npred = ngold = 0
        t = time.perf_counter()
        for s in segs:
            text = s.texts[lang]
            pred = boundaries(word_spans(lang, text, None))
            gold = boundaries(gold_spans(text, s.words[lang]))
            tp += len(pred & gold)
            npred += len(pred)
            ngold += len(gold)
        p, r = tp / npred, tp / ngold
        rows.append({"language": lang, "segmenter": name, "precision": round(p, 4), "recall": round(r, 4),
                     "f1": round(2 * p * r / (p + r), 4), "seconds": round(time.perf_counter() - t, 2)})
    # the segmenters a language can be given instead (compare --segmenter LANG=NAME): ICU's dictionary
    # word break, which gives Khmer, Lao and Burmese their words (none is in PUD), measured where PUD has
    # gold for a language it also segments by dictionary; Kiwi's Korean morphemes against PUD's eojeol
    for lang, choice in (("th", "icu"), ("ja", "icu"), ("zh", "icu"), ("ko", "kiwi")):
        if lang not in c.languages:
            continue
        name = segmenter_name(lang, False, choice)
        tp = npred = ngold = 0
        t = time.perf_counter()
        for s in segs:
            text = s.texts[lang]
            pred = boundaries(word_spans(lang, text, None, name))
            gold = boundaries(gold_spans(text, s.words[lang]))
            tp, npred, ngold = tp + len(pred & gold), npred + len(pred), ngold + len(gold)
        p, r = tp / npred, tp / ngold
        rows.append({"language": lang, "segmenter": f"{name} (--segmenter {lang}={choice}; not the default)",
                     "precision": round(p, 4), "recall": round(r, 4), "f1": round(2 * p * r / (p + r), 4),
                     "seconds": round(time.perf_counter() - t, 2)})
    df = pl.DataFrame(rows)
    OUT.mkdir(parents=True, exist_ok=True)
    df.write_csv(OUT / "segmenters.csv")
    print("| language | segmenter | boundary precision | recall | F1 |")
    print("|---|---|---|---|---|")
    for r in df.iter_rows(named=True):
        print(f"| {r['language']} | {r['segmenter']} | {r['precision']} | {r['recall']} | {r['f1']} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
