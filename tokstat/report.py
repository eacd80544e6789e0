"""``tokstat report``: compare, sweep and cost results -> one self-contained HTML file (inline SVG
charts, no scripts or fonts fetched from anywhere) and, on request, the same charts as PNG.

The page opens with three answers (which tokenizer, what Chinese costs, which vocabulary size),
then the comparison table, the charts, the sweep curves, the cost table and every signature.
"""

from __future__ import annotations

import html
import io
import os
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from .compare import COMPARE_COLUMNS
from .errors import TokstatError
from .io import atomic_path, write_bytes

KINDS = ("compare", "sweep", "cost")
PALETTE = ["#4269d0", "#efb118", "#ff725c", "#6cc5b0", "#3ca951", "#ff8ab7", "#a463f2", "#97bbf5", "#9c6b4e",
           "#9498a0"]


def kind_of(df: pl.DataFrame) -> str | None:
    """``compare``, ``sweep`` (compare columns + ``vocab_size``) or ``cost`` (cost columns), else None."""
    cols = set(df.columns)
    if {"gpu_hours", "cost_multiplier", "dollars"} <= cols:
        return "cost"
    if set(COMPARE_COLUMNS) <= cols:
        return "sweep" if "vocab_size" in cols else "compare"
    return None


def read_results(paths: list[str | os.PathLike]) -> dict[str, pl.DataFrame]:
    """Read result files (.parquet/.csv/.json) and group them by kind (files of one kind are stacked)."""
    if not paths:
        raise TokstatError("no result files given", fix="pass files written by compare/sweep/cost --out")
    out: dict[str, list[pl.DataFrame]] = {}
    for p in map(Path, paths):
        if not p.exists():
            raise TokstatError("result file not found", path=p, fix="check the path")
        try:
            df = {".parquet": pl.read_parquet, ".csv": pl.read_csv, ".json": pl.read_json}[p.suffix.lower()](p)
        except KeyError:
            raise TokstatError(f"unknown result format {p.suffix!r}", path=p, fix="use .parquet, .csv or .json") from None
        except Exception as e:  # polars raises several types for damaged files
            raise TokstatError(f"cannot read results ({str(e).splitlines()[0][:120]})", path=p,
                               fix="pass a file written by tokstat compare/sweep/cost --out") from None
        k = kind_of(df)
        if k is None:
            raise TokstatError("not a tokstat compare, sweep or cost result (columns: "
                               f"{', '.join(df.columns[:6])}…)", path=p,
                               fix="pass files written by tokstat compare/sweep/cost --out")
        out.setdefault(k, []).append(df)
    return {k: pl.concat(v, how="diagonal_relaxed") for k, v in out.items()}


# ---------------------------------------------------------------- charts

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


def _svg(fig) -> str:
    import matplotlib

    matplotlib.rcParams["svg.hashsalt"] = "tokstat"   # stable element ids: identical inputs, identical bytes
    buf = io.StringIO()
    fig.savefig(buf, format="svg", metadata={"Date": None})
    s = buf.getvalue()
    return s[s.index("<svg"):]


# ---------------------------------------------------------------- page

def _fmt(v) -> str:
    if v is None:
        return "–"
    if isinstance(v, float):
        return f"{v:,.3g}" if abs(v) >= 1000 or abs(v) < 0.01 and v != 0 else f"{v:.3f}"
    if isinstance(v, int) and not isinstance(v, bool):
        return f"{v:,}"
    return html.escape(str(v))


def _table(df: pl.DataFrame, cols: list[str]) -> str:
    cols = [c for c in cols if c in df.columns]
    head = "".join(f"<th>{html.escape(c)}</th>" for c in cols)
    rows = "".join("<tr>" + "".join(f"<td>{_fmt(r[c])}</td>" for c in cols) + "</tr>" for r in df.iter_rows(named=True))
    return f'<div class="scroll"><table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table></div>'


