"""Extending an existing byte-level BPE tokenizer for a language: keep every id and merge, learn N more.

``extend(base, corpus, languages=["zh"], add=N)`` continues BPE training from the base tokenizer on
the target-language text of the corpus's train split: every text is pre-tokenized with the base's
own pre-tokenizer, each piece is encoded with the base's merges, and then N new merges are learned
on those token sequences (the most frequent adjacent pair, merged, repeated; ties broken by the
smallest pair bytewise, so the result is deterministic). The base's ids, tokens and merges are unchanged; the
new tokens get ids after everything the base uses — its regular vocabulary *and* its special
tokens (for a tiktoken ranks file, whose special tokens are not in the file, after the published
special ids of the named encoding: cl100k_base from 100,277, o200k_base from 200,019, llama3 from
128,256) — and the new merges come after the base's, so the base's merges always apply first.

Supported bases: a tiktoken ranks file (cl100k_base, o200k_base, llama3, …), a Hugging Face
byte-level BPE ``tokenizer.json`` (qwen, deepseek, gpt2-style) and SentencePiece models:

* **SentencePiece BPE** (llama2, mistral): the same continued training on the base's own pieces;
  characters the base can only spell as byte-fallback tokens are candidates too (adding one saves
  its UTF-8 length minus one token per occurrence, and candidates are taken by tokens saved). New
  pieces respect the base's training rules (``max_sentencepiece_length``, ``split_digits``,
  ``split_by_unicode_script``, ``▁`` only at a piece's start) and get scores below every regular
  piece's, so SentencePiece applies the base's merges first (pieces a base parks at a sentinel
  score, llama2's whitespace runs at −1e9, stay last).
* **SentencePiece Unigram** (t5): as Chinese-LLaMA extended LLaMA's model, a Unigram model is
  trained on the target text and its pieces that the base lacks are appended, best score first,
  with their own scores (log-probabilities under the target-language model).

Every result lists new tokens in the order they were learned, so the first k of an extension by N
are the extension by k (``extend_sizes`` learns once for several sizes). The result is written in
the base's own format (a ranks file loadable by ``tiktoken``, a ``tokenizer.json`` by
``tokenizers``, a ``.model`` by ``sentencepiece``) with ``metadata.json``.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

from ._version import __version__
from .errors import TokstatError
from .adapters.base import byte_decoder, byte_piece
from .io import write_files
from .split import Split

#: the first free id after the special tokens of named tiktoken encodings (their ranks files omit them)
TIKTOKEN_NEXT_ID = {"cl100k_base": 100277, "o200k_base": 200019, "llama3": 128256, "llama4": 201134,
                    "r50k_base": 50257, "p50k_base": 50281, "gpt2": 50257}


U2B = byte_decoder()                      # GPT-2's printable character -> byte
B2U = {v: k for k, v in U2B.items()}      # byte -> the character byte-level vocabularies write it as


def to_bytes(mapped: str) -> bytes:
    return bytes(U2B[ch] for ch in mapped)


def to_mapped(b: bytes) -> str:
    return "".join(B2U[x] for x in b)


def learn_merges(words: Counter, n: int, known: set, ok=None) -> list[tuple]:
    """``n`` new merges on ``words`` (tuples of symbols -> count; symbols are ``bytes`` or ``str``):
    the most frequent adjacent pair whose concatenation is not already a token (and passes ``ok``,
    when given), merged everywhere, repeated (incremental pair counts and a heap; ties broken by
    the smallest pair).

    >>> learn_merges(Counter({(b"a", b"b", b"c"): 3, (b"a", b"b"): 2}), 2, set())
    [(b'a', b'b'), (b'ab', b'c')]
    """
    return [(a, b) for a, b, _ in _learn(words, n, known, ok)]


def _learn(words: Counter, n: int, known: set, ok=None) -> list[tuple]:
    """:func:`learn_merges` with each merge's count when it was made: ``(a, b, count)``."""
    seqs = [list(w) for w in words]
    counts = list(words.values())
    pairs: Counter = Counter()
    where: dict[tuple[bytes, bytes], set[int]] = defaultdict(set)
    for i, s in enumerate(seqs):
        for a, b in zip(s, s[1:]):
            pairs[(a, b)] += counts[i]
            where[(a, b)].add(i)
    import heapq

    heap = [(-c, a, b) for (a, b), c in pairs.items()]
    heapq.heapify(heap)
    out = []
    known = set(known)
    while len(out) < n and heap:
        negc, a, b = heapq.heappop(heap)
        c_now = pairs.get((a, b), 0)
        if c_now <= 0 or -negc != c_now:
            if c_now > 0:
                heapq.heappush(heap, (-c_now, a, b))     # a stale entry: its current count goes back in
            continue
        if a + b in known or (ok is not None and not ok(a + b)):
            continue
        new = a + b
        out.append((a, b, c_now))
        known.add(new)
        touched = set()
        for i in list(where.pop((a, b), ())):
            s, c = seqs[i], counts[i]
            for x, y in zip(s, s[1:]):          # remove this word's pairs
                pairs[(x, y)] -= c
                touched.add((x, y))
            merged, k = [], 0
            while k < len(s):
                if k + 1 < len(s) and s[k] == a and s[k + 1] == b:
                    merged.append(new)
                    k += 2
                else:
                    merged.append(s[k])
                    k += 1
            seqs[i] = merged
            for x, y in zip(merged, merged[1:]):  # and add them back, merged
                pairs[(x, y)] += c
                where[(x, y)].add(i)
                touched.add((x, y))
        pairs.pop((a, b), None)
        for p in touched:
            if pairs.get(p, 0) > 0:
                heapq.heappush(heap, (-pairs[p], p[0], p[1]))
    return out




