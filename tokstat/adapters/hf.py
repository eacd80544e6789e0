"""Hugging Face ``tokenizers``: ``tokenizer.json`` files, hub ids (from the local HF cache), WordPiece vocabularies."""

from __future__ import annotations

import hashlib
import json
import os
import re
from itertools import chain
from pathlib import Path

import numpy as np
import tokenizers
from tokenizers import Tokenizer

from ..errors import TokstatError
from ..io import read_input
from ..utf8 import char_to_byte, offsets
from .base import Adapter, byte_piece, native_errors, fix_byte_runs, id_space, flatten, monotone, read_training_metadata, spans_from_lengths, unspelt


def _uses_byte_level(cfg: dict) -> bool:
    def has(node):
        if not node:
            return False
        if node.get("type") == "ByteLevel":
            return True
        return any(has(x) for x in node.get("pretokenizers", []) + node.get("decoders", []))

    return has(cfg.get("pre_tokenizer")) or has(cfg.get("decoder"))


class HFAdapter(Adapter):
    family = "huggingface"

    def __init__(self, tok: Tokenizer, ident: str, file_hash: str):
        self.tok, self.id, self.file_hash = tok, ident, file_hash
        # a file may configure padding and truncation (sentence-transformers ship "Fixed 128"): they
        # would make every segment count the same number of tokens, so they are turned off and said so
        self.neutralised = [f"{k} {v}" for k, v in (("padding", tok.padding), ("truncation", tok.truncation)) if v]
        if tok.padding:
            tok.no_padding()
        if tok.truncation:
            tok.no_truncation()
        if self.neutralised:
            import warnings

            warnings.warn(f"{ident}: the tokenizer file's {' and '.join(n.split()[0] for n in self.neutralised)} "
                          "are turned off for counting (they would pad or cut every segment)", stacklevel=3)
        self.library_version = f"tokenizers-{tokenizers.__version__}"
        cfg = json.loads(tok.to_str())
        model = cfg.get("model", {})
        self.algorithm = model.get("type", "?")
        self.byte_level = _uses_byte_level(cfg)
        if self.byte_level:
            self.algorithm = f"byte-level {self.algorithm}"
        vocab = tok.get_vocab(with_added_tokens=True)
        self.n_ids = id_space(vocab.values(), len(vocab), ident, "the tokenizer's vocabulary")
        self.vocab_size = tok.get_vocab_size(with_added_tokens=False)
        unk = model.get("unk_token")
        self.unk_ids = frozenset({vocab[unk]} if unk in vocab else set())
        self.byte_fallback = np.zeros(self.n_ids, dtype=bool)
        if model.get("byte_fallback"):
            for t, i in vocab.items():
                if byte_piece(t) is not None:
                    self.byte_fallback[i] = True
        self._lens = None
        if self.byte_level:
            lens = np.zeros(self.n_ids, dtype=np.int64)
            added = {a["content"] for a in cfg.get("added_tokens", [])}
            for t, i in vocab.items():  # each ByteLevel symbol stands for one byte ...
                lens[i] = len(t)
            for t in added:             # ... but added tokens are matched as plain text
                if t in vocab:
                    lens[vocab[t]] = len(t.encode())
            self._lens = lens

    def prefix(self, tok: Tokenizer, ident: str) -> HFAdapter:
        """An adapter for ``tok``, a BPE whose vocabulary is ids ``0..n-1`` of this one's (a sweep's
        smaller size): the per-id tables are sliced, not rebuilt."""
        import copy

        n = tok.get_vocab_size(with_added_tokens=False)
        a = copy.copy(self)
        a.tok, a.id, a.n_ids, a.vocab_size = tok, ident, n, n
        a.byte_fallback = self.byte_fallback[:n]
        a._lens = self._lens[:n] if self._lens is not None else None
        a.unk_ids = frozenset(i for i in self.unk_ids if i < n)
        return a

    def decode(self, ids: list[int]) -> str:
        return self.tok.decode(list(ids), skip_special_tokens=False)

    def token_counts(self, texts: list[str], nbytes: np.ndarray | None = None) -> np.ndarray:
        """Tokens per text from the library's batch call, lengths only (the offsets path gives the
        same ids, so the same counts)."""
        with native_errors(self.id):
            encs = self.tok.encode_batch_fast(list(texts), add_special_tokens=False)
        return np.fromiter((len(e.ids) for e in encs), dtype=np.int64, count=len(texts))

    def _encode(self, texts):
        n = len(texts)
        if self._lens is not None:   # byte-level: spans follow from the ids' byte lengths
            ids, counts = flatten([e.ids for e in self.tok.encode_batch_fast(texts, add_special_tokens=False)])
            lens = self._lens[ids]
            starts, ends = spans_from_lengths(lens, counts)
            bad = unspelt(lens, counts, texts)
            off = offsets(counts)
            if not len(bad):
                return ids, counts, starts, ends
            # a normaliser changed the text: those texts take the offsets path
            o_ids, o_counts, o_starts, o_ends = self._encode_offsets([texts[i] for i in bad])
            parts = [(ids[off[i]:off[i + 1]], starts[off[i]:off[i + 1]], ends[off[i]:off[i + 1]]) for i in range(n)]
            oo = offsets(o_counts)
            for k, i in enumerate(bad):
                sl = slice(oo[k], oo[k + 1])
                parts[i] = (o_ids[sl], o_starts[sl], o_ends[sl])
            counts = counts.copy()
            counts[bad] = o_counts
            return (np.concatenate([p[0] for p in parts]), counts, np.concatenate([p[1] for p in parts]),
                    np.concatenate([p[2] for p in parts]))
        return self._encode_offsets(texts)

    def _encode_offsets(self, texts):
        """Spans from the library's character offsets (converted to bytes)."""
        encs = self.tok.encode_batch(texts, add_special_tokens=False)
        ids, counts = flatten([e.ids for e in encs])
        o = np.fromiter(chain.from_iterable(chain.from_iterable(e.offsets for e in encs)), dtype=np.int64,
                        count=2 * len(ids)).reshape(-1, 2)
        seg = np.repeat(np.arange(len(texts)), counts)
        starts, ends = char_to_byte(texts, seg[:, None], o).T     # one code-point table for both ends
        starts, ends = fix_byte_runs(ids, counts, starts, ends, self.byte_fallback)
        base = offsets(np.fromiter((len(t.encode("utf-8")) for t in texts), dtype=np.int64, count=len(texts)))
        gs, ge = monotone(starts + base[seg], ends + base[seg])
        return ids, counts, gs - base[seg], ge - base[seg]


