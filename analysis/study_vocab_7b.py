"""Study 2: choosing a vocabulary for a 7B model trained on a 50/50 Chinese/English mix.

A byte-level BPE is trained once on a 50/50 (by characters) zh/en mix of Tatoeba cmn-eng (the
bundled sample without ../shared), smaller vocabularies are derived by cutting its merges, and each
is evaluated on the held-out split. ``tokstat cost`` then prices training the LLaMA-2-7B shape with
that vocabulary on H100s (calibrated MFU) for the same content at every size: 2T tokens of English
as the 32k vocabulary counts it (LLaMA-2's budget), which each size tokenizes its own way. The
vocabulary changes both the tokens needed and the unembedding FLOPs (2·d·V per token). Writes

    analysis/results/vocab_7b/sweep.csv, cost.csv, vocab_7b.png, report.html

    python analysis/study_vocab_7b.py
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import polars as pl

from shared_tokenizers import SHARED

OUT = Path(__file__).resolve().parent / "results" / "vocab_7b"
MIX = {"zh": 0.5, "en": 0.5}
SIZES = [2000, 4000, 8000, 16000, 32000]


def main() -> int:
    from tokstat.cost.hardware import gpu
    from tokstat.cost.model import preset
    from tokstat.cost.projection import project
    from tokstat.io import write_table
    from tokstat.report import report
    from tokstat.sweep import sweep

    tatoeba = SHARED / "corpora/tatoeba-cmn-eng/cmn.txt"
    corpus = str(tatoeba) if tatoeba.is_file() else "sample"
    OUT.mkdir(parents=True, exist_ok=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sw = sweep(corpus, "bpe", SIZES, mix=MIX, n_boot=1000, boot_seed=0)
    for w in caught:
        print("note:", w.message)
    cost = project(sw, preset("llama2-7b"), gpu("h100-sxm"), train_tokens=2e12, reference=f"train/bpe-{SIZES[-1]}",
                   mix=MIX)
    write_table(sw, OUT / "sweep.csv")
    write_table(cost, OUT / "cost.csv")
    plot(sw, cost, OUT / "vocab_7b.png")
    report([OUT / "sweep.csv", OUT / "cost.csv"], OUT / "report.html", title="A vocabulary for a 7B zh/en model")
    with pl.Config(tbl_rows=40, tbl_cols=10, tbl_width_chars=160, float_precision=3):
        print(f"corpus: {corpus}")
        print(sw.select("vocab_size", "language", "tokens_per_char", "premium", "premium_ci_low", "premium_ci_high"))
        print(cost.filter(pl.col("language") == "mix").select(
            "vocab_size", "training_tokens", "gpu_hours", "dollars", "kv_cache_bytes_per_1k_chars", "recommended"))
    print(f"wrote {OUT}")
    return 0


def plot(sw: pl.DataFrame, cost: pl.DataFrame, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
    for lang, colour in (("en", "#4269d0"), ("zh", "#ff725c")):
        d = sw.filter(pl.col("language") == lang).sort("vocab_size")
        axes[0].plot(d["vocab_size"], d["tokens_per_char"], marker="o", color=colour, label=lang)
    axes[0].set_ylabel("tokens per character (held out)")
    for lang, colour in (("en", "#4269d0"), ("zh", "#ff725c"), ("mix", "#3ca951")):
        d = cost.filter(pl.col("language") == lang).sort("vocab_size")
        axes[1].plot(d["vocab_size"], d["dollars"] / 1e6, marker="o", color=colour, label=lang)
    axes[1].set_ylabel("training cost (M USD)")
    for ax in axes:
        ax.set_xscale("log")
        ax.minorticks_off()
        ax.set_xticks(SIZES, [f"{s // 1000}k" for s in SIZES])
        ax.set_xlabel("vocabulary size")
        ax.grid(alpha=0.3)
        ax.legend(frameon=False, fontsize=8)
        ax.spines[["top", "right"]].set_visible(False)
    fig.suptitle(f"LLaMA-2-7B shape, BPE trained on 50/50 zh/en; the content of 2T English tokens (32k BPE) "
                 f"on H100, MFU {cost['mfu'][0]:.3g}",
                 fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=150, metadata={"Software": None})
    plt.close(fig)


if __name__ == "__main__":
    sys.exit(main())