# ---------------------------------------------------------------- learning (once, for the largest size)

@dataclass
class Learned:
    """New tokens learned on top of a base, in the order they were learned (any prefix is an extension)."""
    kind: str                   # "tiktoken", "hf", "spm-bpe", "spm-unigram"
    base: object                # the base's adapter
    items: list                 # tiktoken/hf: (a, b) merges of bytes; spm-bpe: pieces; spm-unigram: (piece, score)
    meta: dict


@dataclass
class Extended:
    """One extended tokenizer: its adapter, its metadata and (when written) its files."""
    adapter: object
    metadata: dict
    files: list[Path]
    data: bytes = b""
    filename: str = ""


def _texts(corpus, languages, split: Split) -> list[str]:
    out = []
    missing = [lang for lang in languages if lang not in corpus.languages]
    if missing:
        raise TokstatError(f"the corpus {corpus.name} has no {', '.join(missing)} text (it has "
                           f"{', '.join(corpus.languages)})", fix="pass --languages with languages of the corpus")
    for seg in corpus:
        if split.is_heldout(seg.id):
            continue
        out.extend(t for lang, t in seg.texts.items() if lang in languages and t.strip())
    if not out:
        raise TokstatError(f"no {', '.join(languages)} training text in the corpus's train split",
                           fix="check --languages, or a smaller --heldout")
    return out




def _sp_script(ch: str) -> str:
    """A character's class as SentencePiece's trainer separates them (Han and kana together)."""
    from .vocabplan import script_of

    if ch.isdigit():
        return "digit"
    s = script_of(ch)
    return "Han" if s in ("Han", "Kana") else s


def _sp_words(sp, texts: list[str]) -> tuple[Counter, Counter]:
    """Texts as the base encodes them: words (runs of pieces from one ``▁`` to the next) of
    symbols, byte-fallback runs turned back into their characters; and how many byte tokens each
    such character costs (its UTF-8 length) times its count."""
    words: Counter = Counter()
    fallback: Counter = Counter()
    for pieces in sp.encode(texts, out_type=str):
        word: list[str] = []
        buf = bytearray()

        def flush():
            if buf:
                for ch in buf.decode("utf-8", errors="replace"):
                    word.append(ch)
                    fallback[ch] += 1
                buf.clear()

        for p in pieces:
            b = byte_piece(p)
            if b is not None:
                buf.append(b)
                continue
            flush()
            if p.startswith("▁") and word:
                words[tuple(word)] += 1
                word = []
            word.append(p)
        flush()
        if word:
            words[tuple(word)] += 1
    return words, fallback


