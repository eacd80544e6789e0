"""SentencePiece models (BPE and Unigram), batch-encoded with ``num_threads`` and byte offsets."""

from __future__ import annotations

import hashlib

import os
from itertools import chain
from pathlib import Path

import numpy as np
import sentencepiece as spm

from ..errors import TokstatError
from ..io import read_input
from .base import Adapter, fix_byte_runs, flatten, read_training_metadata


class SPMAdapter(Adapter):
    family = "sentencepiece"

    def __init__(self, sp: spm.SentencePieceProcessor, ident: str, file_hash: str):
        self.sp, self.id, self.file_hash = sp, ident, file_hash
        self.library_version = f"sentencepiece-{spm.__version__}"
        n = sp.get_piece_size()
        self.n_ids = n
        self.byte_fallback = np.array([sp.is_byte(i) for i in range(n)], dtype=bool)
        control = sum(sp.is_control(i) for i in range(n))
        self.vocab_size = n - control
        self.unk_ids = frozenset({sp.unk_id()}) if sp.unk_id() >= 0 else frozenset()
        self.piece_bytes, self.dummy_prefix = _piece_bytes(sp)

    def decode(self, ids: list[int]) -> str:
        return self.sp.decode(list(ids))

    def _encode(self, texts):
        if self.piece_bytes is not None:
            return self._encode_by_pieces(texts)
        return self._encode_offsets(texts)

    def _encode_by_pieces(self, texts):
        """Spans from the pieces' own bytes, for a model that does not normalise (identity normaliser,
        whitespace kept): a piece stands for its bytes (``▁`` a space, ``<0xNN>`` one byte) and the
        first piece carries the dummy-prefix space the text does not have. The ids are the library's,
        asked without offsets (about 2.5× faster). A batch with a text whose pieces do not add up to
        its bytes exactly (a literal ``▁``, an unknown piece) is encoded with the library's offsets."""
        texts = list(texts)
        ids, counts = flatten(self.sp.encode(texts, num_threads=self.threads or os.cpu_count() or 1))
        lens = self.piece_bytes[ids]
        text_bytes = np.fromiter((len(t.encode("utf-8")) for t in texts), dtype=np.int64, count=len(texts))
        dummy = (text_bytes > 0).astype(np.int64) * int(self.dummy_prefix)
        which = np.repeat(np.arange(len(texts)), counts)
        sums = np.bincount(which, weights=lens, minlength=len(texts)).astype(np.int64)
        if (sums - dummy != text_bytes).any() or (lens < 0).any() or any("\u2581" in t for t in texts):
            return self._encode_offsets(texts)
        before = np.concatenate([[0], np.cumsum(sums)[:-1]])      # piece bytes of the earlier texts
        ends = np.cumsum(lens) - before[which] - dummy[which]
        starts = ends - lens
        return ids, counts, np.maximum(starts, 0), np.maximum(ends, 0)

    def _encode_offsets(self, texts):
        res = self.sp.encode(texts, return_type="offset_mapping", return_bytes=True,
                             num_threads=self.threads or os.cpu_count() or 1)
        ids, counts = flatten([r["ids"] for r in res])
        o = np.fromiter(chain.from_iterable(chain.from_iterable(r["offsets"] for r in res)), dtype=np.int64,
                        count=2 * len(ids)).reshape(-1, 2)
        starts, ends = fix_byte_runs(ids, counts, o[:, 0], o[:, 1], self.byte_fallback)
        return ids, counts, starts, ends


def _normalizer(data: bytes) -> dict:
    """``normalizer_spec`` of a model proto (field 3 of ModelProto): name (1), precompiled charsmap
    (2), add_dummy_prefix (3), remove_extra_whitespaces (4), escape_whitespaces (5), rule TSV (6);
    proto defaults where a field is absent. Empty when the proto cannot be read."""
    spec = {"name": "", "charsmap": b"", "dummy": 1, "remove_ws": 1, "escape_ws": 1, "tsv": ""}
    try:
        for field, wt, val in _fields(data):
            if field == 3 and wt == 2:
                for f2, w2, v2 in _fields(val):
                    key = {1: "name", 2: "charsmap", 3: "dummy", 4: "remove_ws", 5: "escape_ws", 6: "tsv"}.get(f2)
                    if key is not None:
                        spec[key] = v2.decode("utf-8", "replace") if key in ("name", "tsv") and isinstance(v2, bytes) else v2
                return spec
    except (IndexError, UnicodeDecodeError):
        return {}
    return spec


