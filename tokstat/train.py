"""Tokenizers trained by tokstat on the corpus being analysed (train split only).

``train:bpe:N`` byte-level BPE (GPT-2 style, lossless), ``train:wordpiece:N`` (BERT pre-tokenizer),
``train:unigram:N`` (a tokenizers Unigram model, vocabulary from SentencePiece's deterministic trainer), ``train:spm-bpe:N`` / ``train:spm-unigram:N``
(SentencePiece, byte fallback, character coverage 0.9995).
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import random
import zlib
from dataclasses import dataclass
from pathlib import Path

import sentencepiece as spm
from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers

from .adapters.base import Adapter
from .adapters.hf import HFAdapter
from .adapters.spm import SPMAdapter
from .errors import TokstatError
from .ranges import check_vocab
from .io import write_files
from ._version import __version__
from .mix import Mix
from .mix import parse as parse_mix
from .split import HELDOUT, Split

ALGOS = ("bpe", "byte-bpe", "wordpiece", "unigram", "spm-bpe", "spm-unigram", "parity-bpe")
#: the algorithms that pre-tokenize with a split pattern before byte-level BPE (``--pretokenizer``)
BYTE_LEVEL = ("bpe", "byte-bpe", "parity-bpe")
#: DeepSeek-V3's pre-tokenizer (its ``tokenizer.json``): digits in threes, CJK runs, then letters with marks
_DEEPSEEK_V3 = (r"\p{N}{1,3}", "[一-龥\u3040-ゟ゠-ヿ]+",
                "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+"
                "| ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+")
#: pre-tokenizers of byte-level BPE training, by name: the split patterns applied in turn before the
#: byte-level mapping. ``o200k`` (the default) and ``deepseek-v3`` keep combining marks (\p{M}) with
#: their letter, as current models do; ``llama3`` (cl100k_base's rule, Llama 3, Qwen) lets a letter
#: run stop at a mark, which then starts the next piece; ``gpt2`` (the byte-level default of 2019,
#: kept to reproduce older results) cuts a mark off into a piece of its own. docs/training.md.
PRETOKENIZERS = {"o200k": None, "llama3": None, "deepseek-v3": _DEEPSEEK_V3, "gpt2": None}
DEFAULT_PRETOKENIZER = "o200k"


def pretokenizer_patterns(name: str) -> tuple[str, ...] | None:
    """The split patterns of a named pre-tokenizer (None: GPT-2's, built into ``ByteLevel``).

    >>> len(pretokenizer_patterns("deepseek-v3")), pretokenizer_patterns("gpt2")
    (3, None)
    """
    from .adapters.tiktoken_ import PATTERNS

    name = check_pretokenizer(name)
    return {"o200k": (PATTERNS["o200k_base"],), "llama3": (PATTERNS["llama3"],), "deepseek-v3": _DEEPSEEK_V3,
            "gpt2": None}[name]


def check_pretokenizer(name: str) -> str:
    """The name, or one error naming the choices.

    >>> check_pretokenizer("gpt-2")
    Traceback (most recent call last):
    ...
    tokstat.errors.TokstatError: unknown pre-tokenizer 'gpt-2' (fix: use one of o200k, llama3, deepseek-v3, gpt2 (default o200k))
    """
    if name not in PRETOKENIZERS:
        raise TokstatError(f"unknown pre-tokenizer {name!r}",
                           fix=f"use one of {', '.join(PRETOKENIZERS)} (default {DEFAULT_PRETOKENIZER})")
    return name


def byte_level_pretokenizer(name: str = DEFAULT_PRETOKENIZER):
    """The ``tokenizers`` pre-tokenizer of byte-level BPE training: the named split patterns, then
    the byte-level mapping (GPT-2's pattern is ``ByteLevel``'s own)."""
    from tokenizers import Regex

    pats = pretokenizer_patterns(name)
    if pats is None:
        return pre_tokenizers.ByteLevel(add_prefix_space=False)
    return pre_tokenizers.Sequence([pre_tokenizers.Split(Regex(p), behavior="isolated", invert=False) for p in pats]
                                   + [pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
#: parity-aware BPE: the share of the training segments set aside as its parallel dev set
PARITY_DEV = 0.1


def pretokenizer_for(algo: str, name: str | None) -> str | None:
    """The pre-tokenizer an algorithm trains with: byte-level BPE's named one (default
    :data:`DEFAULT_PRETOKENIZER`), None for the others (WordPiece splits words at spaces and
    punctuation, Unigram at spaces, SentencePiece by its own rules); naming one for them is an error."""
    if algo not in BYTE_LEVEL:
        if name is not None:
            raise TokstatError(f"--pretokenizer applies to byte-level BPE ({', '.join(BYTE_LEVEL)}), not {algo}",
                               fix="drop --pretokenizer")
        return None
    return check_pretokenizer(name or DEFAULT_PRETOKENIZER)


def pretok_suffix(name: str | None) -> str:
    """The id suffix of a non-default pre-tokenizer: ``-pre-gpt2``; ``""`` for the default."""
    return f"-pre-{name}" if name and name != DEFAULT_PRETOKENIZER else ""


def training_texts(corpus, *, split: Split = Split(), languages: list[str] | None = None,
                   mix: dict[str, float] | Mix | None = None, mix_unit: str = "content") -> list[str]:
    """Texts of the train split (segments not held out), all languages or ``languages``.

    ``mix`` (:mod:`tokstat.mix`; shares of content by default) reweights languages: each language's
    texts are repeated or subsampled (seeded) until it holds its share of the training text. A
    share of content becomes a share of characters through the aligned training segments (where
    every mix language has text): ``{"zh": 0.5, "en": 0.5}`` keeps the parallel corpus as it is.
    Shares of characters or bytes are met in that unit; token shares depend on the tokenizer being
    trained and are refused.
    """
    return _training_texts(corpus, split=split, languages=languages, mix=parse_mix(mix, mix_unit))[0]


def _keep_probability(corpus, *, split: Split, languages, mix, sample_bytes: float) -> dict[str, float]:
    """Per language, the probability a document is kept so that about ``sample_bytes`` bytes of
    training text remain (split by the mix's shares, else in the corpus's own proportions): one
    counting pass over the corpus."""
    nbytes: dict[str, int] = {}
    for seg in corpus:
        if split.is_heldout(seg.id):
            continue
        for lang, t in seg.texts.items():
            if (languages is None or lang in languages) and t.strip():
                nbytes[lang] = nbytes.get(lang, 0) + len(t.encode("utf-8", "surrogatepass"))
    total = sum(nbytes.values())
    if not total:
        return {}
    if mix is None:
        return {lang: min(1.0, sample_bytes / total) for lang in nbytes}
    return {lang: min(1.0, sample_bytes * mix.shares.get(lang, 0.0) / b) if b else 0.0 for lang, b in nbytes.items()}


def _kept(seed: int, sid: str, p: float) -> bool:
    """A seeded, order-independent Bernoulli draw for document ``sid``."""
    if p >= 1:
        return True
    return zlib.crc32(f"{seed}:sample:{sid}".encode("utf-8", "surrogatepass")) / 2**32 < p


def _training_texts(corpus, *, split: Split, languages, mix, keep=None,
                    sample_bytes: float | None = None) -> tuple[list[str], int, int]:
    """(texts, segments, held-out segments) in one pass over the corpus; held-out segments are
    appended to ``keep`` when it is a list. ``sample_bytes`` bounds the text held in memory: each
    document (training or held out) is kept with a per-language probability
    (:func:`_keep_probability`, one extra counting pass), seeded by the split's seed."""
    per: dict[str, list[str]] = {}
    aligned: dict[str, list[int]] = {}      # chars and bytes per language over segments every mix language has
    n = held = 0
    if mix is not None and mix.unit == "tokens":
        raise TokstatError("a mix in tokens cannot steer training: the tokens depend on the tokenizer being trained",
                           fix="state the training mix in content (the default), chars or bytes")
    if sample_bytes is not None and not (isinstance(sample_bytes, (int, float)) and sample_bytes > 0
                                         and sample_bytes < float("inf")):
        raise TokstatError(f"--sample-bytes must be a finite positive number of bytes, got {sample_bytes}",
                           fix="e.g. --sample-bytes 2e9")
    prob = (_keep_probability(corpus, split=split, languages=languages, mix=mix, sample_bytes=sample_bytes)
            if sample_bytes else None)
    for seg in corpus:
        n += 1
        if prob is not None and not any(_kept(split.seed, seg.id, prob.get(lang, 0.0)) for lang in seg.texts):
            continue
        if split.is_heldout(seg.id):
            held += 1
            if keep is not None:
                keep.append(seg)
            continue
        for lang, t in seg.texts.items():
            if (languages is None or lang in languages) and t.strip():
                per.setdefault(lang, []).append(t)
        if mix is not None and all((seg.texts.get(k) or "").strip() for k in mix.shares):
            for k in mix.shares:
                a = aligned.setdefault(k, [0, 0])
                a[0] += len(seg.texts[k])
                a[1] += len(seg.texts[k].encode("utf-8", "surrogatepass"))
    if not mix:
        return [t for lang in sorted(per) for t in per[lang]], n, held
    unknown = [k for k in mix.shares if k not in per]
    if unknown:
        raise TokstatError(f"--mix names languages without training text: {', '.join(sorted(unknown))}",
                           fix=f"use languages of the corpus: {', '.join(sorted(per))}")
    if mix.unit == "content" and not aligned:
        raise TokstatError("a mix of content needs segments with text in every mix language (content is measured on "
                           "aligned text)", fix="state the mix in chars or bytes (--mix-unit chars)")
    unit = "bytes" if mix.unit == "bytes" else "chars"
    size = (lambda t: len(t.encode("utf-8", "surrogatepass"))) if unit == "bytes" else len
    target = (mix.shares_in(unit, {k: {"chars": c, "bytes": b} for k, (c, b) in aligned.items()})
              if mix.unit == "content" else dict(mix.shares))    # shares of chars or bytes are met as stated
    total = sum(size(t) for k in mix.shares for t in per[k])
    rng = random.Random(split.seed)
    out = []
    for lang in sorted(target):
        want = total * target[lang]
        pool = per[lang][:]
        rng.shuffle(pool)
        got, i = 0, 0
        while got < want and pool:
            t = pool[i % len(pool)]
            out.append(t)
            got += size(t)
            i += 1
    rng.shuffle(out)
    return out, n, held