def learn(base, corpus, *, languages: list[str], add: int, split: Split | None = None) -> Learned:
    """Learn up to ``add`` new tokens for ``base`` (a spec or an adapter) on ``languages``' text of
    ``corpus``'s train split; see the module docstring for each kind of base."""
    from .adapters import load_tokenizer
    from .adapters.hf import HFAdapter
    from .adapters.spm import SPMAdapter
    from .adapters.tiktoken_ import TiktokenAdapter
    from .corpus import nfc

    split = split or Split()
    if isinstance(corpus, str):
        from .loaders import load_corpus

        corpus = load_corpus(corpus)
    if not (isinstance(add, int) and not isinstance(add, bool) and add >= 1):
        raise TokstatError(f"--add must be a positive number of new tokens, got {add!r}", fix="e.g. --add 8000")
    if not languages:
        raise TokstatError("no language to extend the tokenizer for", fix="pass --languages, e.g. --languages zh")
    a = load_tokenizer(base) if isinstance(base, str) else base
    texts = [nfc(t) for t in _texts(corpus, languages, split)]
    digest = hashlib.sha256("\n".join(texts).encode("utf-8", "surrogatepass")).hexdigest()
    meta = {"base": a.signature, "base_id": a.id, "languages": list(languages),
            "corpus": f"{corpus.name}@{corpus.fingerprint()[:8]}",
            "split": {"heldout_fraction": split.fraction, "seed": split.seed}, "training_sha256": digest,
            "training_texts": len(texts), "tokstat": __version__}
    if isinstance(a, TiktokenAdapter):
        import regex

        enc = a.enc
        pat = regex.compile(enc._pat_str)
        words: Counter = Counter()
        for t in texts:
            for piece in pat.findall(t):
                words[tuple(enc.decode_single_token_bytes(i) for i in enc.encode_ordinary(piece))] += 1
        items = learn_merges(words, add, set(enc._mergeable_ranks))
        return Learned("tiktoken", a, items, meta)
    if isinstance(a, HFAdapter):
        cfg = json.loads(a.tok.to_str())
        model = cfg.get("model", {})
        if model.get("type") != "BPE" or "ByteLevel" not in json.dumps(cfg.get("pre_tokenizer")):
            what = model.get("type") if model.get("type") != "BPE" else "BPE tokenizer without byte-level pre-tokenizer"
            raise TokstatError(f"{a.id}: extending a {what} tokenizer is not supported", fix="extend a byte-level "
                               "BPE tokenizer.json (qwen, deepseek, gpt2-style), a tiktoken ranks file or a "
                               "SentencePiece model")
        words = Counter()
        for t in texts:
            norm = a.tok.normalizer.normalize_str(t) if a.tok.normalizer is not None else t
            for piece, _ in a.tok.pre_tokenizer.pre_tokenize_str(norm):
                words[tuple(to_bytes(x.value) for x in a.tok.model.tokenize(piece))] += 1
        known = {to_bytes(k) for k in model["vocab"] if all(ch in U2B for ch in k)}
        return Learned("hf", a, learn_merges(words, add, known), meta)
    if isinstance(a, SPMAdapter):
        from sentencepiece import sentencepiece_model_pb2 as pb

        m = pb.ModelProto()
        m.ParseFromString(a.sp.serialized_model_proto())
        have = {p.piece for p in m.pieces}
        ts = m.trainer_spec
        if ts.model_type == pb.TrainerSpec.BPE:
            words, fallback = _sp_words(a.sp, texts)
            maxlen = ts.max_sentencepiece_length or 16

            def ok(piece: str) -> bool:
                body = piece[1:] if piece.startswith("▁") else piece
                if len(piece) > maxlen or "▁" in body or not body:
                    return False
                if ts.split_digits and len(body) > 1 and any(ch.isdigit() for ch in body):
                    return False
                return not ts.split_by_unicode_script or len({_sp_script(ch) for ch in body
                                                               if ch.isalpha() or ch.isdigit()}) <= 1
            merges = _learn(words, add, have, ok)
            # a character spelled in byte tokens saves (UTF-8 length - 1) tokens per occurrence once it is a piece
            chars = [(n * (len(ch.encode()) - 1), ch) for ch, n in fallback.items() if ch not in have and ch != "\ufffd"]
            cands = sorted([(-g, 0, ch) for g, ch in chars] + [(-c, 1, a_ + b_) for a_, b_, c in merges])
            seen: set[str] = set()
            items = []
            for _, _, piece in cands:
                if piece not in seen:
                    seen.add(piece)
                    items.append(piece)
                if len(items) == add:
                    break
            meta["byte_fallback_characters"] = len(chars)
            return Learned("spm-bpe", a, items, meta)
        if ts.model_type == pb.TrainerSpec.UNIGRAM:
            from .train import train_spm

            size, items = add + len({ch for t in texts for ch in t}) + 64, []
            for _ in range(5):     # pieces the base already has do not count: grow until add new ones are found
                try:
                    proto = train_spm("spm-unigram", size, texts, byte_fallback=False)
                except TokstatError as e:
                    if "required_chars" in str(e):
                        size *= 2
                        continue
                    break          # the text holds no more pieces: what was found is all there is
                t = pb.ModelProto()
                t.ParseFromString(proto)
                items = sorted(((p.score, p.piece) for p in t.pieces if p.type == pb.ModelProto.SentencePiece.NORMAL
                                and p.piece not in have), key=lambda x: (-x[0], x[1]))
                items = [(piece, score) for score, piece in items]
                if len(items) >= add:
                    break
                size *= 2
            if len(items) < add:
                import warnings

                warnings.warn(f"{a.id}: the {', '.join(languages)} text holds {len(items):,} pieces the base lacks, "
                              f"not {add:,}: the extension adds {len(items):,}", stacklevel=2)
            return Learned("spm-unigram", a, items[:add], meta)
        raise TokstatError(f"{a.id} is a SentencePiece {pb.TrainerSpec.ModelType.Name(ts.model_type)} model",
                           fix="extend a SentencePiece BPE or Unigram model")
    raise TokstatError(f"{a.id}: extending a {type(a).__name__.replace('Adapter', '')} tokenizer is not supported",
                       fix="extend a tiktoken ranks file, a byte-level BPE tokenizer.json or a SentencePiece model")


