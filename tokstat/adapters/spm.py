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

    def decode(self, ids: list[int]) -> str:
        return self.sp.decode(list(ids))

    def _encode(self, texts):
        res = self.sp.encode(texts, return_type="offset_mapping", return_bytes=True,
                             num_threads=self.threads or os.cpu_count() or 1)
        ids, counts = flatten([r["ids"] for r in res])
        o = np.fromiter(chain.from_iterable(chain.from_iterable(r["offsets"] for r in res)), dtype=np.int64,
                        count=2 * len(ids)).reshape(-1, 2)
        starts, ends = fix_byte_runs(ids, counts, o[:, 0], o[:, 1], self.byte_fallback)
        return ids, counts, starts, ends


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
