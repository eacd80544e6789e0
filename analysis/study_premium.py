"""Study 1: what Chinese costs against English, across every pretrained tokenizer in ../shared.

For each tokenizer of ``analysis/shared_tokenizers.py``: ``tokstat compare`` on PUD (1,000 parallel
sentences, Traditional Chinese, gold words) and on Tatoeba cmn-eng (26k short pairs, mixed scripts,
jieba words), English as the pivot. Writes

    analysis/results/premium/pud.csv, tatoeba.csv   every compare column, one row per (tokenizer, language)
    analysis/results/premium/summary.csv            the Chinese rows side by side
    analysis/results/premium/premium.png            Chinese premium (95% CI) on both corpora
    analysis/results/premium/report.html           the tokstat report of both runs

    python analysis/study_premium.py      (skips, exit 0, when ../shared is absent)
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import polars as pl

from shared_tokenizers import SHARED, SPECS

OUT = Path(__file__).resolve().parent / "results" / "premium"


def main() -> int:
    if not SHARED.is_dir():
        print("../shared is absent: study 1 skipped")
        return 0
    from tokstat import compare, load_tokenizer
    from tokstat.io import write_table
    from tokstat.report import report

    adapters, skipped = [], []
    for name, spec in SPECS.items():
        try:
            a = load_tokenizer(spec)
            a.id = name            # the folder name in ../shared/tokenizers is the clearest label here
            adapters.append(a)
        except Exception as e:  # a tokenizer this machine cannot load is reported, not fatal
            skipped.append(f"{name}: {e}")
    corpora = {"pud": (str(SHARED / "corpora/ud-pud"), ["en", "zh"]),
               "tatoeba": (str(SHARED / "corpora/tatoeba-cmn-eng/cmn.txt"), None)}
    frames = {}
    OUT.mkdir(parents=True, exist_ok=True)
    for key, (spec, langs) in corpora.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")   # unknown-token warnings for English-only vocabularies
            frames[key] = compare(spec, adapters, languages=langs, n_boot=1000, boot_seed=0)
        write_table(frames[key], OUT / f"{key}.csv")
    zh = None
    for key, df in frames.items():
        part = df.filter(pl.col("language") == "zh").select(
            "tokenizer", pl.col("premium").alias(f"{key}_premium"), pl.col("premium_ci_low").alias(f"{key}_ci_low"),
            pl.col("premium_ci_high").alias(f"{key}_ci_high"), pl.col("tokens_per_char").alias(f"{key}_tok_per_char"),
            pl.col("split_char_rate").alias(f"{key}_split_chars"), pl.col("unk_rate").alias(f"{key}_unk"),
            pl.col("continued_word_rate").alias(f"{key}_continued_words"))
        zh = part if zh is None else zh.join(part, on="tokenizer")
    zh = zh.sort("pud_premium")
    write_table(zh, OUT / "summary.csv")
    plot(zh, OUT / "premium.png")
    report([OUT / "pud.csv", OUT / "tatoeba.csv"], OUT / "report.html", title="Chinese vs English premium")
    with pl.Config(tbl_rows=40, tbl_cols=8, tbl_width_chars=160, float_precision=3):
        print(zh.select("tokenizer", "pud_premium", "pud_ci_low", "pud_ci_high", "tatoeba_premium",
                        "pud_split_chars", "pud_unk", "pud_continued_words"))
    for s in skipped:
        print("skipped", s)
    print(f"wrote {OUT}")
    return 0


def plot(zh: pl.DataFrame, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    names = [t + (f"  (unknown {u:.0%})" if u and u > 0.1 else "")
             for t, u in zip(zh["tokenizer"].to_list(), zh["pud_unk"].to_list())]
    y = np.arange(len(names))
    fig, axes = plt.subplots(1, 2, figsize=(11, 0.32 * len(names) + 1.5), sharey=True)
    for k, (key, label, colour) in enumerate((("pud", "PUD (Traditional, news/wiki)", "#4269d0"),
                                              ("tatoeba", "Tatoeba (short, mixed scripts)", "#efb118"))):
        p = zh[f"{key}_premium"].to_numpy()
        err = [p - zh[f"{key}_ci_low"].fill_null(np.nan).to_numpy(), zh[f"{key}_ci_high"].fill_null(np.nan).to_numpy() - p]
        axes[0].barh(y + (k - 0.5) * 0.4, p, 0.4, xerr=err, color=colour, label=label, error_kw={"lw": 0.7})
        axes[1].barh(y + (k - 0.5) * 0.4, 100 * zh[f"{key}_split_chars"].to_numpy(), 0.4, color=colour)
    axes[0].axvline(1, color="#555", lw=0.8, ls="--")
    axes[0].set_yticks(y, names, fontsize=8)
    axes[0].invert_yaxis()
    axes[0].set_xlabel("Chinese tokens / English tokens (95% CI)")
    axes[1].set_xlabel("Chinese characters cut inside by a token boundary (%)")
    axes[0].legend(fontsize=8, frameon=False, loc="upper right")
    for ax in axes:
        ax.grid(axis="x", alpha=0.3)
        ax.spines[["top", "right"]].set_visible(False)
    fig.suptitle("What Chinese costs against English, per tokenizer", fontsize=12)
    fig.tight_layout()
    fig.savefig(path, dpi=150, metadata={"Software": None})
    plt.close(fig)


if __name__ == "__main__":
    sys.exit(main())