# ---------------------------------------------------------------- building one size

def build(learned: Learned, add: int | None = None) -> Extended:
    """The base extended by the first ``add`` (default: all) learned tokens, in the base's format."""
    from .adapters.hf import HFAdapter
    from .adapters.spm import SPMAdapter
    from .adapters.tiktoken_ import TiktokenAdapter

    a, items = learned.base, learned.items[:add] if add is not None else learned.items
    meta = dict(learned.meta)
    tag = f"{'-'.join(meta['languages'])}{len(items)}"
    label = a.id.split("/", 1)[-1].replace("/", "-")
    if learned.kind == "tiktoken":
        import tiktoken

        enc = a.enc
        ranks: dict[bytes, int] = dict(enc._mergeable_ranks)
        name = next((k for k in TIKTOKEN_NEXT_ID if k in a.id), None)
        first = max(max(ranks.values()) + 1, TIKTOKEN_NEXT_ID.get(name, 0))
        ranks.update({x + y: first + k for k, (x, y) in enumerate(items)})
        data = "".join(f"{base64.b64encode(tok).decode()} {r}\n"
                       for tok, r in sorted(ranks.items(), key=lambda kv: kv[1])).encode()
        fname = "extended.tiktoken"
        ext = tiktoken.Encoding(f"{enc.name}+{tag}", pat_str=enc._pat_str, mergeable_ranks=ranks, special_tokens={})
        adapter = TiktokenAdapter(ext, f"extend/{label}+{tag}", hashlib.sha256(data).hexdigest())
        meta.update({"format": "tiktoken ranks", "pattern": enc._pat_str, "first_new_id": first,
                     "ids": "base ranks unchanged; new tokens ranked after the base's ranks and after the named "
                            "encoding's special-token ids (which its ranks file omits)"})
    elif learned.kind == "hf":
        from tokenizers import Tokenizer

        from .train import canonical_json

        cfg = json.loads(a.tok.to_str())
        model = cfg["model"]
        vocab = model["vocab"]
        first = max(list(vocab.values()) + [t["id"] for t in cfg.get("added_tokens", [])]) + 1
        string_merges = bool(model["merges"]) and isinstance(model["merges"][0], str)
        for k, (x, y) in enumerate(items):
            vocab[to_mapped(x + y)] = first + k
            pair = [to_mapped(x), to_mapped(y)]
            model["merges"].append(" ".join(pair) if string_merges else pair)
        tok = Tokenizer.from_str(json.dumps(cfg, ensure_ascii=False))
        data = canonical_json(tok)
        fname = "tokenizer.json"
        adapter = HFAdapter(tok, f"extend/{label}+{tag}", hashlib.sha256(data).hexdigest())
        meta.update({"format": "tokenizer.json", "first_new_id": first,
                     "ids": "base vocabulary, merges and added tokens unchanged; new tokens after the largest id in "
                            "use (special tokens included), new merges after the base's"})
    else:
        import sentencepiece as spm
        from sentencepiece import sentencepiece_model_pb2 as pb

        m = pb.ModelProto()
        m.ParseFromString(a.sp.serialized_model_proto())
        first = len(m.pieces)
        if learned.kind == "spm-bpe":
            regular = [p.score for p in m.pieces if p.type == pb.ModelProto.SentencePiece.NORMAL and p.score > -1e8]
            low = float(int(min(regular, default=0.0))) - 1
            for k, piece in enumerate(items):
                p = m.pieces.add()
                p.piece, p.score, p.type = piece, low - k, pb.ModelProto.SentencePiece.NORMAL
            rule = ("new pieces appended after every base id with scores below every regular piece's (the base's "
                    "merges apply first)")
        else:
            for piece, score in items:
                p = m.pieces.add()
                p.piece, p.score, p.type = piece, score, pb.ModelProto.SentencePiece.NORMAL
            rule = "new pieces appended after every base id with their scores under a Unigram model of the target text"
        m.trainer_spec.vocab_size = len(m.pieces)
        data = m.SerializeToString(deterministic=True)
        fname = "tokenizer.model"
        sp = spm.SentencePieceProcessor(model_proto=data)
        adapter = SPMAdapter(sp, f"extend/{label}+{tag}", hashlib.sha256(data).hexdigest())
        adapter.algorithm = f"{a.algorithm} extended" if getattr(a, "algorithm", None) else "sentencepiece extended"
        meta.update({"format": "sentencepiece model", "first_new_id": first, "ids": rule})
    meta.update({"add": len(items), "new_tokens": len(items), "tokenizer_id": adapter.id, "files": {fname: adapter.file_hash}})
    adapter.split = Split(meta["split"]["heldout_fraction"], meta["split"]["seed"])
    adapter.trained_on = meta["corpus"]
    return Extended(adapter, meta, [], data, fname)


