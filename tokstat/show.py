"""A look inside: a text split into each tokenizer's tokens (``tokstat show``), and the segments where a
tokenizer does worst against the pivot (``tokstat worst``).

Every token is shown by its exact byte span in the text: a span that cuts a character (a byte-level
BPE splitting 語 into two tokens) is shown as its bytes (``<e8 aa>``), as is a SentencePiece
byte-fallback token; an unknown token shows the text it stands for, marked; a token that covers
no input (SentencePiece's dummy prefix ``▁`` before a CJK character) is ``∅``.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from .adapters import Adapter, load_tokenizer
from .errors import TokstatError
from .fmt import visible


@dataclass(frozen=True)
class Piece:
    """One token: its id, byte span, the text shown, its kind (``text``, ``partial`` — cuts a
    character —, ``byte`` — a byte-fallback token —, ``unk`` or ``empty``) and its bytes of the text."""

    id: int
    start: int
    end: int
    shown: str
    kind: str
    raw: bytes = b""


def pieces(adapter: Adapter, text: str) -> list[Piece]:
    """The tokens of ``text`` (no special tokens), as the library gives them.

    A byte-level BPE of the 256 bytes and two merges (made here: the example needs no download):

    >>> import tiktoken
    >>> from tokstat.adapters.tiktoken_ import TiktokenAdapter
    >>> ranks = {bytes([b]): b for b in range(256)} | {b"Hi": 256, b" \\xe8": 257}
    >>> enc = tiktoken.Encoding("tiny", pat_str=r" ?\\S+|\\s+", mergeable_ranks=ranks, special_tokens={})
    >>> [(p.shown, p.kind) for p in pieces(TiktokenAdapter(enc, "tiktoken/tiny", "0" * 64), "Hi 語")]
    [('Hi', 'text'), (' <e8>', 'partial'), ('<aa>', 'partial'), ('<9e>', 'partial')]
    """
    enc = adapter.encode_spans([text])
    raw = text.encode("utf-8")
    out = []
    fallback = adapter.byte_fallback
    for k in range(enc.off[0], enc.off[1]):
        i, a, b = int(enc.ids[k]), int(enc.starts[k]), int(enc.ends[k])
        chunk = raw[a:b]
        if i in adapter.unk_ids:
            kind, shown = "unk", chunk.decode("utf-8", "replace")
        elif fallback is not None and i < len(fallback) and fallback[i]:
            kind, shown = "byte", "".join(f"<{x:02x}>" for x in chunk)
        elif a == b:
            kind, shown = "empty", "∅"
        elif bool(enc.partial[k]):
            kind = "partial"
            shown = _partial(chunk)
        else:
            kind, shown = "text", chunk.decode("utf-8")
        out.append(Piece(i, a, b, shown, kind, chunk))
    return out


def _partial(chunk: bytes) -> str:
    """Complete characters as text, the cut ones as their bytes: ``b" \\xe8"`` -> ``" <e8>"``."""
    out, i = [], 0
    while i < len(chunk):
        for j in range(min(len(chunk), i + 4), i, -1):
            try:
                out.append(chunk[i:j].decode("utf-8"))
                i = j
                break
            except UnicodeDecodeError:
                continue
        else:
            out.append(f"<{chunk[i]:02x}>")
            i += 1
    return "".join(out)


def show(text: str, tokenizers: list[str | Adapter], normalize: str = "nfc") -> dict[str, list[Piece]]:
    """``{tokenizer id: pieces}`` for each tokenizer (specs or adapters), on the text normalised as
    the counts are (``normalize``: ``nfc``, the default, ``nfkc`` or ``none``)."""
    from .corpus import normalizer

    try:
        text.encode("utf-8")
    except UnicodeEncodeError as e:
        bad = text[e.start]
        raise TokstatError(f"the text holds {'invalid UTF-8' if 0xDC80 <= ord(bad) <= 0xDCFF else 'a lone surrogate'} at "
                           f"character {e.start + 1} (U+{ord(bad):04X}): it is not Unicode text",
                           fix="pass the text in UTF-8 (check the terminal's or the file's encoding)") from None
    text = normalizer(normalize)(text)
    if not text:
        raise TokstatError("nothing to show: the text is empty", fix='pass a text, e.g. tokstat show "你好，世界"')
    if not tokenizers:
        raise TokstatError("no tokenizer given", fix="pass -t SPEC, e.g. -t tiktoken:cl100k_base")
    adapters = [load_tokenizer(t) for t in tokenizers]
    return {a.id: pieces(a, text) for a in adapters}


#: backgrounds, one per token id (``id % 10``): the same id has the same colour in every line and
#: tokenizer; a thin white edge separates two neighbours that share one
PALETTE = ("#dbe9f6", "#fde2c8", "#d9f0d3", "#f6d5e5", "#e5dcf3", "#fff2b3", "#d2efee", "#f3ddd2", "#e2e8c8",
           "#e6e6e6")
TERMINAL = ("#26374f", "#4a3320", "#27432a", "#4a2738", "#38304f", "#4a4420", "#1f4545", "#4a3027", "#3b4226",
            "#3a3a3a")
MARKS = {"partial": "bold bright_red underline", "byte": "bold bright_magenta", "unk": "bold white on red",
         "empty": "dim"}

VIEW_CSS = """
.tokstat-show{font:14px/1.5 system-ui,-apple-system,Segoe UI,Roboto,sans-serif}
.tv-legend{font-size:13px;color:#444;margin:4px 0 8px}
.tv-grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(16em,1fr));gap:10px}
.tv-col{border:1px solid #e5e5e5;border-radius:8px;padding:6px 8px;min-width:0}
.tv-head{font-size:13px;margin-bottom:4px}.tv-head b{font-size:14px}
.tv-sw{display:inline-block;width:10px;height:10px;border-radius:2px;margin-right:5px}
.tv-text{font:15px/1.9 ui-monospace,Menlo,Consolas,monospace;white-space:pre-wrap;overflow-wrap:anywhere}
.tv{position:relative;display:inline-block;white-space:pre-wrap;overflow-wrap:anywhere;max-width:100%;padding:1px 0;
border-right:2px solid #fff;border-radius:2px;cursor:default}
.tv-input{font:15px/1.6 ui-monospace,Menlo,Consolas,monospace;white-space:pre-wrap;overflow-wrap:anywhere;
background:#f6f6f6;border-radius:6px;padding:4px 8px;margin:4px 0 8px}
.tv-rank{border-collapse:collapse;font-size:13px;margin:0 0 10px}.tv-rank td,.tv-rank th{padding:2px 10px 2px 0;
text-align:right}.tv-rank td:first-child,.tv-rank th:first-child{text-align:left}
""" + "".join(f".k{i}{{background:{c}}}" for i, c in enumerate(PALETTE)) + """
.tv-mk{font-style:normal;padding:0 2px}
.tokstat-show .partial{border-bottom:2px solid #c62828;color:#a11}
.tokstat-show .byte{outline:1px dashed #7b1fa2;outline-offset:-1px;color:#6a1b9a}
.tokstat-show .unk{background:#d32f2f;color:#fff}.tokstat-show .empty{color:#888}
.tv:hover{outline:2px solid #1d1d1f;outline-offset:-1px;z-index:1}
.tv:hover::after{content:attr(data-tip);position:absolute;left:0;top:100%;z-index:3;background:#1d1d1f;color:#fff;
font:12px/1.4 ui-monospace,Menlo,Consolas,monospace;padding:2px 6px;border-radius:3px;white-space:pre}
.tv-ids{font:12px ui-monospace,Menlo,Consolas,monospace;color:#555;overflow-wrap:anywhere;margin-top:4px}
"""

_KIND = {"partial": "cuts a character", "byte": "byte fallback", "unk": "unknown token", "empty": "covers no input"}


@dataclass(frozen=True)
class Summary:
    """What one tokenizer did to the text: tokens, characters, the characters cut across two tokens
    or more, byte-fallback and unknown tokens.

    >>> summary([Piece(1, 0, 2, "<e8 aa>", "partial", b"\\xe8\\xaa"), Piece(2, 2, 3, "<9e>", "partial", b"\\x9e")])
    Summary(tokens=2, chars=1, cut_chars=1, byte_tokens=0, unk_tokens=0)
    """

    tokens: int
    chars: int
    cut_chars: int
    byte_tokens: int
    unk_tokens: int

    def line(self) -> str:
        """``"7 tokens · 0.700 per character · 1 character cut · 2 byte-fallback"`` (zeros left out)."""
        out = [f"{self.tokens:,} tokens", f"{self.tokens / self.chars:.3f} per character" if self.chars else "no text"]
        for n, what in ((self.cut_chars, "character" + "s" * (self.cut_chars > 1) + " cut"),
                        (self.byte_tokens, "byte-fallback"), (self.unk_tokens, "unknown")):
            if n:
                out.append(f"{n:,} {what}")
        return " · ".join(out)


def summary(ps: list[Piece]) -> Summary:
    """The :class:`Summary` of one tokenizer's pieces (which tile the text's bytes)."""
    raw = b"".join(p.raw for p in ps)
    text = raw.decode("utf-8")
    cuts = {p.start for p in ps} | {p.end for p in ps}
    cut, pos = 0, ps[0].start if ps else 0
    for c in text:
        n = len(c.encode("utf-8"))
        cut += any(pos < x < pos + n for x in cuts)
        pos += n
    return Summary(len(ps), len(text), cut, sum(p.kind == "byte" for p in ps), sum(p.kind == "unk" for p in ps))


def _tip(p: Piece) -> str:
    """The hover text: ``id 9906 · bytes e4 bd a0`` and what is special about the token."""
    tip = f"id {p.id} · " + (f"bytes {p.raw.hex(' ')}" if p.raw else "no bytes")
    return tip + (f" · {_KIND[p.kind]}" if p.kind in _KIND else "")


def rich_lines(text: str, result: dict[str, list[Piece]], ids: bool = False, plain: bool = False):
    """Renderables for the terminal: per tokenizer a header (tokens, per character, characters cut,
    byte-fallback and unknown tokens), the pieces on backgrounds stable per id (cut characters red
    and underlined, shown as bytes; byte fallback magenta; unknown white on red) and optionally the
    ids. ``plain`` (no colours: a pipe or a file) separates the pieces with ``│`` and marks unknown
    tokens ``⟨unk:…⟩``."""
    from rich.text import Text

    out = []
    for name, ps in result.items():
        out.append(Text(f"{name}: {summary(ps).line()}", style="bold"))
        t = Text()
        for k, p in enumerate(ps):
            shown = visible(p.shown.replace("\n", "⏎"))   # ESC, BEL, CR …: shown, never sent to the terminal
            if plain:
                t.append(("│" if k else "") + (f"⟨unk:{shown}⟩" if p.kind == "unk" else shown))
            else:
                bg = "" if p.kind == "unk" else f" on {TERMINAL[p.id % len(TERMINAL)]}"
                t.append(shown, style=MARKS.get(p.kind, "") + bg)
        out.append(t)
        if ids:
            out.append(Text(" ".join(str(p.id) for p in ps), style="dim"))
    return out


def html_fragment(text: str, result: dict[str, list[Piece]], ids: bool = False, *, style: bool = True,
                  colours: dict[str, str] | None = None):
    """The view as a self-contained HTML fragment (no script), escaped by construction
    (:mod:`tokstat.markup`): the tokenizers side by side, each token on a background stable per id
    with its id and bytes on hover, cut characters underlined red, byte fallback outlined, unknown
    tokens white on red. ``style``: include :data:`VIEW_CSS` (the report has it once in its own);
    ``colours``: a swatch per tokenizer, the page's colour for it. A :class:`markupsafe.Markup`."""
    from .markup import Markup, h, join

    parts = [h("<style>{}</style>", Markup(VIEW_CSS)) if style else Markup(""),
             Markup('<div class="tokstat-show"><p class="tv-legend">Each token on its own colour (the same id, the '
                    'same colour); hover a token for its id and bytes. <i class="tv-mk partial">Red, '
                    'underlined</i>: a character cut across tokens, shown as its bytes; <i class="tv-mk '
                    'byte">outlined</i>: byte fallback; <i class="tv-mk unk">white on red</i>: '
                    'unknown; ∅: covers no input.</p><div class="tv-grid">')]
    for name, ps in result.items():
        sw = h('<i class="tv-sw" style="background:{}"></i>', colours[name]) if colours and name in colours else ""
        parts.append(h('<div class="tv-col"><div class="tv-head">{}<b>{}</b><br>{}</div><div class="tv-text">',
                       sw, name, summary(ps).line()))
        for p in ps:
            kind = "" if p.kind == "text" else " " + p.kind
            parts.append(h('<span class="tv k{}{}" data-tip="{}">{}</span>', p.id % len(PALETTE), kind, _tip(p), p.shown))
        parts.append(Markup("</div>"))
        if ids:
            parts.append(h('<div class="tv-ids">{}</div>', " ".join(str(p.id) for p in ps)))
        parts.append(Markup("</div>"))
    parts.append(Markup("</div></div>\n"))
    return join("", parts)


def ranking(result: dict[str, list[Piece]]) -> list[tuple[str, Summary]]:
    """The tokenizers by their count on the text, fewest tokens first (ties by name)."""
    return sorted(((name, summary(ps)) for name, ps in result.items()), key=lambda x: (x[1].tokens, x[0]))


def html_page(text: str, result: dict[str, list[Piece]], ids: bool = False) -> bytes:
    """``show --html``: the view as a page of its own (UTF-8 declared, so a browser opening the file
    reads the text as it is), one self-contained file with no script: the input text, the
    tokenizers ranked by their count, then each one's tokens — a white gap between every two
    tokens (two tokens on one colour still read as two), a token never broken across lines unless
    it alone is wider than its column."""
    from .markup import h, join

    rows = join("", [h("<tr><td>{}</td><td>{:,}</td><td>{}</td></tr>", name, sm.tokens,
                       f"{sm.tokens / sm.chars:.3f}" if sm.chars else "–") for name, sm in ranking(result)])
    head = h('<h1 style="font-size:18px">tokstat show</h1><div class="tokstat-show"><p class="tv-head">Input '
             '({:,} characters):</p><div class="tv-input">{}</div><table class="tv-rank"><tr><th>tokenizer, fewest '
             "tokens first</th><th>tokens</th><th>per character</th></tr>{}</table></div>", len(text), text, rows)
    return h('<!doctype html>\n<html><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,'
             'initial-scale=1"><title>tokstat show: {}</title><style>body{{margin:16px 24px;color:#1d1d1f}}</style>'
             '</head><body>{}{}</body></html>\n', text[:60], head, html_fragment(text, result, ids)).encode("utf-8")


def worst(segments: pl.DataFrame, *, tokenizer: str | None = None, language: str | None = None, pivot: str = "en",
          by: str = "premium", n: int = 20) -> pl.DataFrame:
    """The ``n`` segments where a tokenizer does worst, from ``compare --segments-out`` rows:
    ``by="premium"``: tokens in ``language`` / tokens in the pivot on the same segment (highest
    first); ``by="tokens_per_char"``: tokens per character. With the texts side by side when the
    rows carry them (``compare --segments-text``). The column sorted by comes right after the segment."""
    return worst_of(segments, tokenizer=tokenizer, language=language, pivot=pivot, by=by, n=n)[0]


def worst_of(segments: pl.DataFrame, *, tokenizer: str | None = None, language: str | None = None, pivot: str = "en",
             by: str = "premium", n: int = 20) -> tuple[pl.DataFrame, str, str]:
    """:func:`worst` and the tokenizer and language it chose (the first ones when not given)."""
    need = {"tokenizer", "language", "segment", "tokens", "chars"}
    if not need <= set(segments.columns):
        raise TokstatError(f"not a compare --segments-out table (missing {sorted(need - set(segments.columns))})",
                           fix="pass the file written by tokstat compare --segments-out (with --segments-text for texts)")
    if by not in ("premium", "tokens_per_char"):
        raise TokstatError(f"unknown --by {by!r}", fix="use --by premium or --by tokens_per_char")
    if n < 1:
        raise TokstatError(f"-n must be at least 1, not {n}", fix="e.g. -n 20")
    if segments.height == 0:
        raise TokstatError("the segments table has no rows", fix="pass a compare --segments-out file of a corpus with text")
    toks = segments["tokenizer"].unique(maintain_order=True).to_list()
    tokenizer = tokenizer or toks[0]
    if tokenizer not in toks:
        raise TokstatError(f"tokenizer {tokenizer!r} is not in the table", fix=f"use one of {', '.join(toks)}")
    rows = segments.filter((pl.col("tokenizer") == tokenizer) & (pl.col("chars") > 0))
    langs = rows["language"].unique(maintain_order=True).to_list()
    language = language or next((lang for lang in langs if lang != pivot), None)
    if language not in langs:
        raise TokstatError(f"language {language!r} is not in the table", fix=f"use one of {', '.join(langs)}")
    text = "text" in rows.columns
    mine = rows.filter(pl.col("language") == language).select(
        "segment", "tokens", "chars", *(["text"] if text else []))
    if by == "tokens_per_char":
        out = mine.with_columns((pl.col("tokens") / pl.col("chars")).alias("tokens_per_char")).sort(
            "tokens_per_char", descending=True)
        # the column it is sorted by comes right after the segment (a narrow terminal drops the last)
        return (out.head(n).select("segment", "tokens_per_char", "tokens", "chars", *(["text"] if text else [])),
                tokenizer, language)
    if pivot not in langs:
        raise TokstatError(f"the pivot {pivot!r} is not in the table", fix=f"pass --pivot, one of {', '.join(langs)}")
    piv = rows.filter(pl.col("language") == pivot).select(
        "segment", pl.col("tokens").alias("pivot_tokens"), *([pl.col("text").alias("pivot_text")] if text else []))
    both = mine.join(piv, on="segment").filter(pl.col("pivot_tokens") > 0)
    if not both.height and mine.height:
        raise TokstatError(f"no {language} segment has {pivot} text beside it: these are documents (a monolingual "
                           "corpus), with no per-segment premium", fix="use --by tokens_per_char")
    both = both.with_columns((pl.col("tokens") / pl.col("pivot_tokens")).alias("premium"))
    return (both.sort(["premium", "segment"], descending=[True, False]).head(n).select(
        "segment", "premium", "tokens", "pivot_tokens", "chars", *(["text", "pivot_text"] if text else [])),
        tokenizer, language)


# ---------------------------------------------------------------- robustness: the same content, written differently

def halfwidth(text: str) -> str:
    """Full-width ASCII forms (U+FF01–U+FF5E) and the ideographic space as their ASCII counterparts.

    >>> halfwidth("ＡＩ，ｏｋ！　1")
    'AI,ok! 1'
    """
    return "".join(chr(ord(c) - 0xFEE0) if 0xFF01 <= ord(c) <= 0xFF5E else " " if c == "\u3000" else c for c in text)


def _variants(lang: str, script: str | None) -> dict:
    import unicodedata

    out = {"nfkc": lambda t: unicodedata.normalize("NFKC", t), "halfwidth": halfwidth}
    if lang.split("-")[0] == "zh":
        try:
            from opencc import OpenCC
        except ImportError:
            import warnings

            warnings.warn(f"{lang}: Simplified/Traditional conversion needs opencc-python-reimplemented "
                          "(pip install 'tokstat[words]')", stacklevel=3)
            return out
        if script == "Hant" or lang == "zh-Hant":
            out["to_simplified"] = OpenCC("t2s").convert
        else:
            out["to_traditional"] = OpenCC("s2t").convert
    return out


def robustness(corpus, tokenizers: list[str | Adapter], *, languages: list[str] | None = None,
               max_segments: int = 2000) -> pl.DataFrame:
    """How much each tokenizer's count moves when the same content is written differently: NFKC,
    full-width → half-width, and for Chinese the other script (OpenCC t2s/s2t). One row per
    (tokenizer, language, variant): tokens of the corpus text and of the variant, their ratio, and
    the share of segments the variant changes at all (on the first ``max_segments`` segments)."""
    from itertools import islice

    from .langs import chinese_script
    from .loaders import load_corpus

    if not isinstance(max_segments, int) or isinstance(max_segments, bool) or max_segments < 1:
        raise TokstatError(f"--max-segments must be at least 1, got {max_segments}", fix="e.g. --max-segments 2000")
    c = corpus if not isinstance(corpus, str) else load_corpus(corpus)
    langs = languages or c.languages
    adapters = [load_tokenizer(t) for t in tokenizers]
    if not adapters:
        raise TokstatError("no tokenizer given", fix="pass -t SPEC, e.g. -t tiktoken:cl100k_base")
    segs = list(islice(iter(c), max_segments))
    rows = []
    for lang in langs:
        texts = [s.texts.get(lang, "") for s in segs if s.texts.get(lang, "").strip()]
        if not texts:
            continue
        script = chinese_script(texts)[0] if lang == "zh" else None
        for name, f in _variants(lang, script).items():
            var = [f(t) for t in texts]
            changed = sum(a != b for a, b in zip(texts, var)) / len(texts)
            for a in adapters:
                base = sum(len(x) for x in a.encode_batch(texts))
                new = sum(len(x) for x in a.encode_batch(var))
                rows.append({"tokenizer": a.id, "language": lang, "variant": name, "segments": len(texts),
                             "changed_segments_share": changed, "tokens": base, "tokens_variant": new,
                             "ratio": new / base if base else None})
    return pl.DataFrame(rows)
