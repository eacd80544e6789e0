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
    """One token: its id, byte span, the text shown and its kind (``text``, ``partial`` — cuts a
    character —, ``byte`` — a byte-fallback token —, ``unk`` or ``empty``)."""

    id: int
    start: int
    end: int
    shown: str
    kind: str


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
        out.append(Piece(i, a, b, shown, kind))
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


STYLES = {"text": ("on grey23", "on grey35"), "partial": ("bold red on grey23", "bold red on grey35"),
          "byte": ("bold magenta on grey23", "bold magenta on grey35"), "unk": ("bold white on red", "bold white on red"),
          "empty": ("dim", "dim")}
CSS = {"text": ("#dde7f7", "#f7e9d0"), "partial": ("#f9c9c9", "#f3b0b0"), "byte": ("#e6d1f5", "#d7b8ef"),
       "unk": ("#e04b4b", "#e04b4b"), "empty": ("#eeeeee", "#eeeeee")}


def rich_lines(text: str, result: dict[str, list[Piece]], ids: bool = False, plain: bool = False):
    """Renderables for the terminal: per tokenizer a header, the coloured pieces (alternating
    backgrounds; cut characters red, byte fallback magenta, unknown white on red) and optionally the
    ids. ``plain`` (no colours: a pipe or a file) separates the pieces with ``│`` and marks unknown
    tokens ``⟨unk:…⟩``."""
    from rich.text import Text

    n_chars = len(text)
    out = []
    for name, ps in result.items():
        out.append(Text(f"{name}: {len(ps)} tokens, {len(ps) / n_chars:.3f} per character", style="bold"))
        t = Text()
        for k, p in enumerate(ps):
            shown = visible(p.shown.replace("\n", "⏎"))   # ESC, BEL, CR …: shown, never sent to the terminal
            if plain:
                t.append(("│" if k else "") + (f"⟨unk:{shown}⟩" if p.kind == "unk" else shown))
            else:
                t.append(shown, style=STYLES[p.kind][k % 2])
        out.append(t)
        if ids:
            out.append(Text(" ".join(str(p.id) for p in ps), style="dim"))
    return out


def html_fragment(text: str, result: dict[str, list[Piece]], ids: bool = False):
    """The same view as a self-contained HTML fragment (inline styles, no script), escaped by
    construction (:mod:`tokstat.markup`): a :class:`markupsafe.Markup`."""
    from .markup import Markup, h, join

    parts = [Markup('<div class="tokstat-show" style="font-family:ui-monospace,monospace;line-height:1.9">')]
    for name, ps in result.items():
        parts.append(h("<p><b>{}</b>: {} tokens, {:.3f} per character<br>", name, len(ps), len(ps) / len(text)))
        for k, p in enumerate(ps):
            title = f"id {p.id}, bytes {p.start}-{p.end}" + ("" if p.kind == "text" else f", {p.kind}")
            parts.append(h('<span title="{}" style="background:{};padding:1px 0;white-space:pre-wrap;'
                           'overflow-wrap:anywhere">{}</span>', title, CSS[p.kind][k % 2], p.shown))
        if ids:
            parts.append(h('<br><small style="color:#666">{}</small>', " ".join(str(p.id) for p in ps)))
        parts.append(Markup("</p>"))
    parts.append(Markup("</div>\n"))
    return join("", parts)


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
