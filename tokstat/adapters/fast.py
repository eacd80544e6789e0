"""The fast path: token ids from a library built for throughput, verified against the reference.

The reference adapters call each tokenizer's own library (tiktoken, Hugging Face ``tokenizers``).
For byte-level BPE tokenizers (tiktoken ranks files with a known split pattern, byte-level
``tokenizer.json`` such as qwen3 or deepseek) `gigatoken <https://pypi.org/project/gigatoken/>`_
produces the same ids several times faster (``pip install 'tokstat[fast]'``). Nothing else
changes: byte spans, split characters and every other count follow from the ids through the
reference adapter's table of token byte lengths, exactly as on the reference path.

Verified, not trusted: :func:`select_backend` encodes a sample of the corpus (every language) and
:data:`PROBES` with both libraries and compares them id by id; one difference turns the fast path
off for that tokenizer (a one-line warning) and the run continues on the reference library. While
counting, a text whose tokens do not add up to its bytes is re-encoded by the reference library and
compared; a difference there also turns the fast path off (the text keeps the reference's ids).
The signature names the library that produced the ids: ``lib:gigatoken-0.10.0+tiktoken-0.14.0``.

>>> from tokstat.adapters import load_tokenizer
>>> ref = load_tokenizer("tiktoken:cl100k_base")          # doctest: +SKIP
>>> [a.library_version for a in select_backend([ref], "auto", ["Hello 世界"])]   # doctest: +SKIP
['gigatoken-0.10.0+tiktoken-0.14.0']
"""

from __future__ import annotations

import os
import tempfile
import warnings

import numpy as np

from ..errors import TokstatError
from ..utf8 import offsets
from .base import Adapter, native_errors, spans_from_lengths, unspelt

BACKENDS = ("auto", "fast", "reference")
#: versions of gigatoken whose ids were verified identical on tokstat's test suite (0.9 had a
#: silent wrong-tokenization bug); another version is used only after the same per-run check, with a warning
VERIFIED_VERSIONS = ("0.10.",)
#: texts per language encoded by both libraries before a run (plus :data:`PROBES`)
VERIFY_PER_LANGUAGE = 256

#: text that has broken fast tokenizers: special-token strings, emoji ZWJ sequences, combining
#: marks, long whitespace and digit runs, replacement characters, controls, mixed scripts
PROBES = [
    "<|endoftext|> hello <|im_start|>user<|im_end|> <s></s> [CLS] <unk>",
    "👩\u200d👩\u200d👧\u200d👦 🏳️\u200d🌈 👍🏽 🇯🇵" * 8,
    "e\u0301" * 40 + " a\u0308\u0323 한국어 ᄀᄀᄀ",
    " " * 3000 + "\t\t\n\n\r\n" * 50 + "x",
    "1" * 2000 + " 3.14159 1,000,000 ٣٤٥ ४५६",
    "\ufffd\ufffd abc \x00\x01\x7f\u200b\u2028\u2029 \ufeff",
    "Hello 你好，世界！ こんにちは Привет مرحبا שלום नमस्ते ไทย ລາວ ខ្មែរ",
    "don't I'LL we've THEY'RE it's   \n  trailing   ",
    "中" * 20000,
    "a" * 5000 + "ab" * 2000,
]


def _version(mod) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(mod)
    except PackageNotFoundError:
        return "?"


def _gigatoken():
    try:
        import gigatoken
    except ImportError:
        return None
    return gigatoken


def _scheme(ref: Adapter) -> str | None:
    """gigatoken's built-in pre-tokenizer that is exactly ``ref``'s split pattern, if any."""
    from .tiktoken_ import PATTERNS

    pat = ref.enc._pat_str
    for name, scheme in (("r50k_base", "r50k"), ("cl100k_base", "cl100k"), ("o200k_base", "o200k")):
        if pat == PATTERNS[name]:
            return scheme
    return None


