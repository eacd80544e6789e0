"""What a vocabulary holds, and how much two vocabularies share (issue 28; tokka-bench, TokSuite).

Every regular (non-special) entry is spelt as the bytes it stands for, whatever the library's own
spelling: byte-level BPE symbols (``Ġ`` for a space) are mapped back to their bytes, SentencePiece's
``▁`` is a space and its ``<0xNN>`` pieces are the byte NN, a WordPiece word-initial entry ``x`` is
`` x`` (it follows a space or starts the text) and a continuation ``##x`` is ``x``. Two tokenizers'
entries are then compared as byte strings (:func:`overlap`).

>>> classify(" hello".encode())
('Latin', True, True)
>>> classify("语言".encode()), classify(b"\\xe8\\xaa")
(('Han', False, False), ('partial UTF-8', False, False))
"""

from __future__ import annotations

import regex

from .adapters import Adapter, load_tokenizer
from .adapters.base import byte_decoder as _byte_decoder
from .adapters.base import byte_piece
from .errors import TokstatError

#: scripts reported by name (the rest of the letters are ``other``)
SCRIPTS = ["Latin", "Han", "Cyrillic", "Hangul", "Hiragana", "Katakana", "Arabic", "Devanagari", "Thai", "Greek",
           "Hebrew", "Bengali", "Tamil", "Georgian", "Armenian", "Ethiopic", "Khmer", "Lao", "Myanmar", "Tibetan"]
CLASSES = SCRIPTS + ["other script", "mixed script", "digits", "punctuation/symbols", "whitespace", "partial UTF-8"]
_SCRIPT_RE = {s: regex.compile(rf"\p{{Script={s}}}") for s in SCRIPTS}
_LETTER = regex.compile(r"[\p{L}\p{M}]")
_DIGIT = regex.compile(r"\p{N}")
_KANA = {"Hiragana", "Katakana"}


def _script_of(ch: str) -> str:
    for s, r in _SCRIPT_RE.items():
        if r.match(ch):
            return s
    return "other script"


def classify(b: bytes) -> tuple[str, bool, bool]:
    """``(class, space-prefixed, holds whitespace)`` of a vocabulary entry's bytes: its script when
    all its letters are of one (marks go with their letters; kana with Han counts as mixed),
    ``mixed script``, ``digits``, ``punctuation/symbols``, ``whitespace``, or ``partial UTF-8`` for
    bytes that are not whole characters (byte-level BPE pieces of a character, byte tokens)."""
    try:
        s = b.decode("utf-8")
    except UnicodeDecodeError:
        return "partial UTF-8", b[:1] == b" ", any(c in b for c in b" \t\n\r")
    space = s[:1] == " "
    ws = any(c.isspace() for c in s)
    scripts = {_script_of(c) for c in s if _LETTER.match(c) and not regex.match(r"\p{M}", c)}
    if len(scripts) == 1:
        cls = scripts.pop()
    elif scripts:
        cls = "mixed script"
    elif s.strip() == "":
        cls = "whitespace"
    elif all(_DIGIT.match(c) or c.isspace() for c in s):
        cls = "digits"
    else:
        cls = "punctuation/symbols"
    return cls, space, ws


def entries(adapter: Adapter) -> dict[int, bytes]:
    """``{id: bytes}`` of every regular (non-special, non-control) entry of ``adapter``'s vocabulary."""
    from .adapters.hf import HFAdapter
    from .adapters.fast import FastAdapter
    from .adapters.spm import SPMAdapter
    from .adapters.tiktoken_ import TiktokenAdapter

    if isinstance(adapter, FastAdapter):
        adapter = adapter.ref
    if isinstance(adapter, TiktokenAdapter):
        off = adapter.id_offset
        return {r + off: t for t, r in adapter.enc._mergeable_ranks.items()}
    if isinstance(adapter, SPMAdapter):
        sp, out = adapter.sp, {}
        for i in range(sp.get_piece_size()):
            if sp.is_control(i) or sp.is_unknown(i):
                continue
            p = sp.id_to_piece(i)
            out[i] = bytes([byte_piece(p)]) if sp.is_byte(i) else p.replace("▁", " ").encode("utf-8")
        return out
    if isinstance(adapter, HFAdapter):
        import json

        cfg = json.loads(adapter.tok.to_str())
        special = {a["id"] for a in cfg.get("added_tokens", []) if a.get("special")}
        vocab = adapter.tok.get_vocab(with_added_tokens=True)
        model = cfg.get("model", {})
        prefix = model.get("continuing_subword_prefix") or ("##" if model.get("type") == "WordPiece" else None)
        dec = _byte_decoder() if adapter.byte_level else None
        added = {a["content"] for a in cfg.get("added_tokens", [])}
        out = {}
        for t, i in vocab.items():
            if i in special or i in adapter.unk_ids:
                continue
            if dec is not None and t not in added and all(c in dec for c in t):
                out[i] = bytes(dec[c] for c in t)
            elif adapter.byte_fallback is not None and i < len(adapter.byte_fallback) and adapter.byte_fallback[i]:
                out[i] = bytes([byte_piece(t)])
            elif model.get("type") == "WordPiece":
                out[i] = (t[len(prefix):] if prefix and t.startswith(prefix) else " " + t).encode("utf-8")
            else:
                out[i] = t.replace("▁", " ").encode("utf-8")
        return out
    from .adapters.pretokenized import PretokenizedAdapter

    if isinstance(adapter, PretokenizedAdapter):      # ids: the ?vocab= file's entries
        return dict(adapter._bytes)
    raise TokstatError(f"{adapter.id}: tokstat cannot list the vocabulary of a {adapter.family} tokenizer",
                       fix="pass the tokenizer's own file (hf:, spm:, tiktoken:, wordpiece:)")