def answers(results: dict[str, pl.DataFrame]) -> list[tuple[str, str]]:
    """The three questions the page answers first, in words computed from the results."""
    out = []
    c = results.get("compare")
    if c is not None:
        pivot = c.filter(pl.col("premium") == 1.0)["language"].to_list()
        others = c.filter(~pl.col("language").is_in(pivot[:1]) & pl.col("premium").is_not_null())
        if others.height:
            mean = others.group_by("tokenizer").agg(pl.col("premium").mean().alias("m")).sort("m")
            best = mean.row(0, named=True)
            out.append(("Which tokenizer?", f"<b>{html.escape(best['tokenizer'])}</b> has the lowest mean premium "
                        f"({best['m']:.2f}× the pivot, {pivot[0] if pivot else 'pivot'}) across "
                        f"{others['language'].n_unique()} language(s); {mean.height} tokenizer(s) compared."))
        zh = c.filter(pl.col("language").str.starts_with("zh") & pl.col("premium").is_not_null()).sort("premium")
        if zh.height:
            parts = ", ".join(f"{html.escape(r['tokenizer'])} <b>{r['premium']:.2f}×</b>"
                              + (f" ({r['premium_ci_low']:.2f}–{r['premium_ci_high']:.2f})"
                                 if r["premium_ci_low"] is not None else "") for r in zh.iter_rows(named=True))
            out.append(("What does Chinese cost me?", f"Tokens for the same content, relative to the pivot: {parts}."))
    k = results.get("cost")
    s = results.get("sweep")
    if k is not None and k["recommended"].any():
        rec = k.filter(pl.col("recommended"))
        parts = "; ".join(f"{html.escape(r['language'])}: {html.escape(str(r['tokenizer']))}"
                          + (f" (vocabulary {r['vocab_size']:,})" if r.get("vocab_size") else "")
                          + f", ${r['dollars']:,.0f} to train" for r in rec.iter_rows(named=True))
        out.append(("Which vocabulary size?" if s is not None or k["vocab_size"].is_not_null().any()
                    else "Which is cheapest to train?", f"Cheapest per language: {parts}."))
    elif s is not None:
        best = s.group_by("vocab_size").agg(pl.col("tokens_per_char").mean().alias("m")).sort("vocab_size")
        out.append(("Which vocabulary size?", "Mean tokens per character by size: " + ", ".join(
            f"{r['vocab_size']:,}: {r['m']:.3f}" for r in best.iter_rows(named=True))
            + ". Run <code>tokstat cost</code> on the sweep to price each size."))
    return out


CSS = """
body{font:15px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:0;color:#1d1d1f;background:#fff}
main{max-width:1180px;margin:0 auto;padding:20px 28px 60px}
h1{font-size:24px;margin:8px 0 4px}h2{font-size:18px;margin:30px 0 8px;border-bottom:1px solid #ddd;padding-bottom:4px}
.answers{display:grid;grid-template-columns:repeat(auto-fit,minmax(300px,1fr));gap:12px;margin:14px 0}
.answer{background:#f4f6fb;border-radius:8px;padding:10px 14px}.answer h3{margin:0 0 4px;font-size:15px}
.charts{display:grid;grid-template-columns:repeat(auto-fit,minmax(520px,1fr));gap:16px}
figure.chart{margin:0;border:1px solid #e5e5e5;border-radius:8px;padding:8px;background:#fff}
figure.chart svg{width:100%;height:auto;display:block}figure.wide{grid-column:1/-1}figcaption{font-size:13px;color:#555;margin-top:4px}
.scroll{overflow-x:auto}table{border-collapse:collapse;font-size:12.5px;font-variant-numeric:tabular-nums}
th,td{padding:3px 8px;border-bottom:1px solid #eee;text-align:right;white-space:nowrap}
th{background:#fafafa;position:sticky;top:0}td:first-child,th:first-child,td:nth-child(2),th:nth-child(2){text-align:left}
code,.sig{font:12px ui-monospace,Menlo,Consolas,monospace}.sig{color:#555;word-break:break-all}
"""

COMPARE_SHOWN = ["tokenizer", "language", "segments", "tokens", "tokens_per_char", "bytes_per_token",
                 "tokens_per_word", "continued_word_rate", "split_char_rate", "unk_rate", "boundary_f1",
                 "renyi_efficiency", "premium", "premium_ci_low", "premium_ci_high"]
SWEEP_SHOWN = ["vocab_size", "language", "tokens_per_char", "tokens_per_word", "continued_word_rate", "premium",
               "premium_ci_low", "premium_ci_high", "embedding_params"]
COST_SHOWN = ["tokenizer", "language", "vocab_size", "premium", "training_tokens", "gpu_hours", "dollars",
              "cost_multiplier", "kv_cache_bytes_per_1k_chars", "chars_in_context", "serving_usd_per_m_chars",
              "fits", "recommended"]