def write(ext: Extended, out: str | os.PathLike) -> Extended:
    """Write ``ext`` into folder ``out`` (its tokenizer file and metadata.json, as one unit)."""
    d = Path(out)
    meta = (json.dumps(ext.metadata, indent=2, ensure_ascii=False, sort_keys=True) + "\n").encode()
    write_files(d, {ext.filename: ext.data, "metadata.json": meta})
    ext.files = [d / ext.filename, d / "metadata.json"]
    return ext


def extend(base, corpus, *, languages: list[str], add: int, out: str | os.PathLike | None = None,
           split: Split | None = None) -> Extended:
    """Extend tokenizer ``base`` (a spec or adapter) with ``add`` tokens learned on ``languages``'
    text of ``corpus``'s train split (``split``, default ``Split(0.1, 0)``: the held-out side is for
    evaluating it); optionally write it to ``out`` in the base's format. See the module docstring."""
    ext = build(learn(base, corpus, languages=languages, add=add, split=split))
    return write(ext, out) if out is not None else ext


def extend_sizes(base, corpus, *, languages: list[str], sizes: list[int], split: Split | None = None) -> list[Extended]:
    """One extension per size in ``sizes``, learned once (the first k tokens of the largest)."""
    if not sizes:
        raise TokstatError("no --add size given", fix="e.g. --add 1000,2000,4000")
    learned = learn(base, corpus, languages=languages, add=max(sizes), split=split)
    return [build(learned, k) for k in sorted(set(sizes))]


