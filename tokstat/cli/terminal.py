"""What the commands print: prose wrapped between words with glyphs kept to their word, tables
fitted to the terminal's width (80-120 columns, or ``--wide``), signatures, the choice for a mix,
and text from data always shown without control sequences."""

from __future__ import annotations

import sys

from ..fmt import fmt, visible, with_interval

#: width of the terminal output when it is not a terminal (a pipe, a file) and COLUMNS is unset
PIPE_WIDTH = 100
WIDE = {"on": False}      # --wide: every column, lines as long as they need


def width() -> int:
    """The width tables are fitted to: ``COLUMNS`` if set, else the terminal's, else 100."""
    import os
    import shutil

    cols = os.environ.get("COLUMNS", "")
    if cols.isdigit() and int(cols) > 0:
        return int(cols)
    return shutil.get_terminal_size((PIPE_WIDTH, 24)).columns if sys.stdout.isatty() else PIPE_WIDTH


def _console():
    from rich.console import Console

    return Console(width=100_000 if WIDE["on"] else width(), soft_wrap=WIDE["on"])


def json_for_terminal(text: str) -> str:
    """JSON with the C1 controls and bidi overrides a JSON writer may leave raw written as ``\\u`` escapes
    (still the same JSON value).

    >>> json_for_terminal('["a\u009b"]')
    '["a\\\\u009b"]'
    """
    import re

    return re.sub(r"[\x7f-\x9f\u202a-\u202e\u2066-\u2069]", lambda m: f"\\u{ord(m.group()):04x}", text)



def _print(*parts, **kw) -> None:
    """Print to the terminal: strings as plain text (never rich markup) with control characters
    shown as escapes (:func:`~tokstat.fmt.visible`), wrapped by :func:`wrap_prose`; tables and
    texts as they are."""
    from rich.text import Text

    if parts and all(isinstance(p, str) for p in parts) and not WIDE["on"]:
        text = wrap_prose(" ".join(visible(p) for p in parts), width())
        _console().print(Text(text), soft_wrap=True, **kw)
        return
    _console().print(*[Text(visible(p)) if isinstance(p, str) else p for p in parts], **kw)


#: marks that belong to the word after them: never left alone at the end or start of a line
GLYPHS = ("⚠", "✓", "✗", "→", "×", "≈", "≤", "≥")


def wrap_prose(text: str, width: int) -> str:
    """``text`` wrapped at ``width`` columns between words only: a glyph stays with the word after
    it, a number with its unit sign (``1.57×``), an interval in brackets whole (``[1.54–1.61]``);
    a word longer than the line is never cut.

    >>> print(wrap_prose("the ⚠ mark: ⚠ loses text", 14))
    the ⚠ mark:
    ⚠ loses text
    """
    from rich.cells import cell_len

    glue = "\x00"        # visible() has escaped any NUL of the data
    for g in GLYPHS:
        text = text.replace(f"{g} ", f"{g}{glue}")
    out = []
    for para in text.split("\n"):
        line = ""
        for w in para.split(" "):
            cand = f"{line} {w}" if line else w
            if line and cell_len(cand.replace(glue, " ")) > width:
                out.append(line)
                line = w
            else:
                line = cand
        out.append(line)
    return "\n".join(x.replace(glue, " ") for x in out)


# ---------------------------------------------------------------- shared options

SHOWN = [("tokenizer", "tokenizer"), ("language", "lang"), ("premium", "premium [95% CI]"),
         ("tokens_per_char", "tok/char"), ("tokens_per_word", "tok/word"), ("split_char_rate", "split"),
         ("unk_rate", "unk"), ("vocab_size", "vocab")]
#: compare --sort: column -> descending
SORTS = {"premium": True, "tokens_per_char": True, "tokens_per_word": True, "unk_rate": True, "vocab_size": False,
         "tokenizer": False, "language": False}
LOSSY = "⚠"
SHOWN_WIDE = [("tokenizer", "tokenizer"), ("language", "lang"), ("tokens", "tokens"), ("tokens_per_char", "tok/char"),
              ("bytes_per_token", "bytes/tok"), ("tokens_per_word", "tok/word"), ("continued_word_rate", "cont.words"),
              ("split_char_rate", "split chars"), ("unk_rate", "unk"), ("roundtrip_rate", "round-trip"),
              ("boundary_f1", "bound.F1"), ("renyi_efficiency", "Rényi"), ("shannon_entropy", "H bits"),
              ("type_token_ratio", "TTR"), ("bits_per_byte", "bits/byte"), ("premium", "premium [95% CI]"),
              ("premium_mean_of_ratios", "mean of ratios [95% CI]"), ("calibration_transfer", "transfer"), ("rtc", "RTC")]


