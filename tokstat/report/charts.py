"""The report's charts (matplotlib figures), rendered as inline SVG or PNG."""

from __future__ import annotations

import io
from dataclasses import dataclass

import polars as pl

PALETTE = ["#4269d0", "#efb118", "#ff725c", "#6cc5b0", "#3ca951", "#ff8ab7", "#a463f2", "#97bbf5", "#9c6b4e",
           "#9498a0"]


@dataclass
class Chart:
    name: str
    title: str
    figure: object  # matplotlib Figure


def _grouped_bars(df: pl.DataFrame, col: str, title: str, ylabel: str, *, lo: str | None = None,
                  hi: str | None = None, pct: bool = False, ref: float | None = None):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    toks = list(dict.fromkeys(df["tokenizer"].to_list()))
    langs = list(dict.fromkeys(df["language"].to_list()))
    fig, ax = plt.subplots(figsize=(max(6.0, 0.9 * len(langs) * max(1, len(toks)) ** 0.5 + 2), 3.6))
    width = 0.8 / max(1, len(toks))
    x = np.arange(len(langs))
    for i, t in enumerate(toks):
        d = {r["language"]: r for r in df.filter(pl.col("tokenizer") == t).iter_rows(named=True)}
        ys = [d.get(lang, {}).get(col) for lang in langs]
        ys = [np.nan if y is None else y * (100 if pct else 1) for y in ys]
        kw = {}
        if lo and hi:
            lows = [d.get(lang, {}).get(lo) for lang in langs]
            highs = [d.get(lang, {}).get(hi) for lang in langs]
            err = [[0 if (y != y or v is None) else y - v for y, v in zip(ys, lows)],
                   [0 if (y != y or v is None) else v - y for y, v in zip(ys, highs)]]
            kw = {"yerr": err, "capsize": 2, "error_kw": {"lw": 0.8}}
        ax.bar(x + (i - (len(toks) - 1) / 2) * width, ys, width, label=t, color=PALETTE[i % len(PALETTE)], **kw)
    if ref is not None:
        ax.axhline(ref, color="#555", lw=0.8, ls="--")
    ax.set_xticks(x, langs)
    ax.set_ylabel(ylabel + (" (%)" if pct else ""))
    ax.set_title(title, fontsize=11)
    ax.grid(axis="y", alpha=0.3)
    ax.spines[["top", "right"]].set_visible(False)
    if len(toks) > 1:
        ax.legend(fontsize=7, ncol=min(4, len(toks)), frameon=False, loc="upper left", bbox_to_anchor=(0, -0.12))
    fig.tight_layout()
    return fig


def _sweep_curves(df: pl.DataFrame):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(9, 3.4))
    for ax, col, label in ((axes[0], "tokens_per_char", "tokens per character"), (axes[1], "premium", "premium vs pivot")):
        for i, lang in enumerate(sorted(set(df["language"].to_list()))):
            d = df.filter(pl.col("language") == lang).sort("vocab_size")
            ax.plot(d["vocab_size"].to_list(), d[col].to_list(), marker="o", ms=3, label=lang,
                    color=PALETTE[i % len(PALETTE)])
        ax.set_xscale("log")
        ax.minorticks_off()
        sizes = sorted(set(df["vocab_size"].to_list()))
        ax.set_xticks(sizes, [f"{s / 1000:g}k" if s >= 1000 else str(s) for s in sizes])
        ax.set_xlabel("vocabulary size")
        ax.set_title(label, fontsize=11)
        ax.grid(alpha=0.3)
        ax.spines[["top", "right"]].set_visible(False)
    axes[0].legend(fontsize=8, frameon=False)
    fig.tight_layout()
    return fig


def charts(results: dict[str, pl.DataFrame]) -> list[Chart]:
    """The report's charts, in page order."""
    out = []
    if "compare" in results:
        c = results["compare"]
        out.append(Chart("tokens_per_char", "Tokens per character",
                         _grouped_bars(c, "tokens_per_char", "Tokens per character", "tokens / char")))
        if c["premium"].drop_nulls().len():
            out.append(Chart("premium", "Premium against the pivot (95% CI)",
                             _grouped_bars(c, "premium", "Premium against the pivot language (95% CI)", "premium",
                                           lo="premium_ci_low", hi="premium_ci_high", ref=1.0)))
        out.append(Chart("continued_words", "Words split into several tokens",
                         _grouped_bars(c, "continued_word_rate", "Words split into two or more tokens",
                                       "words", pct=True)))
        out.append(Chart("split_chars", "Characters cut by a token boundary",
                         _grouped_bars(c, "split_char_rate", "Characters cut inside (byte tokens)", "characters",
                                       pct=True)))
    if "sweep" in results:
        out.append(Chart("sweep", "Vocabulary-size sweep", _sweep_curves(results["sweep"])))
    if "cost" in results:
        out.append(Chart("cost_multiplier", "Training cost multiplier",
                         _grouped_bars(results["cost"], "cost_multiplier", "Training cost per language, relative to the pivot",
                                       "× pivot", ref=1.0)))
    return out


def svg(fig) -> str:
    import matplotlib

    matplotlib.rcParams["svg.hashsalt"] = "tokstat"   # stable element ids: identical inputs, identical bytes
    buf = io.StringIO()
    fig.savefig(buf, format="svg", metadata={"Date": None})
    s = buf.getvalue()
    return s[s.index("<svg"):]
