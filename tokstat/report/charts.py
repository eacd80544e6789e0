"""The report's charts (matplotlib figures), rendered as inline SVG (text kept as text) or PNG.

Made to stay readable with 20+ tokenizers: per-language small multiples of horizontal bars sorted
by value, every bar labelled with its tokenizer and its value (no legend to decode), 95 % intervals
as error bars, the premium = 1 line marked, tokenizers that lose text drawn grey and hatched. All
text is at least 10 pt in a figure 5.4 in wide, shown at its natural size (≥ 13 px on
screen). Line charts (a handful of languages) take colours from a 20-colour palette and are
labelled at their ends.
"""

from __future__ import annotations

import io
import textwrap
from dataclasses import dataclass

import numpy as np
import polars as pl

from ..fmt import fmt, short_ids

#: 20 distinct colours (Tableau 10, then its light companions)
PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22",
           "#17becf", "#aec7e8", "#ffbb78", "#98df8a", "#ff9896", "#c5b0d5", "#c49c94", "#f7b6d2", "#c7c7c7",
           "#dbdb8d", "#9edae5"]
GOOD, BAD = "#3b6fb6", "#b9b9b9"
WIDTH = 5.4          # inches: 518 px at 100 % zoom: one per row at 800 px, two at 1400 px
FONT = 10            # points: 13.3 px at 100 % zoom
LABEL = 30           # longest tokenizer label (shortened from the left)


@dataclass
class Chart:
    name: str
    title: str
    figure: object   # matplotlib Figure
    caption: str = ""


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams.update({"font.size": FONT, "axes.titlesize": FONT + 1, "axes.labelsize": FONT,
                         "xtick.labelsize": FONT, "ytick.labelsize": FONT, "legend.fontsize": FONT,
                         "svg.fonttype": "none", "svg.hashsalt": "tokstat",
                         "text.parse_math": False})   # a "$" in a language or tokenizer id is text, never math
    return plt


def _curve_axes(ax, ends, xlabel: str, title: str) -> None:
    """A panel of curves: each labelled at its end, the x axis named, a title, a light grid, no top or right frame."""
    end_labels(ax, ends)
    ax.set_xlabel(xlabel)
    ax.set_title(title, loc="left")
    ax.grid(alpha=0.3)
    ax.spines[["top", "right"]].set_visible(False)


def _style(ax) -> None:
    ax.spines[["top", "right"]].set_visible(False)
    ax.grid(axis="x", alpha=0.3)
    ax.set_axisbelow(True)


def language_colours(languages) -> dict[str, str]:
    """One colour per language, by sorted code: the same language has the same colour in every
    chart of a page (each chart draws a subset, in its own order).

    >>> c = language_colours(["zh", "en"]); c["en"] == language_colours(["en", "ja", "zh"])["en"]
    True
    """
    return {lang: PALETTE[i % len(PALETTE)] for i, lang in enumerate(sorted(set(languages)))}


def tokenizer_colours(order: list[str], bad=frozenset()) -> dict[str, str]:
    """One colour per tokenizer for the whole page, by its place in the answer's ranking (``order``;
    then any other, sorted): the same tokenizer has the same colour in every chart and table. A
    tokenizer that loses text is grey.

    >>> tokenizer_colours(["b", "a"], {"a"}) == {"b": PALETTE[0], "a": BAD}
    True
    """
    out = {}
    for i, t in enumerate(dict.fromkeys(order)):
        out[t] = BAD if t in bad else PALETTE[i % len(PALETTE)]
    return out


#: the first screen's charts: small, one per answer card (≈ 370 px wide at 1440 px)
CARD_WIDTH = 3.9
#: most tokenizers or languages a first-screen chart draws; the rest are named in a line under it
TOP_N = 12