def parity_texts(corpus, *, split: Split, languages) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """Per language, the training texts and the parity dev texts: the dev set is the segments of the
    train side that a second seeded split (:data:`PARITY_DEV`, salt ``seed + 1``) holds out, so it is
    disjoint from both the training text and the evaluation segments. Parallel corpora only."""
    if corpus.kind != "parallel":
        raise TokstatError("parity-aware BPE balances languages on parallel dev text; this corpus is documents",
                           fix="train it on a parallel corpus (or train plain bpe on the documents)")
    dev_split = Split(PARITY_DEV, split.seed + 1)
    train: dict[str, list[str]] = {}
    dev: dict[str, list[str]] = {}
    for seg in corpus:
        if split.is_heldout(seg.id):
            continue
        into = dev if dev_split.is_heldout(seg.id) else train
        for lang, t in seg.texts.items():
            if (languages is None or lang in languages) and t.strip():
                into.setdefault(lang, []).append(t)
    langs = sorted(set(train) & set(dev))
    if len(langs) < 2:
        raise TokstatError("parity-aware BPE needs at least two languages with training and dev text",
                           fix="use a parallel corpus of two or more languages with enough segments")
    return {k: train[k] for k in langs}, {k: dev[k] for k in langs}


#: parity-aware BPE's settings and their defaults (``ParityBpeTrainer``'s, and ``balance``: what the
#: languages are balanced against — the parallel ``dev`` split, or target ratios from parallel ``bytes``)
PARITY_DEFAULTS = {"variant": "base", "global_merges": 0, "window_size": 100, "alpha": 2.0, "balance": "dev"}