# ---------------------------------------------------------------- the answer: tokens saved, priced

#: the continued-pretraining text assumed to teach the new embeddings, in bytes of the target language
ADAPT_BYTES = 20e9
ADAPT_SOURCE = ("Chinese-LLaMA (Cui et al. 2023, arXiv:2304.08177) pre-trained LLaMA with its extended vocabulary on "
                "20 GB of Chinese text (120 GB for its Plus models); priced as full training (6·N per token + "
                "attention + unembedding), an upper bound for a stage that trains only the embeddings")

EXTEND_COLUMNS = ["base", "tokenizer", "added", "language", "target", "tokens_before", "tokens_after", "tokens_saved",
                  "tokens_per_char_before", "tokens_per_char_after", "premium_before", "premium_before_ci_low",
                  "premium_before_ci_high", "premium_after", "premium_after_ci_low", "premium_after_ci_high",
                  "roundtrip_rate_after", "new_embedding_rows", "new_params", "model", "adapt_bytes", "adapt_tokens",
                  "adapt_gpu_hours", "adapt_usd", "usd_per_1k_requests_before", "usd_per_1k_requests_after",
                  "saving_usd_per_1k_requests", "break_even_requests", "assumptions", "signature"]


def extension_plan(base, corpus, *, languages: list[str], sizes: list[int], split: Split | None = None,
                   eval_corpus=None, pivot: str | None = "en", model: str = "llama2-7b", gpu: str = "h100-sxm",
                   gpus: int = 1, mfu: float | None = None, price: float | None = None,
                   adapt_bytes: float = ADAPT_BYTES, prompt_chars: float = 1000, output_chars: float = 250,
                   batch: int = 32, n_boot: int = 1000, boot_seed: int = 0, progress: bool | None = None):
    """Extend ``base`` by each of ``sizes`` tokens (learned once, :func:`extend_sizes`) and say what
    it buys: one row per (size, language) of the evaluation text — ``corpus``'s held-out split, or
    every segment of ``eval_corpus`` — with tokens before and after, the premium against ``pivot``
    before and after with 95 % intervals, and, priced with the cost model (``model`` on ``gpu``):
    the new embedding rows and parameters, the continued-pretraining tokens that teach them
    (``adapt_bytes`` of the language's text, :data:`ADAPT_SOURCE`) and their dollars, the serving
    cost of 1,000 requests of ``prompt_chars`` + ``output_chars`` characters of the language before
    and after, and the requests after which the saving has paid for the continued pretraining
    (``break_even_requests``; null where nothing is saved). Returns ``(table, extensions)``."""
    import polars as pl

    from .compare import compare
    from .cost.calibration import default_mfu
    from .cost.hardware import check_mfu
    from .cost.hardware import gpu as gpu_of
    from .cost.model import preset, train_seq_len, training_flops_per_token
    from .loaders import load_corpus

    split = split or Split()
    if not (isinstance(adapt_bytes, (int, float)) and adapt_bytes > 0 and adapt_bytes < float("inf")):
        raise TokstatError(f"--adapt-bytes must be a finite positive number, got {adapt_bytes}", fix="e.g. --adapt-bytes 20e9")
    for opt, v in (("--prompt-chars", prompt_chars), ("--output-chars", output_chars)):
        if not (v > 0 and v < float("inf")):
            raise TokstatError(f"{opt} must be a finite positive number, got {v}", fix=f"e.g. {opt} 1000")
    m0, g = preset(model), gpu_of(gpu)
    mfu_v = mfu if mfu is not None else default_mfu(g.name)[0]
    check_mfu(mfu_v)
    price_v = price if price is not None else g.price_usd_h
    if isinstance(corpus, str):
        corpus = load_corpus(corpus)
    knobs = {"adapt_bytes": adapt_bytes, "price": price_v, "mfu": mfu_v, "prompt_chars": prompt_chars,
             "output_chars": output_chars}

    def price_now(tpb, tpc0, tpc1, m_before, m_after, flops_tok, **over):
        k = {**knobs, **over}
        return _prices(tpb, tpc0, tpc1, m_before, m_after, flops_tok, g=g, gpus=gpus, batch=batch, **k)

    # an input that makes a price meaningless is refused before the training: priced at the bounds
    # of what a tokenizer spends (0.05 and 4 tokens a character) on the model as it is
    fl0 = training_flops_per_token(m0, context=train_seq_len(m0))
    for tpc in (0.05, 4.0):
        probe = (tpc / 3, tpc, tpc * 0.9, m0, m0, fl0)
        _check_prices(price_now(*probe), price_now, probe, knobs, f"{m0.name} on {g.name}")
    exts = extend_sizes(base, corpus, languages=languages, sizes=sizes, split=split)
    b = exts[0].adapter
    learned_base = _base_adapter(exts[0], base)
    ev = load_corpus(eval_corpus) if isinstance(eval_corpus, str) else eval_corpus
    adapters = [learned_base] + [e.adapter for e in exts]
    if ev is not None:
        for a in adapters:     # another corpus: no segment of it was seen in training
            a.split, a.trained_on = None, None
    else:
        for a in adapters:
            a.split, a.trained_on = split, exts[0].metadata["corpus"]
    target = ev if ev is not None else corpus
    if pivot is not None and pivot not in target.languages:
        pivot = None
    df = compare(target, adapters, pivot=pivot, n_boot=n_boot, boot_seed=boot_seed, progress=progress)
    before = {r["language"]: r for r in df.filter(pl.col("tokenizer") == learned_base.id).iter_rows(named=True)}
    rows = []
    m_before = m0 if m0.vocab_size >= learned_base.n_ids else m0.with_vocab(learned_base.n_ids)
    for e in exts:
        k = e.metadata["add"]
        m_after = m_before.with_vocab(m_before.vocab_size + k)
        flops_tok = training_flops_per_token(m_after, context=train_seq_len(m_after))
        for r in df.filter(pl.col("tokenizer") == e.adapter.id).iter_rows(named=True):
            lang, r0 = r["language"], before.get(r["language"])
            if r0 is None:
                continue
            is_target = lang in languages
            row = {"base": learned_base.id, "tokenizer": e.adapter.id, "added": k, "language": lang, "target": is_target,
                   "tokens_before": r0["tokens"], "tokens_after": r["tokens"],
                   "tokens_saved": 1 - r["tokens"] / r0["tokens"] if r0["tokens"] else None,
                   "tokens_per_char_before": r0["tokens_per_char"], "tokens_per_char_after": r["tokens_per_char"],
                   "premium_before": r0.get("premium"), "premium_before_ci_low": r0.get("premium_ci_low"),
                   "premium_before_ci_high": r0.get("premium_ci_high"), "premium_after": r.get("premium"),
                   "premium_after_ci_low": r.get("premium_ci_low"), "premium_after_ci_high": r.get("premium_ci_high"),
                   "roundtrip_rate_after": r.get("roundtrip_rate"), "new_embedding_rows": k,
                   "new_params": k * m0.d_model * (1 if m0.tied else 2), "model": m0.name}
            tpc0, tpc1 = r0["tokens_per_char"], r["tokens_per_char"]
            if is_target and tpc0 and tpc1:
                row.update(price_now(r["tokens_per_byte"], tpc0, tpc1, m_before, m_after, flops_tok))
                _check_prices(row, price_now, (r["tokens_per_byte"], tpc0, tpc1, m_before, m_after, flops_tok), knobs,
                              f"{m0.name} on {g.name}")
            row["assumptions"] = (f"{m0.name} on {gpus}× {g.name} at MFU {mfu_v:.2f}, ${price_v:.2f}/GPU-hour; a request: "
                                  f"{prompt_chars:g} + {output_chars:g} characters of the language, batch {batch}; "
                                  f"continued pretraining on {adapt_bytes:.3g} bytes of it: {ADAPT_SOURCE}")
            row["signature"] = r.get("signature")
            rows.append(row)
    table = pl.DataFrame([{c: r.get(c) for c in EXTEND_COLUMNS} for r in rows],
                         schema_overrides={c: pl.Float64 for c in EXTEND_COLUMNS if c.startswith(("premium", "adapt",
                                           "usd", "saving", "break", "tokens_saved", "tokens_per", "roundtrip"))})
    del b
    return table, exts