def _load_file(path: Path) -> tuple[Tokenizer, str]:
    """The tokenizer in ``path`` and the sha256 of the very bytes it was built from (read once)."""
    data = read_input(path, "tokenizer file")
    try:
        return Tokenizer.from_str(data.decode("utf-8")), hashlib.sha256(data).hexdigest()
    except UnicodeDecodeError as e:
        raise TokstatError(f"not a valid tokenizer.json: invalid UTF-8 at byte {e.start}", path=path,
                           fix="pass a tokenizer.json saved by the tokenizers library") from None
    except Exception as e:
        raise TokstatError(f"not a valid tokenizer.json ({str(e).splitlines()[0][:120]})", path=path,
                           fix="pass a tokenizer.json saved by the tokenizers library") from None


#: JSON files that sit beside a tokenizer.json without being one
_NOT_TOKENIZERS = re.compile(r"(config|special_tokens_map|added_tokens|vocab|encoder|generation)", re.I)


def hf_label(p: Path) -> str:
    """The id of a tokenizer file: its folder (``hf/qwen3`` for ``qwen3/tokenizer.json``, and for
    ``deepseek-v3/deepseek_tokenizer.json``, alone in its folder), or folder/stem when another
    tokenizer file shares the folder (two files never share an id).

    >>> hf_label(Path("qwen3/tokenizer.json"))
    'qwen3'
    """
    folder = p.parent.name
    if not folder:
        return p.stem
    if p.stem == "tokenizer":
        return folder
    try:
        others = [q for q in p.parent.glob("*.json") if q.name != p.name and not _NOT_TOKENIZERS.search(q.stem)]
    except OSError:
        others = []
    return f"{folder}/{p.stem}" if others else folder