def _piece_bytes(sp: spm.SentencePieceProcessor) -> tuple[np.ndarray | None, bool]:
    """Bytes each id stands for in the text, and whether the model adds a dummy-prefix space, for a
    model whose normaliser leaves text as it is (identity, no character map or rules, whitespace kept
    and escaped as ``▁``, not a suffix); ``(None, False)`` for any other model, which keeps the
    library's offsets. Unknown and control pieces are -1 and 0."""
    spec = _normalizer(sp.serialized_model_proto())
    if not spec or spec["name"] != "identity" or spec["charsmap"] or spec["tsv"] or spec["remove_ws"] \
            or not spec["escape_ws"]:
        return None, False
    n = sp.get_piece_size()
    out = np.empty(n, dtype=np.int64)
    for i in range(n):
        if sp.is_unknown(i) or sp.is_unused(i):
            out[i] = -1
        elif sp.is_control(i):
            out[i] = 0
        elif sp.is_byte(i):
            out[i] = 1
        else:
            out[i] = len(sp.id_to_piece(i).replace("\u2581", " ").encode("utf-8"))
    return out, bool(spec["dummy"])


def _varint(buf: bytes, i: int) -> tuple[int, int]:
    shift = val = 0
    while True:
        b = buf[i]
        i += 1
        val |= (b & 0x7F) << shift
        if not b & 0x80:
            return val, i
        shift += 7


def _fields(buf: bytes):
    """Yield ``(field, wire_type, value)`` of a protobuf message: ints for varints, bytes otherwise."""
    i = 0
    while i < len(buf):
        key, i = _varint(buf, i)
        field, wt = key >> 3, key & 7
        if wt == 0:
            val, i = _varint(buf, i)
        elif wt == 2:
            ln, i = _varint(buf, i)
            val, i = buf[i:i + ln], i + ln
        elif wt in (1, 5):
            n = 8 if wt == 1 else 4
            val, i = buf[i:i + n], i + n
        else:
            return
        yield field, wt, val


def _algorithm(data: bytes) -> str:
    """Read ``trainer_spec.model_type`` from the model proto without protobuf: field 2 of
    ModelProto is TrainerSpec, whose field 3 is model_type (1 UNIGRAM, 2 BPE, 3 WORD, 4 CHAR;
    absent means the default, UNIGRAM)."""
    try:
        for field, wt, val in _fields(data):
            if field == 2 and wt == 2:
                for f2, w2, v2 in _fields(val):
                    if f2 == 3 and w2 == 0:
                        return {1: "unigram", 2: "bpe", 3: "word", 4: "char"}.get(v2, "?")
                return "unigram"
    except IndexError:
        pass
    return "unigram"


def load_spm(target: str, options: dict[str, str]) -> SPMAdapter:
    p = Path(target)
    data = read_input(p, "SentencePiece model")
    sp = spm.SentencePieceProcessor()
    try:
        sp.LoadFromSerializedProto(data)
    except Exception as e:
        raise TokstatError(f"not a SentencePiece model ({str(e).splitlines()[0][:120]})", path=p,
                           fix="pass a .model file written by spm_train") from None
    generic = p.name.split(".")[0] in ("tokenizer", "spiece", "sentencepiece")   # tokenizer.model.v1 too
    label = p.parent.name if generic else p.stem
    ad = SPMAdapter(sp, f"spm/{label}", hashlib.sha256(data).hexdigest())
    ad.algorithm = f"sentencepiece {_algorithm(data)}"
    return read_training_metadata(ad, p)