def ranking_chart(ch, colours: dict[str, str], unit: str):
    """The tokenizers ranked by the answer's criterion for the mix (best on top) with their 95 %
    bootstrap intervals, at most :data:`TOP_N` (a last row says how many more)."""
    plt = _plt()
    order = list(ch.scores)
    shown = order[:TOP_N]
    names = short_ids(shown, 24)
    fig, ax = plt.subplots(figsize=(CARD_WIDTH, 0.28 * len(shown) + 0.9), layout="constrained")
    ys = np.arange(len(shown))[::-1]
    vals = np.array([ch.scores[t] for t in shown])
    for y, t, v in zip(ys, shown, vals):
        lo, hi = ch.intervals.get(t, (v, v))
        ax.plot([lo, hi], [y, y], color=colours.get(t, GOOD), lw=2, solid_capstyle="butt")
        ax.plot([v], [y], "o", color=colours.get(t, GOOD), ms=6)
    ax.set_yticks(ys, [names[t] for t in shown])
    if len(order) > len(shown):
        ax.set_title(f"top {len(shown)} of {len(order)}", loc="right", fontsize=FONT, color="#555")
    ax.set_xlabel(unit)
    lo_all = min(ch.intervals.get(t, (ch.scores[t],))[0] for t in shown)
    hi_all = max(ch.intervals.get(t, (0, ch.scores[t]))[-1] for t in shown)
    pad = (hi_all - lo_all) * 0.08 or abs(hi_all) * 0.05 or 1
    ax.set_xlim(lo_all - pad, hi_all + pad)
    _style(ax)
    return fig


def multiplier_chart(c: pl.DataFrame, pivot: str | None, order: list[str], colours: dict[str, str], *, n_tok: int = 5,
                     col: str = "premium", lo: str = "premium_ci_low", hi: str = "premium_ci_high",
                     xlabel: str | None = None):
    """Per-language multipliers (``col``: the premium against ``pivot``, or ``vs_baseline``):
    languages on the y axis (the first tokenizer's highest on top, at most :data:`TOP_N`), one dot
    per tokenizer (the first ``n_tok`` of the ranking ``order``, each in its page colour) with its
    95 % interval; the dashed line is 1."""
    plt = _plt()
    toks = [t for t in order if t in set(c["tokenizer"].to_list())][:n_tok]
    d = c.filter(pl.col("tokenizer").is_in(toks) & (pl.col("language") != (pivot or "")) & pl.col(col).is_not_null())
    best = d.filter(pl.col("tokenizer") == toks[0]).sort(col, descending=True)
    langs = best["language"].to_list()[:TOP_N]
    fig, ax = plt.subplots(figsize=(CARD_WIDTH, 0.3 * len(langs) + 1.1), layout="constrained")
    ys = {lang: len(langs) - 1 - i for i, lang in enumerate(langs)}
    off = np.linspace(-0.22, 0.22, len(toks)) if len(toks) > 1 else [0.0]
    for k, t in enumerate(toks):
        g = d.filter((pl.col("tokenizer") == t) & pl.col("language").is_in(langs))
        for r in g.iter_rows(named=True):
            y = ys[r["language"]] + off[k]
            if r.get(lo) is not None and r.get(hi) is not None:
                ax.plot([r[lo], r[hi]], [y, y], color=colours.get(t, GOOD), lw=1.2)
            ax.plot([r[col]], [y], "o", color=colours.get(t, GOOD), ms=4.5)
    ax.axvline(1.0, color="#444", lw=1, ls="--")
    ax.set_yticks(list(ys.values()), list(ys.keys()))
    ax.set_xlabel(xlabel or f"× {pivot} tokens for the same content")
    more = best.height - len(langs)
    if more > 0:
        ax.set_title(f"{len(langs)} highest of {best.height}", loc="right", fontsize=FONT, color="#555")
    _style(ax)
    return fig