#: extension_plan's inputs that its prices grow or shrink with: keyword -> (option, an ordinary value)
PRICE_KNOBS = {"adapt_bytes": ("--adapt-bytes", 20e9), "price": ("--price", 2.5), "mfu": ("--mfu", 0.4),
               "prompt_chars": ("--prompt-chars", 1000.0), "output_chars": ("--output-chars", 250.0)}


def _prices(tpb, tpc0, tpc1, m_before, m_after, flops_tok, *, g, gpus, batch, adapt_bytes, price, mfu, prompt_chars,
            output_chars) -> dict:
    """The priced columns of one (size, language) row of :func:`extension_plan`."""
    from .cost.hardware import gpu_hours
    from .cost.projection import serving

    adapt_tokens = adapt_bytes * tpb
    hours = gpu_hours(adapt_tokens * flops_tok, g, mfu)
    per_req = []
    for mm, tpc in ((m_before, tpc0), (m_after, tpc1)):
        s_ = serving(tpc, mm, g, gpus=gpus, mfu=mfu, mbu=0.7, price=price, batch=batch,
                     prompt_tokens=prompt_chars * tpc, output_tokens=output_chars * tpc)
        per_req.append(s_["usd_per_request"])
    saving = per_req[0] - per_req[1]
    return {"adapt_bytes": adapt_bytes, "adapt_tokens": adapt_tokens, "adapt_gpu_hours": hours,
            "adapt_usd": hours * price, "usd_per_1k_requests_before": 1000 * per_req[0],
            "usd_per_1k_requests_after": 1000 * per_req[1], "saving_usd_per_1k_requests": 1000 * saving,
            "break_even_requests": hours * price / saving if saving > 0 else None}


