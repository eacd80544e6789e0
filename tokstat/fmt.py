"""Numbers as people read them, per column: rates as %, money as money, multipliers with ×, counts
with separators. One table of formats for the terminal and the HTML report.

>>> fmt(0.0412, "unk_rate"), fmt(151017.2, "dollars"), fmt(1.234, "premium"), fmt(2e12, "training_tokens")
('4.1%', '$151k', '1.23×', '2T')
>>> fmt(None, "premium"), fmt(12345, "tokens"), fmt(0.25, "tokens_per_char"), money(1.94e-5)
('–', '12,345', '0.250', '$0.000019')
>>> fmt(0.0, "unk_rate"), fmt(0.0004, "unk_rate"), fmt(0.00002, "unk_rate")
('0.0%', '0.04%', '<0.01%')
>>> with_interval(1.574, 1.537, 1.612), with_interval(1.0, None, None)
('1.57× [1.54–1.61]', '1.00×')
>>> short_ids(["tiktoken/cl100k_base", "hf/qwen3", "train/bpe-8000"], 12)
{'tiktoken/cl100k_base': '…cl100k_base', 'hf/qwen3': 'hf/qwen3', 'train/bpe-8000': '…in/bpe-8000'}
"""

from __future__ import annotations

import math

PCT = {"jaccard", "coverage", "token_share", "byte_share", "continued_word_rate", "split_char_rate", "unk_rate",
       "roundtrip_rate", "byte_fallback_rate", "single_token_char_coverage", "boundary_precision", "boundary_recall",
       "boundary_f1", "renyi_efficiency",
       "renyi_efficiency_observed", "type_token_ratio", "vocab_utilisation",
       "mfu", "goodput", "changed_segments_share", "tokens_saved", "roundtrip_rate_after"}
MULT = {"premium", "premium_ci_low", "premium_ci_high", "vs_baseline", "vs_baseline_ci_low", "vs_baseline_ci_high",
        "premium_mean_of_ratios", "premium_mor_ci_low",
        "premium_mor_ci_high", "cost_multiplier", "serving_multiplier", "ratio", "premium_before", "premium_after"}
MONEY = {"dollars", "usd_per_request", "usd_per_1k_requests", "serving_usd_per_m_chars", "price_usd_h", "adapt_usd",
         "usd_per_1k_requests_before", "usd_per_1k_requests_after", "saving_usd_per_1k_requests"}
BIG = {"training_tokens", "training_flops", "embedding_params", "kv_cache_bytes_per_1k_chars", "gpu_hours", "new_params",
       "adapt_tokens", "adapt_bytes", "break_even_requests"}


def si(v: float) -> str:
    """A count with an SI prefix, three significant digits.

    >>> si(812_345_678_901), si(950)
    ('812G', '950')
    """
    return _si(v)