def parity_options(opts: dict | None) -> dict:
    """Parity-aware BPE settings (strings from a spec or ``--parity``, or values), checked, with
    their defaults.

    >>> parity_options({"variant": "window", "global_merges": "500"})["global_merges"]
    500
    >>> parity_options({"variant": "fast"})
    Traceback (most recent call last):
    ...
    tokstat.errors.TokstatError: parity-aware BPE: variant must be base or window, not 'fast' (fix: e.g. variant=window)
    """
    out = dict(PARITY_DEFAULTS)
    for k, v in (opts or {}).items():
        if k not in PARITY_DEFAULTS:
            raise TokstatError(f"parity-aware BPE has no setting {k!r}",
                               fix=f"use {', '.join(PARITY_DEFAULTS)} (e.g. variant=window,global_merges=500)")
        try:
            if k in ("variant", "balance"):
                choices = ("base", "window") if k == "variant" else ("dev", "bytes")
                if v not in choices:
                    raise TokstatError(f"parity-aware BPE: {k} must be {' or '.join(choices)}, not {v!r}",
                                       fix=f"e.g. {k}={choices[1]}")
                out[k] = v
            elif k == "alpha":
                out[k] = float(v)
                if not (out[k] > 0 and out[k] < float("inf")):
                    raise ValueError
            else:
                out[k] = int(v)
                if out[k] < (0 if k == "global_merges" else 1):
                    raise ValueError
        except (TypeError, ValueError):
            raise TokstatError(f"parity-aware BPE: bad {k}={v!r}", fix="global_merges: a whole number ≥ 0, "
                               "window_size: ≥ 1, alpha: a positive number") from None
    return out


