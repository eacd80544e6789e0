"""Tokenizers trained by tokstat on the corpus being analysed (train split only).

``train:bpe:N`` byte-level BPE (GPT-2 style, lossless), ``train:wordpiece:N`` (BERT pre-tokenizer),
``train:unigram:N`` (HF Unigram with Metaspace), ``train:spm-bpe:N`` / ``train:spm-unigram:N``
(SentencePiece, byte fallback, character coverage 0.9995).
"""

from __future__ import annotations

import hashlib
import io

import sentencepiece as spm
from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers

from .adapters.base import Adapter
from .adapters.hf import HFAdapter
from .adapters.spm import SPMAdapter
from .errors import TokstatError
from .split import HELDOUT, is_heldout

ALGOS = ("bpe", "byte-bpe", "wordpiece", "unigram", "spm-bpe", "spm-unigram")


def training_texts(corpus, *, fraction: float = HELDOUT, seed: int = 0):
    for seg in corpus:
        if not is_heldout(seg.id, fraction, seed):
            for t in seg.texts.values():
                if t.strip():
                    yield t


def train_hf(algo: str, vocab_size: int, texts) -> Tokenizer:
    if algo in ("bpe", "byte-bpe"):
        tok = Tokenizer(models.BPE())
        tok.normalizer = normalizers.NFC()
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        tok.decoder = decoders.ByteLevel()
        tr = trainers.BpeTrainer(vocab_size=vocab_size, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                 show_progress=False)
    elif algo == "wordpiece":
        tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
        tok.normalizer = normalizers.BertNormalizer(lowercase=False)
        tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
        tok.decoder = decoders.WordPiece()
        tr = trainers.WordPieceTrainer(vocab_size=vocab_size, special_tokens=["[UNK]"], show_progress=False)
    else:
        tok = Tokenizer(models.Unigram())
        tok.normalizer = normalizers.NFC()
        tok.pre_tokenizer = pre_tokenizers.Metaspace()
        tok.decoder = decoders.Metaspace()
        tr = trainers.UnigramTrainer(vocab_size=vocab_size, unk_token="<unk>", special_tokens=["<unk>"],
                                     show_progress=False)
    tok.train_from_iterator(texts, trainer=tr)
    return tok


def train_spm(algo: str, vocab_size: int, texts) -> spm.SentencePieceProcessor:
    buf = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(texts), model_writer=buf, vocab_size=vocab_size,
                                   model_type=algo.split("-")[1], byte_fallback=True,
                                   character_coverage=0.9995, hard_vocab_limit=False, num_threads=1,
                                   minloglevel=2)
    return spm.SentencePieceProcessor(model_proto=buf.getvalue())


def train_from_spec(target: str, opts: dict[str, str], corpus) -> Adapter:
    """``train:ALGO:SIZE`` -> an adapter trained on the corpus's train split (held-out 10 %, seed 0)."""
    algo, _, size = target.partition(":")
    if algo not in ALGOS or not size.isdigit():
        raise TokstatError(f"bad training spec train:{target}", fix=f"write train:ALGO:SIZE, ALGO in {', '.join(ALGOS)}")
    if corpus is None:
        raise TokstatError("train: tokenizers need a corpus to train on", fix="pass the corpus to compare()")
    n = int(size)
    fraction, seed = float(opts.get("heldout", HELDOUT)), int(opts.get("seed", 0))
    texts = list(training_texts(corpus, fraction=fraction, seed=seed))
    if not texts:
        raise TokstatError("no training text in the corpus", fix="use a corpus with non-empty segments")
    digest = hashlib.sha256("\n".join(texts).encode()).hexdigest()
    if algo.startswith("spm-"):
        a = SPMAdapter(train_spm(algo, n, texts), f"train/{algo}-{n}", digest)
        a.algorithm = f"sentencepiece {algo[4:]}"
    else:
        a = HFAdapter(train_hf(algo, n, texts), f"train/{algo}-{n}", digest)
    a.heldout = (fraction, seed)
    return a