def _premium_cell(r, c):
    """A cell, the premiums with their intervals beside them; a swept vocabulary the corpus could
    not fill says the size asked for (``8,876 (asked 16,000)``)."""
    if c == "vocab_size" and r.get("requested_size") and r.get("vocab_size") and r["vocab_size"] < r["requested_size"]:
        return f"{r['vocab_size']:,} (asked {r['requested_size']:,})"
    if c == "premium":
        return with_interval(r.get("premium"), r.get("premium_ci_low"), r.get("premium_ci_high"))
    if c == "premium_mean_of_ratios":
        return with_interval(r[c], r.get("premium_mor_ci_low"), r.get("premium_mor_ci_high"))
    if c == "vs_baseline":
        return with_interval(r.get(c), r.get("vs_baseline_ci_low"), r.get("vs_baseline_ci_high"), c)
    return fmt(r.get(c), c)


TEXT_COLUMNS = {"text", "pivot_text", "not_recommended_because", "volume", "mfu_source", "price_source"}
LEFT_COLUMNS = {"tokenizer", "language", "segment", "variant", "tokenizer_family", "approach"} | TEXT_COLUMNS


def _table(title: str, cols: list[tuple[str, str]], rows, cell=None, *, wide_cols=None, shorten: str = "tokenizer"):
    """A table that fits the terminal (:func:`width`): columns of ``cols`` (``wide_cols`` with
    ``--wide``); ids in the ``shorten`` column are shortened *from the left* (``…cl100k_base``) as
    far as needed, with a legend under the table, never cut to ``…``; text columns wrap; if it still
    does not fit, the last columns are left out and the caption says so. Cells are
    :class:`rich.text.Text`: names such as ``bert[lower]`` are never read as markup."""
    from rich import box
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    from ..fmt import short_ids

    rows = list(rows)
    cols = list(wide_cols if WIDE["on"] and wide_cols else cols)
    cells = [{c: cell(r, c) if cell else fmt(r[c], c) for c, _ in cols} for r in rows]
    w = width()
    natural = {c: max([len(h)] + [len(x[c]) for x in cells]) for c, h in cols}
    legend: dict[str, str] = {}
    left_out: list[str] = []

    def total(cs):
        return sum(min(natural[c], 24) if c in TEXT_COLUMNS else natural[c] for c, _ in cs) + 2 * len(cs)

    if not WIDE["on"]:
        if total(cols) > w and any(c == shorten for c, _ in cols):
            room = max(12, natural[shorten] - (total(cols) - w))
            names = short_ids([x[shorten] for x in cells], room)
            for x in cells:
                if names[x[shorten]] != x[shorten]:
                    legend[names[x[shorten]]] = x[shorten]
                x[shorten] = names[x[shorten]]
            natural[shorten] = max([len(dict(cols)[shorten])] + [len(x[shorten]) for x in cells])
        while total(cols) > w and len(cols) > 2:
            left_out.append(cols.pop()[1])
    caption = f"{len(left_out)} more column(s) ({', '.join(reversed(left_out))}): --wide" if left_out else None
    t = Table(title=Text(visible(title)), caption=Text(caption) if caption else None, box=box.SIMPLE_HEAD, padding=(0, 1),
              pad_edge=False, collapse_padding=True)
    for c, head in cols:
        t.add_column(Text(head), justify="left" if c in LEFT_COLUMNS else "right",
                     no_wrap=c not in TEXT_COLUMNS, overflow="fold")
    for x in cells:
        t.add_row(*[Text(visible(x[c])) for c, _ in cols])
    if not legend:
        return t
    return Group(t, *[Text(visible(f"  {k} = {v}"), style="dim") for k, v in legend.items()])


def _signatures(df, every: bool = True) -> None:
    """Every signature (soft-wrapped: one line however narrow the terminal, so that it copies whole),
    or with ``every=False`` one digest line (the signatures are in every --out file)."""
    from rich.text import Text

    from ..parse import corpus_of

    sigs = list(dict.fromkeys(df["signature"].to_list()))
    if every:
        for sig in sigs:
            _print(Text(visible(sig), style="dim"), soft_wrap=True)
        return
    corpora = ", ".join(dict.fromkeys(c for c in map(corpus_of, sigs) if c))
    _print(Text(visible(f"{len(sigs)} signature(s), corpus {corpora}: in the --out files; --signatures prints them"),
                style="dim"))