def parity_suffix(opts: dict | None) -> str:
    """The id suffix of non-default parity settings (``-window-g500-bytes``), so ids stay distinct.

    >>> parity_suffix({"variant": "window", "balance": "bytes"}), parity_suffix(None)
    ('-window-bytes', '')
    """
    o = parity_options(opts)
    parts = [o["variant"]] if o["variant"] != "base" else []
    parts += [f"g{o['global_merges']}"] if o["global_merges"] else []
    parts += [f"w{o['window_size']}"] if o["window_size"] != 100 else []
    parts += [f"a{o['alpha']:g}"] if o["alpha"] != 2.0 else []
    parts += [o["balance"]] if o["balance"] != "dev" else []
    return "".join(f"-{p}" for p in parts)


def train_parity(vocab_size: int, train: dict[str, list[str]], dev: dict[str, list[str]] | None, *,
                 variant: str = "base", global_merges: int = 0, window_size: int = 100, alpha: float = 2.0,
                 ratio: list[float] | None = None, pretokenizer: str = DEFAULT_PRETOKENIZER) -> Tokenizer:
    """Parity-aware BPE (Foroutan et al. 2025; ``tokenizers.trainers.ParityBpeTrainer``): one training
    iterator per language, each merge chosen for the language whose dev text is compressed worst
    (or, with ``ratio`` and no dev text, whose compression is furthest below its target ratio). The
    256-byte alphabet is always included (without it, bytes unseen in training would be dropped on
    encode: text lost); the vocabulary is the alphabet plus ``vocab_size`` − 256 merges."""
    tok = Tokenizer(models.BPE())
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = byte_level_pretokenizer(pretokenizer)
    tok.decoder = decoders.ByteLevel()
    alphabet = pre_tokenizers.ByteLevel.alphabet()
    tr = trainers.ParityBpeTrainer(num_merges=max(0, vocab_size - len(alphabet)), variant=variant,
                                   global_merges=global_merges, window_size=window_size, alpha=alpha,
                                   initial_alphabet=alphabet, show_progress=False)
    langs = sorted(train)
    if dev is not None:
        tr.train_from_iterator(tok, [iter(train[k]) for k in langs], dev_iterators=[iter(dev[k]) for k in langs])
    else:
        tr.train_from_iterator(tok, [iter(train[k]) for k in langs], ratio=ratio)
    return tok