def _si(v: float) -> str:
    for unit, k in (("P", 1e15), ("T", 1e12), ("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(v) >= k:
            return f"{v / k:.3g}{unit}" if abs(v) / k < 100 else f"{v / k:,.0f}{unit}"
    return f"{v:.3g}"


def money(v: float) -> str:
    """Dollars: cents under $10, whole dollars under $10k, then k/M/B."""
    if abs(v) < 10:
        if abs(v) >= 1 or v == 0:
            return f"${v:,.2f}"
        return f"${v:.{1 - math.floor(math.log10(abs(v)))}f}"      # two significant digits: $0.024, $0.000019
    if abs(v) < 10_000:
        return f"${v:,.0f}"
    for unit, k in (("B", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(v) >= k:
            return f"${v / k:.3g}{unit}" if abs(v) / k < 1000 else f"${v / k:,.0f}{unit}"
    return f"${v:,.0f}"


def fmt(v, col: str = "") -> str:
    """One cell of column ``col``."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "–"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, int):
        return _si(v) if col in BIG and abs(v) >= 1e6 else f"{v:,}"
    if isinstance(v, float):
        if col in PCT:   # never "0.00%" for a value that is not zero
            if v == 0 or abs(v) >= 0.001:
                return f"{v:.1%}"
            return f"{v:.2%}" if abs(v) >= 0.0001 else ("<0.01%" if v > 0 else ">-0.01%")
        if col in MONEY:
            return money(v)
        if col in MULT:
            return f"{v:.2f}×"
        if col in BIG or abs(v) >= 1e5:
            return _si(v)
        return f"{v:.3f}" if abs(v) < 1000 else f"{v:,.0f}"
    return str(v)


def with_interval(v, lo, hi, col: str = "premium") -> str:
    """A value with its 95 % interval beside it, as the tables show a premium."""
    return f"{fmt(v, col)} [{lo:.2f}–{hi:.2f}]" if lo is not None and hi is not None else fmt(v, col)


def short_ids(ids: list[str], width: int) -> dict[str, str]:
    """Each id shortened *from the left* to ``width`` characters (the end of an id tells them apart:
    ``…cl100k_base``); ids already short enough stay as they are. Distinct ids stay distinct."""
    out: dict[str, str] = {}
    for i in dict.fromkeys(ids):
        out[i] = i if len(i) <= width else "…" + i[-(width - 1):]
    if len(set(out.values())) < len(out):        # shortening made two equal: number them instead
        seen: dict[str, int] = {}
        for i, s in list(out.items()):
            if s != i:
                seen[s] = seen.get(s, 0) + 1
                tag = f"#{seen[s]}"
                out[i] = s[:max(1, width - len(tag))] + tag if len(s) + len(tag) > width else s + tag
    return out


#: characters a terminal would act on instead of showing: C0 and C1 controls, DEL, and the
#: bidirectional overrides and isolates that reorder what is shown (tab and line feed included: in a
#: table cell or an error line they break the layout)
CONTROL = {c: f"\\x{c:02x}" for c in (*range(0x00, 0x20), 0x7F, *range(0x80, 0xA0))}
CONTROL.update({c: f"\\u{c:04x}" for c in (*range(0x202A, 0x202F), *range(0x2066, 0x206A))})


def visible(text: object) -> str:
    """``text`` safe to print on a terminal: every control character (ESC, BEL, CR, C1 such as
    CSI, a bidi override) shown as its escape, so data can never change a title, write the
    clipboard or move the cursor.

    >>> visible("ok\\x1b]0;pwned\\x07 \\u202eevil\\ttab")
    'ok\\\\x1b]0;pwned\\\\x07 \\\\u202eevil\\\\x09tab'
    """
    return str(text).translate(CONTROL)


_LATEX = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{",
          "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}", "×": r"$\times$", "–": "--"}


def latex_escape(text: object) -> str:
    r"""Text safe inside a LaTeX table cell (the ten special characters escaped; control characters
    shown as escapes, :func:`visible`).

    >>> latex_escape("hf/a_b 50% & {x}")
    'hf/a\\_b 50\\% \\& \\{x\\}'
    """
    return "".join(_LATEX.get(ch, ch) for ch in visible(text))


def markdown_escape(text: object) -> str:
    r"""Text safe inside a Markdown table cell: pipes, backslashes, backticks and the characters
    that start emphasis or links escaped, newlines shown as escapes.

    >>> markdown_escape("a|b *c* [d]")
    'a\\|b \\*c\\* \\[d\\]'
    """
    return "".join("\\" + ch if ch in "\\|`*_[]<>#" else ch for ch in visible(text))


#: columns of text, set flush left in exported tables
EXPORT_LEFT = {"tokenizer", "language", "group", "languages", "worst_language", "class", "a", "b"}


def export_table(rows: list[dict], cols: list[tuple[str, str]], cell, kind: str, caption: str = "") -> str:
    """The rows as a Markdown (``md``) or LaTeX (``latex``, booktabs) table, every cell escaped."""
    heads = [h for _, h in cols]
    body = [[cell(r, c) for c, _ in cols] for r in rows]
    if kind == "md":
        lines = ["| " + " | ".join(markdown_escape(h) for h in heads) + " |",
                 "|" + "|".join("---" if c in EXPORT_LEFT else "---:" for c, _ in cols) + "|"]
        lines += ["| " + " | ".join(markdown_escape(v) for v in row) + " |" for row in body]
        return "\n".join(lines) + "\n"
    if kind == "latex":
        spec = "".join("l" if c in EXPORT_LEFT else "r" for c, _ in cols)
        lines = [r"\begin{table}", r"\centering", rf"\begin{{tabular}}{{{spec}}}", r"\toprule",
                 " & ".join(latex_escape(h) for h in heads) + r" \\", r"\midrule"]
        lines += [" & ".join(latex_escape(v) for v in row) + r" \\" for row in body]
        lines += [r"\bottomrule", r"\end{tabular}"]
        if caption:
            lines.append(rf"\caption{{{latex_escape(caption)}}}")
        lines.append(r"\end{table}")
        return "\n".join(lines) + "\n"
    raise ValueError(kind)