def supports(ref: Adapter) -> str | None:
    """Why ``ref`` has no fast path (None: it has one)."""
    from .hf import HFAdapter
    from .tiktoken_ import TiktokenAdapter

    if isinstance(ref, FastAdapter):
        return None
    if isinstance(ref, TiktokenAdapter):
        return None if _scheme(ref) else "its split pattern is not one gigatoken implements (r50k, cl100k, o200k)"
    if isinstance(ref, HFAdapter):
        return None if ref._lens is not None else f"{ref.algorithm} (the fast path covers byte-level BPE)"
    return f"{ref.family} {ref.algorithm} (the fast path covers byte-level BPE)"


def _build(ref: Adapter):
    """A gigatoken tokenizer built from the very model the reference adapter holds (tiktoken ranks as
    parsed by tokstat, or the ``tokenizer.json`` the reference library serialises), never from a path
    read a second time."""
    gt = _gigatoken()
    from .tiktoken_ import TiktokenAdapter, ranks_file

    if isinstance(ref, TiktokenAdapter):
        body = ref.ranks_bytes or ranks_file(ref.enc._mergeable_ranks)
        fd, path = tempfile.mkstemp(prefix="tokstat-ranks-", suffix=".tiktoken")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(body)
            return gt.Tokenizer.from_tiktoken(path, pretokenizer=_scheme(ref), special_tokens={})
        finally:
            os.unlink(path)
    return gt.Tokenizer.from_json(ref.tok.to_str())


