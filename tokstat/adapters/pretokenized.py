"""Token sequences produced elsewhere: ``ids:PATH?vocab=VOCAB`` scores them like any tokenizer.

For a model whose tokenizer tokstat cannot load (custom code, a service), export what it produced:
a JSONL or Parquet table with one row per text, a ``text`` column (the exact text that was
tokenized) and an ``ids`` column (a list of token ids, special tokens left out) or a ``pieces``
column (a list of token strings). The vocabulary says what each token stands for:

- ``?vocab=tokenizer.json`` (its ``model.vocab`` and ``added_tokens``), ``?vocab=vocab.json``
  (``{"piece": id}``) or ``?vocab=NAME.tiktoken`` (ranks: each id's bytes);
- ``?spelling=byte-level`` (GPT-2's byte alphabet, the default for ``.json`` vocabularies whose
  pieces all use it), ``sentencepiece`` (``▁`` is a space, ``<0xNN>`` a byte; a leading ``▁`` the
  text does not have is SentencePiece's dummy prefix, a token that covers no input) or ``plain``
  (the piece is the text).

Every row is checked: its tokens must spell its text byte for byte, or the row is refused with its
file, line and the fix (nothing is silently recounted). Texts are matched to the corpus's by their
exact (NFC) text; a corpus text the table lacks is an error naming it.
"""

from __future__ import annotations

import hashlib
import json
import unicodedata
from pathlib import Path

import numpy as np

from ..errors import TokstatError
from ..io import read_input
from .base import Adapter, byte_piece, flatten, id_space

SPELLINGS = ("byte-level", "sentencepiece", "plain")


def _vocab(path: Path, spelling: str | None) -> tuple[dict[str, int] | None, dict[int, bytes], str, set[int]]:
    """``(piece -> id or None, id -> bytes, spelling, byte-fallback ids)`` of a vocabulary file."""
    from .base import byte_decoder as _byte_decoder
    from .tiktoken_ import parse_ranks

    data = read_input(path, "vocabulary file")
    if path.suffix == ".tiktoken":
        try:
            ranks = parse_ranks(data)
        except ValueError:
            raise TokstatError("not a tiktoken ranks file", path=path, fix="pass a file of 'base64token rank' lines") from None
        return None, {i: t for t, i in ranks.items()}, "bytes", set()
    try:
        d = json.loads(data.decode("utf-8"))
        if isinstance(d, dict) and isinstance(d.get("model"), dict):
            v = dict(d["model"]["vocab"]) if isinstance(d["model"].get("vocab"), dict) else {
                p[0]: i for i, p in enumerate(d["model"]["vocab"])}
            # added tokens (a special token's string in a text may be encoded as it, as the library does)
            v.update({a["content"]: a["id"] for a in d.get("added_tokens", [])})
        else:
            v = d
        if not (isinstance(v, dict) and all(isinstance(k, str) and isinstance(i, int) for k, i in v.items())):
            raise ValueError("not a mapping of pieces to ids")
    except (ValueError, KeyError, TypeError, AttributeError) as e:
        raise TokstatError(f"not a vocabulary ({str(e)[:100]})", path=path,
                           fix="pass a tokenizer.json, a vocab.json of {\"piece\": id}, or a .tiktoken ranks file") from None
    dec = _byte_decoder()
    byte_ids: set[int] = set()
    if spelling is None:
        spelling = "byte-level" if all(all(c in dec for c in k) for k in v) else "plain"
    out = {}
    for k, i in v.items():
        if spelling == "byte-level" and all(c in dec for c in k):
            out[i] = bytes(dec[c] for c in k)
        elif spelling == "sentencepiece" and byte_piece(k) is not None:
            out[i] = bytes([byte_piece(k)])
            byte_ids.add(i)
        elif spelling == "sentencepiece":
            out[i] = k.replace("▁", " ").encode("utf-8")
        else:
            out[i] = k.encode("utf-8")
    return v, out, spelling, byte_ids


def _rows(path: Path):
    """``(line, text, ids or None, pieces or None)`` of the table (JSONL line numbers, Parquet rows)."""
    if path.suffix.lower() == ".parquet":
        from ..io import parquet_file

        t = parquet_file(path, "token table").read()
        cols = set(t.column_names)
        if "text" not in cols or not ({"ids", "pieces"} & cols):
            raise TokstatError(f"the table has columns {sorted(cols)}: it needs text and ids (or pieces)", path=path,
                               fix="write one row per text with columns text and ids (a list of token ids)")
        d = t.to_pydict()
        for k in range(t.num_rows):
            yield k + 1, d["text"][k], d.get("ids", [None] * t.num_rows)[k], d.get("pieces", [None] * t.num_rows)[k]
        return
    data = read_input(path, "token table")
    for n, line in enumerate(data.splitlines(), 1):
        if not line.strip():
            continue
        try:
            r = json.loads(line)
        except ValueError:
            raise TokstatError("not a JSON object", path=path, line=n,
                               fix='write one {"text": ..., "ids": [...]} object per line') from None
        if not isinstance(r, dict) or "text" not in r or not ({"ids", "pieces"} & set(r)):
            raise TokstatError("a row needs text and ids (or pieces)", path=path, line=n,
                               fix='write one {"text": ..., "ids": [...]} object per line')
        yield n, r["text"], r.get("ids"), r.get("pieces")