def render(results: dict[str, pl.DataFrame], figs: list[Chart], title: str) -> str:
    from . import __version__

    parts = [f"<h1>{html.escape(title)}</h1><p>tokstat {__version__}: token counts exclude special tokens; "
             "the premium is measured on parallel text.</p>"]
    ans = answers(results)
    if ans:
        parts.append('<section class="answers">' + "".join(
            f'<div class="answer"><h3>{q}</h3><div>{a}</div></div>' for q, a in ans) + "</section>")
    if "compare" in results:
        parts.append("<h2>Comparison</h2>" + _table(results["compare"], COMPARE_SHOWN))
    if figs:
        parts.append('<h2>Charts</h2><div class="charts">' + "".join(
            f'<figure class="chart{" wide" if f.name == "sweep" else ""}" id="chart-{f.name}" '
            f'data-chart="{f.name}">{_svg(f.figure)}'
            f"<figcaption>{html.escape(f.title)}</figcaption></figure>" for f in figs) + "</div>")
    if "sweep" in results:
        parts.append("<h2>Vocabulary sweep</h2>" + _table(results["sweep"].sort("language", "vocab_size"), SWEEP_SHOWN))
    if "cost" in results:
        parts.append("<h2>Cost</h2>" + _table(results["cost"], COST_SHOWN))
    sigs = []
    for df in results.values():
        if "signature" in df.columns:
            sigs.extend(s for s in df["signature"].to_list() if s)
    if sigs:
        parts.append("<h2>Signatures</h2>" + "".join(f'<div class="sig">{html.escape(s)}</div>'
                                                      for s in dict.fromkeys(sigs)))
    return ("<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">"
            f"<title>{html.escape(title)}</title><style>{CSS}</style></head><body><main>"
            + "".join(parts) + "</main></body></html>\n")


def study(corpus: str, tokenizers: list[str], *, sweep: str | None = None, model: str = "llama2-7b",
          gpu: str = "h100-sxm", train_tokens: float = 2e12, mix: dict[str, float] | None = None,
          pivot: str = "en", seed: int = 0) -> dict[str, pl.DataFrame]:
    """The whole pipeline for one report: compare ``tokenizers`` on ``corpus``; with ``sweep``
    (``ALGO:SIZE,SIZE,...``) a vocabulary sweep; then the cost of training ``model`` on ``gpu`` for
    ``train_tokens`` (counted in the pivot language) from the sweep, or from the comparison."""
    from .compare import compare
    from .cost.hardware import gpu as get_gpu
    from .cost.model import preset
    from .cost.projection import project
    from .sweep import sweep as run_sweep

    out = {"compare": compare(corpus, list(tokenizers), pivot=pivot, seed=seed)}
    if sweep:
        algo, _, sizes = sweep.partition(":")
        try:
            size_list = [int(x) for x in sizes.split(",")]
        except ValueError:
            raise TokstatError(f"bad --sweep {sweep!r}", fix="write ALGO:SIZE,SIZE e.g. bpe:4000,8000,16000") from None
        out["sweep"] = run_sweep(corpus, algo, size_list, mix=mix, pivot=pivot, seed=seed)
    out["cost"] = project(out.get("sweep", out["compare"]), preset(model), get_gpu(gpu), train_tokens=train_tokens,
                          mix=mix)
    return out


def report(results: list[str | os.PathLike] | dict[str, pl.DataFrame], out: str | os.PathLike, *,
           png: str | os.PathLike | None = None, title: str = "tokstat report") -> Path:
    """Write the HTML report of ``results`` (compare/sweep/cost files, or :func:`study`'s dict) to
    ``out``; with ``png``, the same charts as ``DIR/NAME.png`` (200 dpi). Returns the HTML path."""
    import matplotlib.pyplot as plt

    data = results if isinstance(results, dict) else read_results(results)
    figs = charts(data)
    try:
        page = render(data, figs, title)
        if png is not None:
            d = Path(png)
            for f in figs:
                with atomic_path(d / f"{f.name}.png", suffix=".png") as tmp:
                    f.figure.savefig(tmp, format="png", dpi=200, metadata={"Software": None})
        write_bytes(out, page.encode("utf-8"))
    finally:
        for f in figs:
            plt.close(f.figure)
    return Path(out)