def load_hf(target: str, options: dict[str, str]) -> HFAdapter:
    p = Path(target)
    if os.path.lexists(p) and not p.is_dir() or p.suffix == ".json":
        tok, digest = _load_file(p)
        return read_training_metadata(HFAdapter(tok, f"hf/{hf_label(p)}", digest), p)
    if p.is_dir() and (p / "tokenizer.json").exists():
        return load_hf(str(p / "tokenizer.json"), options)
    # hub id: resolved through the Hugging Face cache (offline with HF_HUB_OFFLINE=1)
    try:
        from huggingface_hub import hf_hub_download

        f = Path(hf_hub_download(target, "tokenizer.json", revision=options.get("revision")))
    except Exception as e:
        raise TokstatError(f"cannot get tokenizer.json for hub id {target!r} ({type(e).__name__})",
                           fix="check the id, run once online to fill the Hugging Face cache, "
                               "or pass hf:PATH/tokenizer.json") from None
    tok, digest = _load_file(f)
    return HFAdapter(tok, f"hf/{target}", digest)


def wordpiece_lowercase_default(tokens: list[str]) -> bool:
    """Lower-case when the vocabulary is uncased: fewer than 1 % of its Latin-letter tokens hold an
    upper-case letter (bert-base-chinese: 2 of 3,693, so ``Hello`` -> ``hello``, not ``[UNK]``;
    bert-base-multilingual-cased: 25 %, so case is kept).

    >>> wordpiece_lowercase_default(["[UNK]", "hello", "##s"]), wordpiece_lowercase_default(["Hello", "World"])
    (True, False)
    """
    upper = lower = 0
    for line in tokens:
        t = line.strip()
        if t.startswith("["):
            continue
        if any("A" <= c <= "Z" for c in t):
            upper += 1
        elif any("a" <= c <= "z" for c in t):
            lower += 1
    return upper < 0.01 * max(upper + lower, 1)


def wordpiece_vocab(text: str) -> dict[str, int]:
    """``vocab.txt`` as ``tokenizers`` reads it (``WordPiece::read_file``): line ``i`` (LF or CRLF
    endings, trailing white space trimmed) is token ``i``; a token given twice keeps its last line.

    >>> wordpiece_vocab("[UNK]\\r\\nhello \\n##s\\n")
    {'[UNK]': 0, 'hello': 1, '##s': 2}
    """
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return {line.rstrip(): i for i, line in enumerate(lines)}


def load_wordpiece(target: str, options: dict[str, str]) -> HFAdapter:
    from tokenizers.implementations import BertWordPieceTokenizer

    p = Path(target)
    data = read_input(p, "vocabulary file")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise TokstatError(f"not a WordPiece vocab.txt: invalid UTF-8 at byte {e.start}", path=p,
                           fix="pass a BERT vocab.txt, one token per line, in UTF-8") from None
    vocab = wordpiece_vocab(text)
    if "lowercase" in options:
        v = options["lowercase"].lower()
        if v not in ("1", "true", "yes", "0", "false", "no"):
            raise TokstatError(f"?lowercase={options['lowercase']} is not true or false", path=p,
                               fix="write ?lowercase=true or ?lowercase=false")
        lower = v in ("1", "true", "yes")
    else:
        lower = wordpiece_lowercase_default(list(vocab))
    try:
        tok = BertWordPieceTokenizer(vocab, lowercase=lower)
    except Exception as e:
        raise TokstatError(f"not a WordPiece vocab.txt ({str(e).splitlines()[0][:120]})", path=p,
                           fix="pass a BERT vocab.txt, one token per line") from None
    a = HFAdapter(tok._tokenizer, f"wordpiece/{p.parent.name or p.stem}{'[lower]' if lower else '[cased]'}",
                  hashlib.sha256(data).hexdigest())
    a.lowercase = lower
    return a