def end_labels(ax, items, gap_pt: float = FONT * 1.25) -> None:
    """Label line ends ``(x, y, text, colour)`` without overlaps: labels closer than ``gap_pt``
    points vertically are pushed apart (a thin leader line joins a moved label to its point)."""
    if not items:
        return
    ax.autoscale_view()                   # the data limits the labels are placed against
    ax.figure.canvas.draw()               # and the final layout (constrained layout resizes the axes)
    to_pt = 72.0 / ax.figure.dpi
    ys = [ax.transData.transform((x, y))[1] * to_pt for x, y, _, _ in items]
    placed, last = {}, -1e9
    for i in sorted(range(len(items)), key=lambda i: ys[i]):
        placed[i] = max(ys[i], last + gap_pt)
        last = placed[i]
    for i, (x, y, text, colour) in enumerate(items):
        dy = placed[i] - ys[i]
        ax.annotate(text, (x, y), xytext=(5, dy), textcoords="offset points", va="center", color=colour,
                    arrowprops={"arrowstyle": "-", "lw": 0.5, "color": colour} if abs(dy) > 2 else None)


def _lossy_last(d: pl.DataFrame, bad: set[str]) -> pl.DataFrame:
    """Rows of tokenizers that lose text after the others (drawn at the bottom, marked)."""
    return d.with_columns(pl.col("tokenizer").is_in(list(bad)).alias("_bad")).sort("_bad", maintain_order=True).drop("_bad")


def bars(df: pl.DataFrame, col: str, xlabel: str, *, languages: list[str], lo: str | None = None,
         hi: str | None = None, ref: float | None = None, bad: set[str] = frozenset(), pct: bool = False,
         colours: dict[str, str] | None = None, order: list[str] | None = None):
    """One panel per language: a horizontal bar per tokenizer, labelled with its value; ``lo``/``hi``
    error bars; a dashed line at ``ref``. With ``order`` (the page's ranking) every panel lists the
    tokenizers in that one order and ``colours`` gives each its page colour; without, each panel is
    sorted by ``col`` (lowest on top) in one colour."""
    plt = _plt()
    names = short_ids(df["tokenizer"].unique(maintain_order=True).to_list(), LABEL)
    panels = []
    for lang in languages:
        d = df.filter((pl.col("language") == lang) & pl.col(col).is_not_null())
        if order is not None:
            pos = {t: i for i, t in enumerate(order)}
            d = d.with_columns(pl.col("tokenizer").replace_strict(pos, default=len(pos), return_dtype=pl.Int64)
                               .alias("_o")).sort("_o", "tokenizer").drop("_o")
        else:
            d = d.sort(col, "tokenizer")
        d = _lossy_last(d, bad)
        if d.height:
            panels.append((lang, d))
    heights = [0.30 * d.height + 0.75 for _, d in panels]
    fig, axes = plt.subplots(len(panels), 1, figsize=(WIDTH, max(1.6, sum(heights))), squeeze=False,
                             gridspec_kw={"height_ratios": heights}, layout="constrained")
    k = 100 if pct else 1
    # the longest bar or interval (an interval may be null: a premium on too few segments to resample)
    top = max(max(v for v in [d[col].max(), d[hi].max() if hi else None] if v is not None) for _, d in panels) * k
    for ax, (lang, d) in zip(axes[:, 0], panels):
        toks = d["tokenizer"].to_list()
        ys = np.arange(len(toks))[::-1]
        vals = np.array(d[col].to_list(), dtype=float) * k
        fill = [BAD if t in bad else (colours or {}).get(t, GOOD) for t in toks]
        kw = {}
        if lo and hi:
            lows = np.array([np.nan if v is None else v * k for v in d[lo].to_list()])
            highs = np.array([np.nan if v is None else v * k for v in d[hi].to_list()])
            kw = {"xerr": np.nan_to_num(np.vstack([vals - lows, highs - vals]), nan=0.0).clip(min=0),
                  "error_kw": {"lw": 1, "capsize": 2, "ecolor": "#333"}}
        ax.barh(ys, vals, color=fill, hatch=None, height=0.7, **kw)
        ends = highs if lo and hi else vals
        for y, v, e, t in zip(ys, vals, ends, toks):
            if t in bad:
                ax.barh([y], [v], color="none", edgecolor="#777", hatch="///", height=0.7, lw=0)
            ax.text(max(v, 0 if e != e else e) + top * 0.015, y, fmt(v / k, col), va="center", fontsize=FONT)
        ax.set_yticks(ys, [names[t] + (" ⚠" if t in bad else "") for t in toks])
        if ref is not None:
            ax.axvline(ref * k, color="#444", lw=1, ls="--")
        ax.set_xlim(0, top * 1.22 or 1)
        ax.set_title(lang, loc="left", fontsize=FONT + 1)
        _style(ax)
    axes[-1, 0].set_xlabel(xlabel + (" (%)" if pct else ""))
    return fig