def train_hf(algo: str, vocab_size: int, texts, pretokenizer: str = DEFAULT_PRETOKENIZER) -> Tokenizer:
    """A ``tokenizers`` model trained on ``texts``; byte-level BPE pre-tokenizes with ``pretokenizer``
    (:data:`PRETOKENIZERS`)."""
    if algo in ("bpe", "byte-bpe"):
        tok = Tokenizer(models.BPE())
        tok.normalizer = normalizers.NFC()
        tok.pre_tokenizer = byte_level_pretokenizer(pretokenizer)
        tok.decoder = decoders.ByteLevel()
        tr = trainers.BpeTrainer(vocab_size=vocab_size, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                 show_progress=False)
    elif algo == "wordpiece":
        # HF's WordPieceTrainer (and BpeTrainer with a "##" prefix) cut ties at the vocabulary boundary
        # in hash order, so two runs can differ. The vocabulary is taken from SentencePiece's
        # deterministic BPE instead: a piece that starts a word ("▁de") becomes "de", a piece inside
        # a word becomes "##..."; every character gets both forms so no word is [UNK] by construction.
        sp = spm.SentencePieceProcessor(model_proto=train_spm("spm-bpe", vocab_size, texts, byte_fallback=False,
                                                             label="wordpiece (from SentencePiece BPE)"))
        tokens: list[str] = ["[UNK]"]
        seen = set(tokens)
        for i in range(sp.get_piece_size()):
            if sp.is_control(i) or sp.is_unknown(i):
                continue
            piece = sp.id_to_piece(i)
            forms = [piece[1:]] if piece.startswith("\u2581") else ["##" + piece]
            if len(piece.lstrip("\u2581")) == 1:
                forms = [piece.lstrip("\u2581"), "##" + piece.lstrip("\u2581")]
            for f in forms:
                if f and f != "##" and f not in seen:
                    seen.add(f)
                    tokens.append(f)
        tok = Tokenizer(models.WordPiece(vocab={t: i for i, t in enumerate(tokens[:max(vocab_size, 1)])},
                                         unk_token="[UNK]"))
        tok.normalizer = normalizers.BertNormalizer(lowercase=False)
        tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
        tok.decoder = decoders.WordPiece()
        return tok
    else:
        # HF's UnigramTrainer is not deterministic (scores differ between runs by up to 1e-2 even
        # single-threaded), so the Unigram vocabulary is trained by SentencePiece (deterministic) and
        # loaded into a tokenizers Unigram model with a Metaspace pre-tokenizer.
        sp = spm.SentencePieceProcessor(model_proto=train_spm("spm-unigram", vocab_size, texts))
        vocab = [(sp.id_to_piece(i), 0.0 if sp.is_control(i) else sp.get_score(i)) for i in range(sp.get_piece_size())]
        tok = Tokenizer(models.Unigram(vocab, unk_id=sp.unk_id(), byte_fallback=True))
        tok.normalizer = normalizers.NFC()
        tok.pre_tokenizer = pre_tokenizers.Metaspace()
        tok.decoder = decoders.Sequence([decoders.ByteFallback(), decoders.Metaspace()])
        return tok
    tok.train_from_iterator(texts, trainer=tr)
    return tok


def train_spm(algo: str, vocab_size: int, texts, byte_fallback: bool = True, label: str | None = None) -> bytes:
    """The serialized SentencePiece model (single-threaded, so the bytes are deterministic);
    ``label`` names the vocabulary in errors (the algorithm the user asked for)."""
    buf = io.BytesIO()
    try:
        _spm_train(buf, algo, vocab_size, texts, byte_fallback)
    except RuntimeError as e:
        msg = str(e).split("] ", 1)[-1].splitlines()[0]
        raise TokstatError(f"SentencePiece cannot train a {vocab_size}-token {label or algo} vocabulary: {msg}",
                           fix="use a larger vocabulary size (each character of the corpus needs a piece) "
                               "or a larger corpus") from None
    return buf.getvalue()


def _spm_train(buf, algo, vocab_size, texts, byte_fallback):
    spm.SentencePieceTrainer.train(sentence_iterator=iter(texts), model_writer=buf, vocab_size=vocab_size,
                                   model_type=algo.split("-")[1], byte_fallback=byte_fallback,
                                   character_coverage=0.9995, hard_vocab_limit=False, num_threads=1,
                                   normalization_rule_name="identity",
                                   minloglevel=2)


def canonical_json(tok: Tokenizer) -> bytes:
    """``tokenizer.json`` with the vocabulary ordered by id (the library writes some in hash order)."""
    cfg = json.loads(tok.to_str())
    vocab = cfg.get("model", {}).get("vocab")
    if isinstance(vocab, dict):
        cfg["model"]["vocab"] = dict(sorted(vocab.items(), key=lambda kv: kv[1]))
    return (json.dumps(cfg, indent=2, ensure_ascii=False) + "\n").encode()


@dataclass
class Trained:
    adapter: Adapter
    metadata: dict
    files: list[Path]
    heldout_segments: list | None = None
    training_texts: list | None = None


