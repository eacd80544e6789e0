"""The HTML page: tables, charts and signatures in one self-contained file."""

from __future__ import annotations

import html

import polars as pl

from .._version import __version__
from .answers import answers
from .charts import Chart, svg

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
            f'data-chart="{f.name}">{svg(f.figure)}'
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