def boxes(segs: pl.DataFrame, value: str, xlabel: str, *, languages: list[str], ref: float | None = None,
          bad: set[str] = frozenset(), colours: dict[str, str] | None = None):
    """One panel per language: per tokenizer, the distribution of ``value`` over segments (box:
    quartiles, whiskers: 5th–95th percentile, the median marked), tokenizers in the bar charts' order,
    each box in its tokenizer's colour of the page (``colours``; grey: loses text)."""
    plt = _plt()
    names = short_ids(segs["tokenizer"].unique(maintain_order=True).to_list(), LABEL)
    panels = [(lang, segs.filter(pl.col("language") == lang)) for lang in languages]
    panels = [(lang, d) for lang, d in panels if d.height]
    n = [d["tokenizer"].n_unique() for _, d in panels]
    heights = [0.30 * x + 0.75 for x in n]
    fig, axes = plt.subplots(len(panels), 1, figsize=(WIDTH, max(1.6, sum(heights))), squeeze=False,
                             gridspec_kw={"height_ratios": heights}, layout="constrained")
    for ax, (lang, d) in zip(axes[:, 0], panels):
        med = _lossy_last(d.group_by("tokenizer").agg(pl.col(value).median().alias("m")).sort("m", "tokenizer"), bad)
        toks = med["tokenizer"].to_list()
        data = [d.filter(pl.col("tokenizer") == t)[value].drop_nulls().to_numpy() for t in toks]
        bp = ax.boxplot(data, orientation="horizontal", positions=np.arange(len(toks))[::-1], whis=(5, 95), showfliers=False,
                        widths=0.6, patch_artist=True, medianprops={"color": "#111"})
        for patch, t in zip(bp["boxes"], toks):
            patch.set_facecolor(BAD if t in bad else (colours or {}).get(t, "#a9c4e8"))
        ax.set_yticks(np.arange(len(toks))[::-1], [names[t] + (" ⚠" if t in bad else "") for t in toks])
        if ref is not None:
            ax.axvline(ref, color="#444", lw=1, ls="--")
        ax.set_title(lang, loc="left", fontsize=FONT + 1)
        _style(ax)
    axes[-1, 0].set_xlabel(textwrap.fill(xlabel, 48))
    return fig


def histograms(segs: pl.DataFrame, tokenizer: str, languages: list[str], colours: dict | None = None):
    """Tokens per segment under ``tokenizer``, one step histogram per language on shared bins."""
    plt = _plt()
    d = segs.filter((pl.col("tokenizer") == tokenizer) & (pl.col("chars") > 0))
    fig, ax = plt.subplots(figsize=(WIDTH, 3.0), layout="constrained")
    vals = d["tokens"].to_numpy()
    bins = np.histogram_bin_edges(vals, bins=min(40, max(5, int(np.sqrt(len(vals))))))
    colours = colours or language_colours(languages)
    for lang in languages:
        x = d.filter(pl.col("language") == lang)["tokens"].to_numpy()
        if len(x):
            ax.hist(x, bins=bins, histtype="step", lw=1.8, color=colours[lang],
                    label=f"{lang} (median {np.median(x):.0f}, p95 {np.percentile(x, 95):.0f})")
    ax.set_xlabel(f"tokens per segment ({short_ids([tokenizer], 40)[tokenizer]})")
    ax.set_ylabel("segments")
    ax.legend(frameon=False)
    _style(ax)
    return fig