def train(corpus, algo: str, vocab_size: int, *, languages: list[str] | None = None,
          mix: dict[str, float] | Mix | None = None, mix_unit: str = "content", out: str | os.PathLike | None = None,
          split: Split | None = None, keep_heldout: bool = False, keep_texts: bool = False,
          sample_bytes: float | None = None, parity: dict | None = None,
          pretokenizer: str | None = None) -> Trained:
    """Train a tokenizer on the train split of ``split`` (default ``Split(0.1, seed=0)``; its seed also
    seeds the ``mix`` resampling, :func:`training_texts`); optionally save it (``tokenizer.json`` or ``tokenizer.model``) with
    ``metadata.json`` (corpus signature, split, settings). Same inputs, byte-identical files. The
    adapter carries ``split``: :func:`tokstat.compare` scores it on exactly those held-out segments.
    ``parity``: parity-aware BPE's settings (:data:`PARITY_DEFAULTS`, :func:`parity_options`).
    ``pretokenizer``: how byte-level BPE cuts text before merging (:data:`PRETOKENIZERS`, default
    :data:`DEFAULT_PRETOKENIZER`); a non-default one is named in the id (``train/bpe-8000-pre-gpt2``)
    and every choice in the metadata and the tokenizer's signature."""
    split = Split() if split is None else split
    pretok = pretokenizer_for(algo, pretokenizer)
    if parity and algo != "parity-bpe":
        raise TokstatError(f"parity settings ({', '.join(parity)}) apply to parity-bpe, not {algo}",
                           fix="drop them, or use --algo parity-bpe")
    popts = parity_options(parity) if algo == "parity-bpe" else None
    mix = parse_mix(mix, mix_unit)
    if algo not in ALGOS:
        raise TokstatError(f"unknown training algorithm {algo!r}", fix=f"use one of {', '.join(ALGOS)}")
    if vocab_size < 1:
        raise TokstatError("vocabulary size must be positive", fix="e.g. --vocab-size 32000")
    check_vocab(vocab_size, f"train:{algo}:{vocab_size}")
    kept = [] if keep_heldout else None
    if algo == "parity-bpe" and (mix is not None or sample_bytes):
        raise TokstatError("parity-aware BPE balances the languages itself: --mix and --sample-bytes do not apply",
                           fix="drop --mix/--sample-bytes, or train plain bpe with them")
    texts, n_segments, n_held = _training_texts(corpus, split=split, languages=languages, mix=mix, keep=kept,
                                                sample_bytes=sample_bytes)
    if not texts:
        raise TokstatError("no training text in the corpus", fix="use a corpus with non-empty segments")
    digest = hashlib.sha256("\n".join(texts).encode() + (f"\n\x00pre:{pretok}".encode() if pretok else b"")).hexdigest()
    ident = f"train/{algo}-{vocab_size}" + (parity_suffix(popts) if popts else "") + pretok_suffix(pretok) + (
        f"-mix-{mix.signature()}" if mix else "") + (f"-sample{sample_bytes:.3g}" if sample_bytes else "")
    ratio = None
    if algo == "parity-bpe":
        ptrain, pdev = parity_texts(corpus, split=split, languages=languages)
        if popts["balance"] == "bytes":
            # no dev text: target compression ratios proportional to each language's bytes for the same
            # (parallel) content, the trainer's documented way to compare scripts; dev text goes to training
            ptrain = {k: ptrain[k] + pdev[k] for k in ptrain}
            nbytes = {k: sum(len(t.encode()) for t in v) for k, v in ptrain.items()}
            ratio = [nbytes[k] / min(nbytes.values()) for k in sorted(ptrain)]
            pdev = None
        texts = [t for k in sorted(ptrain) for t in ptrain[k]]
        digest = hashlib.sha256(("\n".join(texts) + ("\n\x00dev\n" + "\n".join(
            t for k in sorted(pdev) for t in pdev[k]) if pdev else "") + f"\n\x00pre:{pretok}").encode()).hexdigest()
        tok = train_parity(vocab_size, ptrain, pdev, variant=popts["variant"], global_merges=popts["global_merges"],
                           window_size=popts["window_size"], alpha=popts["alpha"], ratio=ratio, pretokenizer=pretok)
        a = HFAdapter(tok, ident, digest)
        payload, fname = canonical_json(tok), "tokenizer.json"
    elif algo.startswith("spm-"):
        model = train_spm(algo, vocab_size, texts)
        a = SPMAdapter(spm.SentencePieceProcessor(model_proto=model), ident, digest)
        a.algorithm = f"sentencepiece {algo[4:]}"
        payload, fname = model, "tokenizer.model"
    else:
        tok = train_hf(algo, vocab_size, texts, pretok or DEFAULT_PRETOKENIZER)
        a = HFAdapter(tok, ident, digest)
        payload, fname = canonical_json(tok), "tokenizer.json"
    a.split = split
    a.pretokenizer = pretok
    a.trained_on = f"{corpus.name}@{corpus.fingerprint()[:8]}"
    meta = {"corpus": a.trained_on, "algo": algo, "vocab_size": vocab_size,
            "actual_vocab_size": a.vocab_size, "languages": languages or sorted(corpus.languages),
            "mix": {"shares": dict(mix.shares), "unit": mix.unit} if mix else None,
            "split": {"heldout_fraction": split.fraction, "seed": split.seed, "segments": n_segments,
                      "train_segments": n_segments - n_held, "heldout_segments": n_held,
                      "rule": "held out when sha256(f'{seed}:{segment_id}')[:8] / 2**64 < fraction"},
            "training_texts": len(texts), "training_sha256": digest, "tokenizer_id": ident,
            "sample_bytes": sample_bytes, "pretokenizer": pretok,
            "parity": ({**popts, **({"dev_fraction": PARITY_DEV, "dev_seed": split.seed + 1,
                                     "rule": "dev = train-side segments held out by Split(dev_fraction, dev_seed)"}
                                    if popts["balance"] == "dev" else
                                    {"ratio": dict(zip(sorted(ptrain), ratio)),
                                     "rule": "ratio = each language's training bytes / the fewest (parallel text)"})}
                       if algo == "parity-bpe" else None),
            "files": {fname: hashlib.sha256(payload).hexdigest()},
            "library": a.library_version, "tokstat": __version__}
    files = []
    if out is not None:
        d = Path(out)
        # both files appear together or not at all: written to a temporary folder, then renamed into place
        write_files(d, {fname: payload, "metadata.json": (json.dumps(meta, indent=2, ensure_ascii=False,
                                                                      sort_keys=True) + "\n").encode()})
        files = [d / fname, d / "metadata.json"]
    return Trained(a, meta, files, kept, texts if keep_texts else None)