def _check_prices(row: dict, price_now, args: tuple, knobs: dict, context: str) -> None:
    """Refuse the input that makes one of ``row``'s prices meaningless (:func:`tokstat.ranges.meaningful`),
    naming its usable range (found by pricing the same row with it moved towards an ordinary value)."""
    from .ranges import meaningful, refuse_derived, usable_edge

    cols = ("adapt_tokens", "adapt_gpu_hours", "adapt_usd", "usd_per_1k_requests_before", "usd_per_1k_requests_after")
    bad = next(((c, row[c]) for c in cols if not meaningful(row.get(c))), None)
    if bad is None:
        return

    def clean(key, x) -> bool:
        got = price_now(*args, **{key: x})
        return all(meaningful(got.get(c)) for c in cols)
    for key, (opt, ordinary) in PRICE_KNOBS.items():
        given = knobs[key]
        if given == ordinary or not clean(key, ordinary):
            continue
        edge = usable_edge(lambda x, key=key: clean(key, x), float(given), ordinary)
        raise refuse_derived(opt, float(given), bad[0].replace("_", " "), bad[1], edge, context)
    raise TokstatError(f"the inputs make {bad[0].replace('_', ' ')} {bad[1]:g}, beyond what a float carries",
                       fix="bring --adapt-bytes, --price, --mfu and the request's characters closer to ordinary values")


def _base_adapter(ext: Extended, base):
    """A fresh adapter of the base (the one the extension was built from carries no split)."""
    from .adapters import load_tokenizer

    return load_tokenizer(base) if isinstance(base, str) else base


__all__ = ["extend", "extend_sizes", "learn", "build", "write", "learn_merges", "Learned", "Extended",
           "TIKTOKEN_NEXT_ID", "extension_plan", "EXTEND_COLUMNS", "ADAPT_BYTES"]