def thin_ticks(sizes, min_ratio: float = 1.6) -> list:
    """Tick positions at least ``min_ratio`` apart on a log axis (labels of 32k and 48k would collide).

    >>> thin_ticks([4000, 8000, 16000, 32000, 48000, 64000])
    [4000, 8000, 16000, 32000, 64000]
    """
    out = []
    for s in sorted(sizes):
        if not out or s / out[-1] >= min_ratio:
            out.append(s)
        elif s == max(sizes) and len(out) > 1 and out[-1] / out[-2] >= min_ratio and s / out[-2] >= min_ratio:
            out[-1] = s      # keep the largest swept size labelled
    return out


def _log_sizes(ax, sizes) -> None:
    ax.set_xscale("log")
    ax.minorticks_off()
    sizes = thin_ticks(sizes)
    ax.set_xticks(sizes, [f"{s / 1000:g}k" if s >= 1000 else str(s) for s in sizes])


def sweep_curves(df: pl.DataFrame, colours: dict | None = None):
    """Tokens per character and premium against vocabulary size, a line per language labelled at its end."""
    plt = _plt()
    fig, axes = plt.subplots(1, 2, figsize=(WIDTH, 3.0), layout="constrained")
    langs = df["language"].unique(maintain_order=True).to_list()
    colours = colours or language_colours(langs)
    sizes = sorted(set(df["vocab_size"].to_list()))
    # a fairness sweep holds plain and parity-aware BPE: one line each (parity dashed), never one zigzag
    algo = (df["tokenizer"].str.extract(r"^train/([a-z-]+?)-\d+", 1).fill_null("") if "tokenizer" in df.columns
            else pl.Series([""] * df.height))
    algos = algo.unique(maintain_order=True).to_list()
    for ax, col, label in ((axes[0], "tokens_per_char", "tokens per character"), (axes[1], "premium", "premium")):
        ends = []
        for lang in langs:
            for al in algos:
                d = df.filter((pl.col("language") == lang) & (algo == al)).sort("vocab_size")
                if not d.height:
                    continue
                ax.plot(d["vocab_size"].to_list(), d[col].to_list(), marker="o", ms=4, color=colours[lang],
                        ls="--" if al == "parity-bpe" else "-")
                name = f"{lang} ({al})" if len(algos) > 1 else lang
                ends.append((d["vocab_size"][-1], d[col][-1], name, colours[lang]))
        _log_sizes(ax, sizes)
        _curve_axes(ax, ends, "vocabulary size", label)
    return fig


def fairness_curves(pof: pl.DataFrame):
    """The price of fairness (:func:`tokstat.sweep.price_of_fairness`) against vocabulary size: the
    premiums' spread across languages (max/min) under plain and parity-aware BPE, and the tokens
    parity-aware BPE costs on the mix, with its 95 % interval."""
    plt = _plt()
    fig, axes = plt.subplots(1, 2, figsize=(WIDTH, 3.0), layout="constrained")
    d = pof.sort("requested_size")
    x = d["requested_size"].to_list()
    ends = []
    for col, name, colour, ls in (("plain_spread", "plain BPE", "#555", "-"),
                                  ("parity_spread", "parity-aware", "#1f77b4", "--")):
        axes[0].plot(x, d[col].to_list(), marker="o", ms=4, color=colour, ls=ls)
        ends.append((x[-1], d[col][-1], name, colour))
    axes[0].axhline(1.0, color="#888", lw=0.8, ls=":")
    end_labels(axes[0], ends)
    axes[0].set_title("premium spread (max/min)", loc="left")
    axes[1].plot(x, d["token_cost"].to_list(), marker="o", ms=4, color="#1f77b4")
    if d["token_cost_low"].null_count() == 0:
        axes[1].fill_between(x, d["token_cost_low"].to_list(), d["token_cost_high"].to_list(), color="#1f77b4",
                             alpha=0.2, lw=0)
    axes[1].axhline(0.0, color="#888", lw=0.8, ls=":")
    axes[1].yaxis.set_major_formatter(lambda v, _: f"{v:+.1%}")
    axes[1].set_title("parity's token cost on the mix", loc="left")
    for ax in axes:
        _log_sizes(ax, x)
        ax.set_xlabel("vocabulary size")
        ax.grid(alpha=0.3)
        ax.spines[["top", "right"]].set_visible(False)
    return fig