def parse_train_spec(target: str, opts: dict[str, str]) -> tuple[str, int, Split, dict | None, str | None]:
    """``train:ALGO:SIZE[?heldout=0.1&seed=0]`` (the part after ``train:``) -> (algo, size, split,
    parity settings, pre-tokenizer); ``train:parity-bpe:SIZE`` also takes ``variant``,
    ``global_merges``, ``window_size``, ``alpha`` and ``balance`` (:data:`PARITY_DEFAULTS`); byte-level
    BPE takes ``pre`` (:data:`PRETOKENIZERS`).

    >>> parse_train_spec("bpe:8000", {"seed": "7"})
    ('bpe', 8000, Split(fraction=0.1, seed=7), None, None)
    >>> parse_train_spec("parity-bpe:3000", {"variant": "window"})[3], parse_train_spec("bpe:300", {"pre": "gpt2"})[4]
    ({'variant': 'window'}, 'gpt2')
    """
    algo, _, size = target.partition(":")
    if algo not in ALGOS or not size.isdigit() or int(size) < 1:
        raise TokstatError(f"bad training spec train:{target}", fix=f"write train:ALGO:SIZE, ALGO in {', '.join(ALGOS)}")
    allowed = {"heldout", "seed", "sha256"} | (set(PARITY_DEFAULTS) if algo == "parity-bpe" else set()) | (
        {"pre"} if algo in BYTE_LEVEL else set())
    unknown = set(opts) - allowed
    if unknown:
        raise TokstatError(f"unknown option(s) {', '.join(sorted(unknown))} in train:{target}",
                           fix="train: specs take ?heldout=FRACTION&seed=N" + (
                               f" and {', '.join(PARITY_DEFAULTS)}" if algo == "parity-bpe" else "") + (
                               f", and pre={'|'.join(PRETOKENIZERS)} for byte-level BPE" if algo in BYTE_LEVEL else ""))
    parity = {k: v for k, v in opts.items() if k in PARITY_DEFAULTS} or None
    if parity:
        parity_options(parity)
    try:
        split = Split(float(opts.get("heldout", HELDOUT)), int(opts.get("seed", 0)))
    except ValueError:
        raise TokstatError(f"bad ?heldout= or ?seed= in train:{target}", fix="e.g. train:bpe:8000?heldout=0.1&seed=0") from None
    except TokstatError as e:       # ?seed=-1, ?heldout=1: name the spec
        raise TokstatError(f"train:{target}: {e.message}", fix="e.g. train:bpe:8000?heldout=0.1&seed=0") from None
    pre = check_pretokenizer(opts["pre"]) if "pre" in opts else None
    check_vocab(int(size), f"train:{target}")
    return algo, int(size), split, parity, pre