class PretokenizedAdapter(Adapter):
    family = "pretokenized"
    algorithm = "given ids"

    def __init__(self, ident, file_hash, table: dict, id_bytes: dict[int, bytes], n_ids: int):
        self.id, self.file_hash, self.table, self._bytes = ident, file_hash, table, id_bytes
        self.library_version = "pretokenized"
        self.vocab_size = len(id_bytes)
        self.n_ids = n_ids
        self.byte_fallback = np.zeros(n_ids, dtype=bool)
        self.spelling = "bytes"

    def _encode(self, texts):
        got = []
        for t in texts:
            r = self.table.get(t)
            if r is None:
                r = self.table.get(unicodedata.normalize("NFC", t))
            if r is None:
                raise TokstatError(f"{self.id}: no token ids for the text {t[:60]!r}{'…' if len(t) > 60 else ''}",
                                   fix="add a row for every text of the corpus (the exact text that was tokenized)")
            got.append(r)
        ids, counts = flatten([r[0] for r in got])
        starts, _ = flatten([r[1] for r in got])
        ends, _ = flatten([r[2] for r in got])
        return ids, counts, starts, ends

    def encodes(self, text: str) -> bool:
        return text in self.table or unicodedata.normalize("NFC", text) in self.table

    def decode(self, ids: list[int]) -> str:
        """The tokens' bytes as text (SentencePiece spelling: its dummy prefix space dropped, as its decoder does)."""
        b = b"".join(self._bytes.get(int(i), b"") for i in ids)
        if self.spelling == "sentencepiece" and b[:1] == b" ":
            b = b[1:]
        return b.decode("utf-8", "replace")


def load_ids(target: str, options: dict[str, str]) -> PretokenizedAdapter:
    path = Path(target)
    if "vocab" not in options:
        raise TokstatError("ids: needs the vocabulary that says what each token stands for", path=path,
                           fix="append ?vocab=PATH (tokenizer.json, vocab.json or .tiktoken)")
    spelling = options.get("spelling")
    if spelling is not None and spelling not in SPELLINGS:
        raise TokstatError(f"unknown spelling {spelling!r}", fix=f"use ?spelling= one of {', '.join(SPELLINGS)}")
    vpath = Path(options["vocab"])
    piece_id, id_bytes, spelling, byte_ids = _vocab(vpath, spelling)
    n_ids = id_space(id_bytes, len(id_bytes), vpath)
    table, h = {}, hashlib.sha256()
    for line, text, ids, pieces in _rows(path):
        if not isinstance(text, str):
            raise TokstatError("text is not a string", path=path, line=line, fix="write the text as a JSON string")
        if ids is None:
            if piece_id is None or not isinstance(pieces, list):
                raise TokstatError("pieces need a vocabulary of pieces (tokenizer.json or vocab.json)", path=path,
                                   line=line, fix="give ids, or ?vocab= a vocab.json / tokenizer.json")
            bad = next((p for p in pieces if p not in piece_id), None)
            if bad is not None:
                raise TokstatError(f"the piece {bad!r} is not in the vocabulary", path=path, line=line,
                                   fix="pass the vocabulary the pieces come from")
            ids = [piece_id[p] for p in pieces]
        if not (isinstance(ids, list) and all(isinstance(i, int) and not isinstance(i, bool) for i in ids)):
            raise TokstatError("ids is not a list of integers", path=path, line=line, fix="write ids as [1, 2, 3]")
        missing = next((i for i in ids if i not in id_bytes), None)
        if missing is not None:
            raise TokstatError(f"token id {missing} is not in the vocabulary (a special token?)", path=path, line=line,
                               fix="leave special tokens out of ids, or pass the vocabulary the ids come from")
        text = unicodedata.normalize("NFC", text)
        want = text.encode("utf-8", "surrogatepass")
        lens = [len(id_bytes[i]) for i in ids]
        spelt = b"".join(id_bytes[i] for i in ids)
        zero_first = spelling == "sentencepiece" and spelt == b" " + want and ids and id_bytes[ids[0]][:1] == b" "
        if spelt != want and not zero_first:
            raise TokstatError(f"the tokens spell {spelt[:40]!r}…, not the row's text {want[:40]!r}…", path=path, line=line,
                               fix="give the ids of exactly this text (no special tokens, no normaliser changes), "
                                   "or the right ?spelling=")
        ends = np.cumsum(lens, dtype=np.int64)
        starts = ends - np.asarray(lens, dtype=np.int64)
        if zero_first:   # SentencePiece's dummy prefix: the first token's space covers no input
            starts, ends = np.maximum(starts - 1, 0), ends - 1
        if text in table and table[text][0] != list(ids):
            raise TokstatError("the same text twice with different ids", path=path, line=line,
                               fix="keep one row per text (a tokenizer gives a text one sequence)")
        table[text] = (list(ids), starts.tolist(), ends.tolist())
        h.update(json.dumps([text, ids]).encode())
    if not table:
        raise TokstatError("the token table has no rows", path=path, fix="write one row per text of the corpus")
    vh = hashlib.sha256(read_input(vpath, "vocabulary file")).hexdigest()
    a = PretokenizedAdapter(f"ids/{path.stem}", hashlib.sha256((h.hexdigest() + vh).encode()).hexdigest(),
                            table, id_bytes, n_ids)
    a.byte_fallback[sorted(byte_ids)] = True
    a.spelling = spelling
    return a