def lorenz_curves(lz: pl.DataFrame, bad: set[str] = frozenset()):
    """The Lorenz curve of each tokenizer's premiums across languages (:func:`tokstat.groups.lorenz_table`):
    languages from the lowest premium up on x, their share of all the tokens on y; the diagonal is
    parity, and the Gini coefficient (twice the area between) is in the legend. Tokenizers
    that lose text are grey and dashed."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(WIDTH, 3.6), layout="constrained")
    toks = lz["tokenizer"].unique(maintain_order=True).to_list()
    names = short_ids(toks, LABEL)
    for i, tok in enumerate(toks):
        d = lz.filter(pl.col("tokenizer") == tok)
        colour = BAD if tok in bad else PALETTE[i % len(PALETTE)]
        x = [0.0, *d["share_of_languages"].to_list()]
        y = [0.0, *d["cumulative_share"].to_list()]
        ax.plot(x, y, marker="o", ms=3, color=colour, ls="--" if tok in bad else "-", lw=1.2,
                label=f"{names[tok]}{' ⚠' if tok in bad else ''}: Gini {d['gini'][0]:.3f}")
    ax.plot([0, 1], [0, 1], color="#888", lw=0.8, ls=":")
    ax.set_xlim(0, 1.0)
    ax.set_ylim(0, 1.0)
    ax.xaxis.set_major_formatter(lambda v, _: f"{v:.0%}")
    ax.yaxis.set_major_formatter(lambda v, _: f"{v:.0%}")
    ax.set_xlabel("languages, lowest premium first")
    ax.set_ylabel("share of the tokens")
    ax.grid(alpha=0.3)
    ax.spines[["top", "right"]].set_visible(False)
    ax.legend(loc="upper left", frameon=False)     # the curves lie under the diagonal: the corner is free
    return fig


def extension_curves(df: pl.DataFrame, colours: dict | None = None):
    """For an extended tokenizer: the target languages' tokens saved and premium against the number
    of tokens added (0: the base), a line per language labelled at its end."""
    plt = _plt()
    t = df.filter(pl.col("target"))
    langs = t["language"].unique(maintain_order=True).to_list()
    colours = colours or language_colours(langs)
    has_premium = t["premium_after"].drop_nulls().len() > 0
    fig, axes = plt.subplots(1, 2 if has_premium else 1, figsize=(WIDTH, 3.0), layout="constrained", squeeze=False)
    panels = [("tokens_saved", "tokens saved", None)] + ([("premium_after", "premium", "premium_before")]
                                                         if has_premium else [])
    for ax, (col, label, before) in zip(axes[0], panels):
        ends = []
        for lang in langs:
            d = t.filter(pl.col("language") == lang).sort("added")
            x = [0] + d["added"].to_list()
            y = [0.0 if before is None else d[before][0]] + d[col].to_list()
            ax.plot(x, y, marker="o", ms=4, color=colours[lang])
            ends.append((x[-1], y[-1], lang, colours[lang]))
        if col == "premium_after":
            ax.axhline(1.0, color="#888", lw=0.8, ls="--")
        else:
            ax.yaxis.set_major_formatter(lambda v, _: f"{v:.0%}")
        _curve_axes(ax, ends, "tokens added to the base", label)
    return fig


def plan_curves(plan, sweep: pl.DataFrame | None, colours: dict | None = None, width: float = WIDTH):
    """Training FLOPs for the same text against vocabulary size, relative to the least, per language
    and for the mix; the recommendation and the flat region marked."""
    from ..vocabplan import TAO_ABC, V_MIN, Curve, mix_curve

    plt = _plt()
    grid = np.geomspace(V_MIN, 512_000, 300)
    curves = plan.curves()
    if not curves:
        curves = {"Tao et al.": Curve(*TAO_ABC)}
    elif plan.mix_chars and len(plan.mix_chars) > 1:
        curves["mix"] = mix_curve({k: v for k, v in curves.items() if k in plan.mix_chars}, plan.mix_chars)
    fig, ax = plt.subplots(figsize=(width, 3.2 * width / WIDTH), layout="constrained")
    colours = colours or language_colours([k for k in curves if k != "mix"])
    ax.set_ylim(0.97, 1.3)
    ax.set_xscale("log")
    labels = []
    for lang, cv in curves.items():
        cost = (plan.n_nv + grid * plan.d_model) * cv(grid)
        y = cost / cost.min()
        colour = "#111" if lang == "mix" else colours.get(lang, PALETTE[0])
        lw = 2.2 if lang == "mix" else 1.5
        sizes = getattr(cv, "sizes", ())
        if sizes:      # solid where fitted (the swept sizes), dashed where extrapolated
            inside = (grid >= min(sizes)) & (grid <= max(sizes))
            ax.plot(np.where(inside, grid, np.nan), y, color=colour, lw=lw)
            ax.plot(np.where(inside, np.nan, grid), y, color=colour, lw=lw * 0.8, ls=(0, (3, 2)))
        else:
            ax.plot(grid, y, color=colour, lw=lw)
        j = int(np.argmin(y))
        labels.append((grid[j], min(y[j], 1.29), lang, colour))
    end_labels(ax, labels)
    ax.axvspan(*plan.flat_region, color="#3b6fb6", alpha=0.12, lw=0)
    if not getattr(plan, "no_answer", ""):       # no size given: the chart marks none either
        ax.axvline(plan.recommended_vocab_size, color="#111", ls="--", lw=1)
        ax.annotate(f"recommended {plan.recommended_vocab_size:,}", (plan.recommended_vocab_size, 1.27),
                    xytext=(4, 0), textcoords="offset points", va="top")
    _log_sizes(ax, [1_000, 4_000, 16_000, 64_000, 256_000])     # plain labels: no 10³ superscripts (small text)
    ax.set_xlabel("vocabulary size")
    ax.set_ylabel("training FLOPs / least")
    ax.grid(alpha=0.3)
    ax.spines[["top", "right"]].set_visible(False)
    return fig


def allocation_chart(alloc: pl.DataFrame):
    """Share of the first V tokens by script and by language, against V (stacked areas)."""
    plt = _plt()
    fig, axes = plt.subplots(1, 2, figsize=(WIDTH, 3.8), layout="constrained", sharey=True)
    d = alloc.sort("vocab_size")
    x = d["vocab_size"].to_list()
    for ax, prefix, title in ((axes[0], "script:", "by script"), (axes[1], "lang:", "by language")):
        cols = [c for c in d.columns if c.startswith(prefix) and d[c].max() > 0]
        cols.sort(key=lambda c: -d[c].mean())
        ax.stackplot(x, *[d[c].to_list() for c in cols], labels=[c[len(prefix):] for c in cols],
                     colors=PALETTE[:len(cols)], alpha=0.9)
        _log_sizes(ax, x)
        ax.set_ylim(0, 1)
        ax.set_title(title, loc="left")
        ax.set_xlabel("vocabulary size")
        ax.legend(frameon=False, loc="upper center", bbox_to_anchor=(0.5, -0.3), ncol=2, fontsize=FONT)
    axes[0].set_ylabel("share of the first V tokens")
    return fig


def svg(fig) -> str:
    _plt()
    buf = io.StringIO()
    fig.savefig(buf, format="svg", metadata={"Date": None})
    s = buf.getvalue()
    return s[s.index("<svg"):]