class FastAdapter(Adapter):
    """``ref``'s tokenizer encoded by gigatoken: same ids, spans from ``ref``'s byte-length table."""

    #: :meth:`token_counts` takes a :class:`~tokstat.utf8.FlatTexts` as it is (flat buffers, no str per text)
    flat_input = True

    def __init__(self, ref: Adapter):
        self.__dict__.update({k: v for k, v in ref.__dict__.items() if k not in ("enc", "tok", "_lens")})
        for k in ("id", "family", "algorithm", "vocab_size", "n_ids", "file_hash", "unk_ids", "byte_fallback"):
            setattr(self, k, getattr(ref, k))
        self.ref = ref
        self.engine = f"gigatoken-{_version('gigatoken')}"
        self.library_version = f"{self.engine}+{ref.library_version}"
        self.reference_version = ref.library_version
        self._lens = ref._lens
        # the same, as narrow as every token allows (uint8 where every token is under 256 bytes, as in
        # tiktoken's encodings): the count path's gather (np.take) moves a quarter of int32's bytes
        top = int(ref._lens.max()) if len(ref._lens) else 0
        self._lens_narrow = ref._lens.astype(np.uint8 if top < 2**8 else np.uint16 if top < 2**16 else np.int32)
        self.id_offset = getattr(ref, "id_offset", 0)
        self.disabled: str | None = None     # why the fast path was turned off during the run
        self._tok = None

    def __getstate__(self):          # Ray ships adapters to actors: the native tokenizer is rebuilt there
        d = dict(self.__dict__)
        d["_tok"] = None
        return d

    @property
    def tok(self):
        if self._tok is None:
            self._tok = _build(self.ref)
        return self._tok

    @property
    def threads(self) -> int:
        return self.ref.threads

    @threads.setter
    def threads(self, n: int) -> None:
        self.ref.threads = n

    @property
    def split(self):
        return self.ref.split

    @split.setter
    def split(self, s) -> None:
        self.ref.split = s

    def decode(self, ids: list[int]) -> str:
        return self.ref.decode(ids)

    def _flat(self, texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """gigatoken's flat ids (its own array and dtype, gigatoken's id space) and each text's offsets into them."""
        from ..utf8 import FlatTexts

        inputs = texts.awkward() if isinstance(texts, FlatTexts) else list(texts)    # flat buffers: no str per text
        arr = self.tok.encode_batch(inputs, parallel=None if self.threads != 1 else False)
        lay = arr.layout
        try:
            off = np.asarray(lay.offsets.data, dtype=np.int64)
            return np.asarray(lay.content.data)[off[0]:off[-1]], off - off[0]
        except AttributeError:       # not a plain list-offset layout: let awkward flatten it
            import awkward as ak

            return ak.to_numpy(ak.flatten(arr)), offsets(ak.to_numpy(ak.num(arr)).astype(np.int64))

    def encode_fast(self, texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """Flat int64 ids (the reference's id space) and tokens per text, from gigatoken."""
        raw, off = self._flat(texts)
        return raw.astype(np.int64) + self.id_offset, np.diff(off)

    def token_counts(self, texts: list[str], nbytes: np.ndarray | None = None) -> np.ndarray:
        """Tokens per text from gigatoken's flat ids, checked as :meth:`_encode` checks them (the
        tokens' bytes add up to each text's, else the reference encodes the text and must agree).
        The ids stay in gigatoken's own array (no int64 copy) unless a text needs the reference."""
        if self.disabled:
            return self.ref.token_counts(list(texts))
        with native_errors(self.id):
            raw, off = self._flat(texts)
        counts = np.diff(off)
        bad = unspelt(gather(self._lens_narrow, raw), counts, texts, nbytes)
        if len(bad) and self._reference_for(texts, raw.astype(np.int64) + self.id_offset, counts, bad) is None:
            return self.ref.token_counts(list(texts))
        return counts

    def _reference_for(self, texts: list[str], ids: np.ndarray, counts: np.ndarray, bad: np.ndarray):
        """The reference's ``(ids, counts, starts, ends)`` of texts ``bad`` — whose tokens' bytes do
        not add up to the text's: a normaliser changed them (the reference takes its offsets path), or
        the fast library is wrong. Its ids must be the batch's; if not, the fast path is turned off
        for this tokenizer and None is returned."""
        ref = self.ref._encode([texts[i] for i in bad])
        off = offsets(counts)
        f_ids = np.concatenate([ids[off[i]:off[i + 1]] for i in bad])
        if np.array_equal(ref[1], counts[bad]) and np.array_equal(ref[0], f_ids):
            return ref
        self._turn_off(f"a text of {len(texts[bad[0]].encode('utf-8')):,} bytes differs")
        return None

    def _encode(self, texts):
        if self.disabled:
            return self.ref._encode(texts)
        with native_errors(self.id):
            ids, counts = self.encode_fast(texts)
        lens = self._lens[ids - self.id_offset] if len(ids) else np.zeros(0, dtype=np.int64)
        bad = unspelt(lens, counts, texts)
        starts, ends = spans_from_lengths(lens, counts)
        if len(bad):
            ref = self._reference_for(texts, ids, counts, bad)
            if ref is None:
                return self.ref._encode(texts)
            _, r_counts, r_starts, r_ends = ref
            off, ro = offsets(counts), offsets(r_counts)
            for k, i in enumerate(bad):       # same ids: the reference's spans for these texts
                starts[off[i]:off[i + 1]] = r_starts[ro[k]:ro[k + 1]]
                ends[off[i]:off[i + 1]] = r_ends[ro[k]:ro[k + 1]]
        return ids, counts, starts, ends

    def _turn_off(self, why: str) -> None:
        self.disabled = why
        self.library_version = self.reference_version
        warnings.warn(f"{self.id}: {self.engine} gave other ids than {self.reference_version} ({why}); "
                      "the fast path is off for it, the run continues on the reference library", stacklevel=4)


def gather(table: np.ndarray, idx: np.ndarray, step: int = 1 << 16) -> np.ndarray:
    """``table[idx]`` in slices of ``step`` indices: numpy converts indices that are not ``intp``
    (gigatoken's uint32 ids) to a temporary copy, which for a whole run is 8 bytes a token written
    and read back from memory; a slice's copy stays in the cache (measured in a pass of 200 MB:
    0.27 CPU s for the whole-run gather, 0.10 in slices).

    >>> gather(np.array([5, 6, 7], dtype=np.uint8), np.array([2, 0, 2, 1], dtype=np.uint32), step=3).tolist()
    [7, 5, 7, 6]
    """
    out = np.empty(len(idx), dtype=table.dtype)
    for i in range(0, len(idx), step):
        np.take(table, idx[i:i + step], out=out[i:i + step])
    return out


def first_difference(fast: FastAdapter, texts: list[str]) -> str | None:
    """Where gigatoken's ids differ from the reference library's on ``texts`` (None: nowhere)."""
    with native_errors(fast.id):
        r_ids, r_counts, _, _ = fast.ref._encode(texts)
        f_ids, f_counts = fast.encode_fast(texts)
    if np.array_equal(r_counts, f_counts) and np.array_equal(r_ids, f_ids):
        return None
    ro, fo = offsets(r_counts), offsets(f_counts)
    for i, t in enumerate(texts):
        if not np.array_equal(r_ids[ro[i]:ro[i + 1]], f_ids[fo[i]:fo[i + 1]]):
            return f"text {i} of {len(texts)} ({len(t):,} characters) differs"
    return "the batches differ"   # pragma: no cover - equal texts, unequal batches


def check_backend(backend: str) -> None:
    """Refuse a backend name that is not one of :data:`BACKENDS`."""
    if backend not in BACKENDS:
        raise TokstatError(f"unknown backend {backend!r}", fix="use --backend auto, fast or reference")


def select_backend(adapters: list[Adapter], backend: str, sample: list[str]) -> list[Adapter]:
    """The adapters to count with: ``reference`` keeps them; ``fast`` and ``auto`` give each
    byte-level BPE tokenizer gigatoken's ids once they equal the reference library's on ``sample``
    (the run's verification texts) and :data:`PROBES`. ``fast`` says why a tokenizer stays on the
    reference (not installed, another kind, a difference); ``auto`` only warns about a difference."""
    check_backend(backend)
    if backend == "reference":
        return [a.ref if isinstance(a, FastAdapter) else a for a in adapters]
    if _gigatoken() is None:
        if backend == "fast":
            raise TokstatError("--backend fast needs gigatoken",
                               fix="pip install 'tokstat[fast]', or use --backend reference")
        return adapters
    version = _version("gigatoken")
    if not version.startswith(VERIFIED_VERSIONS):
        warnings.warn(f"gigatoken {version} is not a version tokstat was tested with ({', '.join(VERIFIED_VERSIONS)}x): "
                      "its ids are checked on this run's sample like any other", stacklevel=2)
    out = []
    texts = list(sample) + PROBES
    for a in adapters:
        why = supports(a)
        if why is not None or isinstance(a, FastAdapter):
            if why is not None and backend == "fast":
                warnings.warn(f"{a.id}: no fast path for {why}; it is counted by {a.library_version}", stacklevel=2)
            out.append(a)
            continue
        fast = FastAdapter(a)
        threads, fast.threads = fast.threads, 1     # on this thread: its warmed state is what forked workers inherit
        try:
            diff = first_difference(fast, texts)
        except TokstatError:
            raise
        except Exception as e:  # noqa: BLE001 - a library that cannot load this model is no fast path
            diff = f"it cannot load the tokenizer ({type(e).__name__}: {str(e).splitlines()[0][:100] if str(e) else ''})"
        finally:
            fast.threads = threads
        if diff is None:
            out.append(fast)
            continue
        warnings.warn(f"{a.id}: {fast.engine} differs from {a.library_version} "
                      f"on the verification sample ({diff}); counted by {a.library_version}", stacklevel=2)
        out.append(a)
    return out


def verification_sample(corpus, languages: list[str], per_language: int = VERIFY_PER_LANGUAGE,
                        max_segments: int = 50_000) -> list[str]:
    """Up to ``per_language`` non-empty texts of every language, from the head of the corpus (of each
    shard, for a sharded corpus, so that languages kept in separate files are all covered); at most
    ``max_segments`` segments are read in all."""
    from ..corpus import heads_by_language

    return [t for v in heads_by_language(corpus, languages, per_language, max_segments).values() for t in v]


def describe(adapters: list[Adapter]) -> dict[str, str]:
    """``{tokenizer id: library that produces its ids}``."""
    return {a.id: (a.engine if isinstance(a, FastAdapter) and not a.disabled else a.library_version)
            for a in adapters}