def pl_rows(rows: list[dict]):
    import polars as pl

    return pl.DataFrame(rows, infer_schema_length=None)


def _mark_lossy(rows: list[dict], lossy: set[str]) -> bool:
    """Mark in the tokenizer cell the rows of the tokenizers in ``lossy`` (those that lose text:
    :func:`_lossy_of`, the one rule); whether any row was marked."""
    marked = False
    for r in rows:
        if r["tokenizer"] in lossy:
            r["tokenizer"] = f"{r['tokenizer']} {LOSSY}"
            marked = True
    return marked


def _print_choice(df, mix) -> None:
    """``compare --mix``: the tokenizers ranked for the mix with their totals, and the answer (the one
    criterion of :func:`tokstat.cost.choice.choose`, as the report and cost give it)."""
    import polars as pl

    from ..cost.choice import decide, mix_spec

    def mix_arg(m) -> str:
        return mix_spec(m).partition(":")[2] + ("" if m.unit == "content" else f" --mix-unit {m.unit}")

    dec = decide(df, mix)
    ch = dec.tokens
    chars = {lang: float(df.filter(pl.col("language") == lang)["chars"].max() or 0) for lang in ch.weights}
    total_chars = sum(chars.values())
    rows = [{"tokenizer": t, "score": s, "total": s * total_chars,
             "diff": (s / ch.scores[ch.best] - 1) if ch.best else None}
            for t, s in ch.scores.items()] + [{"tokenizer": t + " " + LOSSY, "score": None, "total": None, "diff": None}
                                              for t in ch.excluded]
    _print(_table(f"ranked for the mix ({mix.describe()}): tokens per character of the mix, and the tokens of "
                  f"{total_chars:,.0f} characters of it", [
                      ("tokenizer", "tokenizer"), ("score", "tok/char of the mix"), ("total", "tokens"),
                      ("diff", "vs best")], rows,
                  lambda r, c: visible(r[c]) if c == "tokenizer" else "–" if r[c] is None else
                  f"{r[c]:.4f}" if c == "score" else f"{r[c]:,.0f}" if c == "total" else f"{r[c]:+.1%}"))
    for line in dec.lines():
        _print(line)
    sizes = {int(v) for v in df.filter(pl.col("tokenizer").is_in(list(ch.scores)))["vocab_size"].drop_nulls()} \
        if "vocab_size" in df.columns else set()
    if len(ch.scores) > 1 and len(sizes) > 1:
        _print(f"this ranks by tokens; a model pays more per token for a larger vocabulary ({min(sizes):,} to "
               f"{max(sizes):,} here), so the cheapest to train or serve may differ: tokstat cost --results OUT "
               f"--model MODEL --gpu GPU --mix {mix_arg(mix)} ranks by dollars")


def _print_switch(df, base: str) -> None:
    """What switching from the baseline changes: per other tokenizer, the languages where tokens
    change least and most (× the baseline's tokens on the same texts, 95 % paired interval)."""
    import polars as pl

    for t in df["tokenizer"].unique(maintain_order=True).to_list():
        if t == base:
            continue
        g = df.filter((pl.col("tokenizer") == t) & pl.col("vs_baseline").is_not_null()).sort("vs_baseline")
        if not g.height:
            continue
        lo, hi = g.row(0, named=True), g.row(-1, named=True)
        span = (f"{_premium_cell(lo, 'vs_baseline')} on {lo['language']}" if g.height == 1 else
                f"from {_premium_cell(lo, 'vs_baseline')} on {lo['language']} to {_premium_cell(hi, 'vs_baseline')} "
                f"on {hi['language']}")
        _print(f"switching {base} → {t}: tokens × the baseline's {span} ({g.height} language(s), same texts)")


def _lossy_of(df) -> set[str]:
    """The tokenizers of a compare table that lose text (:func:`tokstat.metrics.unreliable`)."""
    from ..metrics import unreliable

    return set(unreliable(df)) if {"tokenizer", "language"} <= set(df.columns) else set()


def _matrix(df, title: str):
    """A tokenizer × language table of the premium with its interval."""
    langs = list(dict.fromkeys(df["language"].to_list()))
    cells: dict[str, dict] = {}
    for r in df.iter_rows(named=True):
        cells.setdefault(r["tokenizer"], {"tokenizer": r["tokenizer"]})[r["language"]] = _premium_cell(r, "premium")
    return _table(title, [("tokenizer", "tokenizer"), *[(lang, lang) for lang in langs]], list(cells.values()),
                  lambda r, c: r.get(c, "–"))