def inventory(tokenizers: list[str | Adapter]):
    """One row per (tokenizer, class): entries of that class and their share of the vocabulary, plus
    the shares of space-prefixed entries and of entries holding whitespace (a polars DataFrame)."""
    import polars as pl

    rows = []
    for t in tokenizers:
        a = t if isinstance(t, Adapter) else load_tokenizer(t)
        ents = entries(a)
        n = len(ents)
        counts = dict.fromkeys(CLASSES, 0)
        space = ws = 0
        for b in ents.values():
            c, sp, w = classify(b)
            counts[c] += 1
            space += sp
            ws += w
        for c in CLASSES:
            rows.append({"tokenizer": a.id, "entries": n, "class": c, "count": counts[c], "share": counts[c] / n if n else None})
        rows.append({"tokenizer": a.id, "entries": n, "class": "space-prefixed", "count": space, "share": space / n if n else None})
        rows.append({"tokenizer": a.id, "entries": n, "class": "holds whitespace", "count": ws, "share": ws / n if n else None})
    return pl.DataFrame(rows)


def overlap(tokenizers: list[str | Adapter]):
    """Every ordered pair (A, B): ``jaccard`` |A∩B|/|A∪B| and ``coverage`` |A∩B|/|A| (the share of A's
    entries that B also has), on the entries' bytes (:func:`entries`). A polars DataFrame."""
    import polars as pl

    adapters = [t if isinstance(t, Adapter) else load_tokenizer(t) for t in tokenizers]
    seen: dict[str, str] = {}
    for t, a in zip(tokenizers, adapters):
        if a.id in seen:
            raise TokstatError(f"{a.id} is given twice ({seen[a.id]} and {t if isinstance(t, str) else a.id}): an "
                               "overlap with itself is 1 by definition", fix="give each tokenizer once")
        seen[a.id] = t if isinstance(t, str) else a.id
    sets = {a.id: set(entries(a).values()) for a in adapters}
    rows = []
    for a in sets:
        for b in sets:
            inter = len(sets[a] & sets[b])
            union = len(sets[a] | sets[b])
            rows.append({"a": a, "b": b, "a_entries": len(sets[a]), "b_entries": len(sets[b]), "shared": inter,
                         "jaccard": inter / union if union else None,
                         "coverage": inter / len(sets[a]) if sets[a] else None})
    return pl.DataFrame(rows)


def overlap_figure(df, plt):
    """A heatmap of ``coverage`` (row A, column B) drawn with ``plt`` (matplotlib.pyplot); labels
    are plain text."""
    ids = list(dict.fromkeys(df["a"].to_list()))
    cov = {(a, b): v for a, b, v in zip(df["a"].to_list(), df["b"].to_list(), df["coverage"].to_list())}
    m = [[cov.get((a, b)) or 0.0 for b in ids] for a in ids]
    fig, ax = plt.subplots(figsize=(2 + 0.9 * len(ids), 1.5 + 0.8 * len(ids)))
    im = ax.imshow(m, vmin=0, vmax=1, cmap="viridis")
    ax.set_xticks(range(len(ids)), ids, rotation=40, ha="right")
    ax.set_yticks(range(len(ids)), ids)
    for i in range(len(ids)):
        for j in range(len(ids)):
            ax.text(j, i, f"{m[i][j]:.0%}", ha="center", va="center", color="white" if m[i][j] < 0.6 else "black",
                    fontsize=8)
    ax.set_title("share of the row's vocabulary the column also has")
    fig.colorbar(im, ax=ax, fraction=0.046)
    fig.tight_layout()
    return fig


def overlap_png(df) -> bytes:
    """:func:`overlap_figure` as PNG bytes."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from .io import figure_bytes

    with plt.rc_context({"text.usetex": False, "text.parse_math": False}):
        fig = overlap_figure(df, plt)
        data = figure_bytes(fig, dpi=110)
        plt.close(fig)
    return data
