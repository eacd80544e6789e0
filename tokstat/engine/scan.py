"""One columnar pass over a monolingual corpus's files: every document is read once.

The corpus's files are cut into **units** (:func:`clusters`: Parquet row groups from the files'
metadata, 1 MiB blocks of JSONL/text files from their sizes, whole gzip files), and each unit is
read once, by whichever worker process or Ray actor is given it (it opens the file itself: no text
passes through the driver). From that one read come, per unit:

* the exact **documents, characters, bytes and tokens** per (tokenizer, language): texts as one
  list from the Arrow column, tokens from the library's batch call (``Adapter.token_counts``: flat
  ids or lengths, no spans), sums per language by ``np.bincount``; no per-document Python object;
* a **leaf hash** of the unit's documents (language and normalised text); the fingerprint is the
  sha256 of the leaves in unit order (a hash tree of depth one), so it is the same whichever worker
  read which unit;
* the fast path's **verification** (:mod:`tokstat.adapters.fast`): each worker compares the fast
  library's ids with the reference library's on the first texts of every language it meets, up to
  :data:`VERIFY_BYTES` bytes in all, stratified (at least one text of every language), before it
  counts them; a difference stops the pass and it is rerun with that tokenizer on the reference;
* a **document sample** for the rich diagnostics: per language the documents in the order of
  their seeded random keys up to a share of bytes (a bottom-k sample whose k is set by bytes:
  uniform without replacement, mergeable, the same whatever the workers), bounded in bytes
  whatever the corpus size and the number of languages;
* optionally each unit's own arrays (a budget's cluster sample) and sums per unit bucket (a
  cluster bootstrap of tokens per character).

Normalisation: ASCII text is left as is (NFC and NFKC never change it; ``str.isascii`` is one C
call), other text goes through :func:`tokstat.corpus.normalizer` — Python's ``unicodedata``, which
was measured 3× faster than ``pyarrow.compute.utf8_normalize`` on PUD (212 vs 64 MB/s: it has the
quick check) and is the Unicode version every other path of tokstat uses (Arrow's utf8proc differs
from it on 167 code points under NFKC).
"""

from __future__ import annotations

import gc
import hashlib
import math
import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..adapters.base import Adapter
from ..corpus import normalizer
from ..errors import TokstatError
from ..io import parquet_file, regular_file
from ..utf8 import FlatTexts, arrow_of, numpy_of, offsets
from ..loaders.mono import GZ_SUFFIXES, SCRIPT_COLUMN, UND, _check_text, _lang_codes, _lang_of
from .job import MAX_CHARS

#: bytes of a JSONL/text block (one unit)
BLOCK = 1 << 20
#: text bytes each worker verifies the fast path on (spread over the languages it meets, at least
#: one text of each): a fixed cost, whatever the corpus size and the number of languages
VERIFY_BYTES = 256 << 10
#: a run (units read and counted together): at most this many consecutive row groups of one file ...
RUN_UNITS = 128
#: ... holding at most this many bytes as stored uncompressed (memory stays flat whatever the corpus:
#: about 25 MB more per worker than 8 MiB runs, for 6 % less CPU on the benchmark; the per-call costs
#: of Arrow's read, the RE2 scan (its pattern compiled and its DFA built afresh each call) and the
#: library's batch call are paid per run)
RUN_BYTES = 32 << 20
#: buckets of the unit bootstrap (units are assigned by index): bounded memory at 200 languages
UNIT_BUCKETS = 256
#: text (stored bytes) per worker when the caller leaves the workers to the pass: a worker's own
#: start-up (its fork, verification and cold word cache) costs about 0.5 CPU s, what counting 20 MB
#: costs, so a second worker pays for itself in wall time only past a few tens of MB
BYTES_PER_WORKER = 64 << 20


def default_workers(text_bytes: int, cores: int | None = None) -> int:
    """Workers for a pass over ``text_bytes`` of text when none are asked for: one per
    :data:`BYTES_PER_WORKER`, at most the cores, at least one.

    >>> default_workers(50 << 20, 8), default_workers(1 << 30, 8), default_workers(200 << 20, 2)
    (1, 8, 2)
    """
    cores = cores or os.cpu_count() or 1
    return max(1, min(cores, math.ceil(text_bytes / BYTES_PER_WORKER)))


@dataclass(frozen=True)
class Cluster:
    path: str
    lang: str | None          # the file's language, or None: read from the language column
    kind: str                 # "rowgroup", "block" or "file"
    index: int
    name: str | None = None   # the file's name among the corpus's (loaders.mono.file_names)

    @property
    def label(self) -> str:
        p = Path(self.path)
        return f"{self.name or f'{p.parent.name}/{p.stem}'}@{self.kind[0]}{self.index}"


def clusters(files: list[tuple[str, str | None]], block: int = BLOCK) -> list[Cluster]:
    """Every unit of the files, from metadata and sizes only."""
    from ..loaders.mono import file_names

    names = file_names([p for p, _ in files])
    out = []
    for path, lang in files:
        name = names[str(path)]
        if path.lower().endswith(".parquet"):        # opened (and recorded) through the guarded reader
            n = parquet_file(path, "shard").num_row_groups
            out.extend(Cluster(path, lang, "rowgroup", i, name) for i in range(n))
            continue
        regular_file(path, "shard")          # recorded: a shard that changes before the run ends is an error
        if path.lower().endswith(GZ_SUFFIXES):       # no seeking into a gzip stream: the file is one unit
            out.append(Cluster(path, lang, "file", 0, name))
        else:
            size = os.path.getsize(path)
            out.extend(Cluster(path, lang, "block", i, name) for i in range(max(1, math.ceil(size / block))))
    return out


def read_cluster(cl: Cluster, *, text_col: str, lang_col: str | None, block: int = BLOCK,
                 lang_id: str = "off") -> list[tuple[str, str]]:
    """``(language, text)`` of every document of one unit (a JSONL block is read from the first line
    that starts inside it to the last one that does, so every document belongs to exactly one block);
    with ``lang_id`` the languages are identified (``spans``: one item per language span)."""
    if lang_id != "off":
        from ..langid import identify, spans

        out = []
        for _, text in read_cluster(Cluster(cl.path, UND, cl.kind, cl.index), text_col=text_col, lang_col=None,
                                    block=block):
            if lang_id == "doc" or not text.strip():
                out.append((identify(text)[0] if text.strip() else UND, text))
            else:
                out.extend(spans(text))
        return out
    if cl.kind == "rowgroup":
        codes, texts = _rowgroup(cl, text_col, lang_col, {})
        return list(zip(codes, texts))
    import json

    p = Path(cl.path)
    cache: dict = {}
    if cl.kind == "file":
        from ..loaders.mono import documents

        return [(code, text) for _, code, text in documents(p, text_col=text_col, lang_col=lang_col, lang=cl.lang)]
    start, end = cl.index * block, (cl.index + 1) * block
    out = []
    with open(regular_file(p, "shard"), "rb") as f:
        if start > 0:
            f.seek(start - 1)
            if f.read(1) != b"\n":
                f.readline()              # the line holding `start` began in the block before
        while f.tell() < end:
            raw = f.readline()
            if not raw:
                break
            try:
                line = raw.decode("utf-8").rstrip("\n").removesuffix("\r")
            except UnicodeDecodeError as e:
                raise TokstatError(f"invalid UTF-8 at byte {f.tell() - len(raw) + e.start:,} of the file", path=p,
                                   fix="rewrite the file as UTF-8") from None
            if p.suffix.lower() in (".jsonl", ".ndjson"):
                if not line.strip():
                    continue
                try:
                    obj = json.loads(line)
                except json.JSONDecodeError as e:
                    raise TokstatError(f"malformed JSON ({e.msg}) in the line at byte {f.tell() - len(raw):,}",
                                       path=p, fix="make every line one JSON object") from None
                if not isinstance(obj, dict):
                    raise TokstatError(f"the line at byte {f.tell() - len(raw):,} is not a JSON object", path=p,
                                       fix="make every line one JSON object")
                lang = cl.lang or _lang_of(obj.get(lang_col), obj.get(SCRIPT_COLUMN) if lang_col == "language" else None,
                                           p, cache)
                out.append((lang, _check_text(obj.get(text_col), p, None)))
            else:
                out.append((cl.lang, line))
    return out


def _rowgroup(cl: Cluster, text_col: str, lang_col: str | None, cache: dict) -> tuple[list[str], list[str]]:
    """Languages and texts of one Parquet row group, as Python lists (:func:`_read_groups`)."""
    p = Path(cl.path)
    texts, t, own, script = _read_groups(_parquet(cl.path, cache), [cl.index], cl, text_col, lang_col)
    if own is None:
        return [cl.lang] * len(texts), texts.tolist()
    codes, row = _lang_codes(t.column(own), t.column(script) if script else None, p, cache)
    return [codes[i] for i in row.tolist()], texts.tolist()


# --- the per-unit counts and their merge -------------------------------------------------------

@dataclass
class Counts:
    """Per language (and per tokenizer for tokens): documents (empty ones included), non-empty
    documents, characters and bytes of the normalised text, tokens. Sums: mergeable by ``+``."""

    docs: np.ndarray
    live: np.ndarray
    chars: np.ndarray
    bytes: np.ndarray
    tokens: np.ndarray          # (tokenizers, languages)

    @classmethod
    def zeros(cls, n_tok: int, n_lang: int) -> Counts:
        z = lambda: np.zeros(n_lang, dtype=np.int64)  # noqa: E731
        return cls(z(), z(), z(), z(), np.zeros((n_tok, n_lang), dtype=np.int64))

    def __iadd__(self, o: Counts) -> Counts:
        for k in ("docs", "live", "chars", "bytes", "tokens"):
            getattr(self, k).__iadd__(getattr(o, k))
        return self


@dataclass
class Sample:
    """Per language, the documents of smallest seeded keys up to ``share`` bytes: ``(key, id, text,
    bytes)`` in key order, each kept while the bytes of those before it are under ``share`` (so at
    least one document of every language met, and at most ``share`` plus one document). The kept
    set is the prefix of all the language's documents in key order, so it is the same however
    they are split between workers and merged.

    >>> s = Sample(10)
    >>> s.offer(0, np.array([0.3, 0.1, 0.2]), "u", ["aaaa", "bbbbbb", "cc"], np.array([4, 6, 2]), np.array([0, 1, 2]))
    >>> [d[1] for d in s.docs[0]], s.cuts(1).tolist()
    (['u:1', 'u:2', 'u:0'], [0.3])
    """

    share: int
    docs: dict[int, list[tuple[float, str, str, int]]] = field(default_factory=dict)
    held: dict[int, int] = field(default_factory=dict)      # language -> bytes of its kept documents

    def offer(self, lang: int, keys: np.ndarray, label: str, texts, nbytes: np.ndarray, rows: np.ndarray,
              base: int = 0) -> None:
        """Rows ``rows`` of a unit (``label``; its texts and their UTF-8 bytes from ``texts[base]`` and
        ``nbytes[base]`` on) with their ``keys``: a document's id is ``LABEL:ROW``; only the kept ones
        become strings."""
        have = self.docs.setdefault(lang, [])
        rows = rows[keys[rows] < self._cut(lang)]
        if not len(rows):
            return
        have.extend((float(keys[r]), f"{label}:{r}", texts[base + r], int(nbytes[base + r])) for r in rows.tolist())
        self._trim(lang)

    def _trim(self, lang: int) -> None:
        have = self.docs[lang]
        have.sort()
        before = 0
        for i, d in enumerate(have):
            if before >= self.share:
                del have[i:]
                break
            before += d[3]
        self.held[lang] = before

    def _cut(self, lang: int) -> float:
        """The largest key kept once the kept documents hold ``share`` bytes (a document of a larger
        key would not be kept), else +inf."""
        return self.docs[lang][-1][0] if self.held.get(lang, 0) >= self.share else np.inf

    def cuts(self, n: int) -> np.ndarray:
        """Per language (``n`` of them): :meth:`_cut`."""
        out = np.full(n, np.inf)
        for lang in self.docs:
            out[lang] = self._cut(lang)
        return out

    def merge(self, o: Sample) -> Sample:
        for lang, items in o.docs.items():
            self.docs.setdefault(lang, []).extend(items)
            self._trim(lang)
        return self


@dataclass
class Scan:
    """What one pass (or a worker's part of it) found."""

    totals: Counts
    leaves: dict[int, bytes] = field(default_factory=dict)
    units: dict[int, Counts] = field(default_factory=dict)     # the units asked for by ``keep``
    bucket_tokens: np.ndarray | None = None                    # (tokenizers, languages, UNIT_BUCKETS)
    bucket_chars: np.ndarray | None = None                     # (languages, UNIT_BUCKETS)
    bucket_bytes: np.ndarray | None = None
    sample: Sample | None = None
    read: int = 0                                              # text bytes read (normalised, UTF-8)
    nodes: list[str] = field(default_factory=list)             # Ray: the nodes whose actors counted

    def merge(self, o: Scan) -> Scan:
        self.totals += o.totals
        self.leaves.update(o.leaves)
        self.units.update(o.units)
        for k in ("bucket_tokens", "bucket_chars", "bucket_bytes"):
            if getattr(o, k) is not None:
                setattr(self, k, getattr(o, k) if getattr(self, k) is None else getattr(self, k) + getattr(o, k))
        if o.sample is not None:
            self.sample = o.sample if self.sample is None else self.sample.merge(o.sample)
        self.read += o.read
        return self

    def fingerprint(self) -> str:
        """sha256 over the leaves in unit order (the same whichever worker read which unit)."""
        h = hashlib.sha256()
        for k in sorted(self.leaves):
            h.update(k.to_bytes(8, "little") + self.leaves[k])
        return h.hexdigest()


class Diverged(Exception):
    """The fast library gave other ids than the reference on a text of the corpus."""

    def __init__(self, ident: str, why: str):
        super().__init__(ident, why)
        self.ident, self.why = ident, why


@dataclass
class Plan:
    """Everything a worker needs to count its units (pickled to Ray actors; inherited by forks)."""

    units: list[Cluster]
    langs: list[str]
    adapters: list[Adapter]
    text_col: str = "text"
    lang_col: str | None = None
    lang_id: str = "off"
    normalize: str = "nfc"
    block: int = BLOCK
    keep: frozenset = frozenset()       # units whose own counts are returned
    buckets: bool = False               # sums per unit bucket (tokens-per-character intervals)
    sample_bytes: int = 0               # bytes per language in the diagnostic sample (0: none)
    seed: int = 0
    source: str = ""
    max_chars: int = MAX_CHARS          # a longer document is an error naming its file (as in engine.job)
    max_chars_option: bool = False      # the command has --max-chars (its fix hint may name it)

    def empty(self) -> Scan:
        out = Scan(Counts.zeros(len(self.adapters), len(self.langs)))
        if self.buckets:
            out.bucket_tokens = np.zeros((len(self.adapters), len(self.langs), UNIT_BUCKETS), dtype=np.int64)
            out.bucket_chars = np.zeros((len(self.langs), UNIT_BUCKETS), dtype=np.int64)
            out.bucket_bytes = np.zeros((len(self.langs), UNIT_BUCKETS), dtype=np.int64)
        if self.sample_bytes:
            out.sample = Sample(self.sample_bytes)
        return out


class Verifier:
    """One worker's verification of the fast path on the corpus's own texts (see the module docstring)."""

    def __init__(self, plan: Plan):
        from ..adapters.fast import FastAdapter

        self.fast = [a for a in plan.adapters if isinstance(a, FastAdapter)]
        self.per_lang = max(1, VERIFY_BYTES // max(1, len(plan.langs)))
        self.done: dict[int, int] = {}      # language -> bytes verified

    def check(self, idx: np.ndarray, texts: list[str], nbytes: np.ndarray) -> None:
        if not self.fast:
            return
        rows = []                           # in each language, the documents read while it is under its share
        live = (idx >= 0) & (nbytes > 0)
        for lang in np.unique(idx[live]).tolist():
            have = self.done.get(lang, 0)
            if have >= self.per_lang:
                continue
            own = np.flatnonzero(live & (idx == lang))
            before = have + np.cumsum(nbytes[own]) - nbytes[own]
            take = own[before < self.per_lang]
            self.done[lang] = have + int(nbytes[take].sum())
            rows.append(take)
        if not rows:
            return
        pick = [texts[r] for r in np.sort(np.concatenate(rows)).tolist()]
        from ..adapters.fast import first_difference

        for a in self.fast:
            if a.disabled:
                continue
            diff = first_difference(a, pick)
            if diff is not None:
                raise Diverged(a.id, diff)


def count_unit(plan: Plan, k: int, acc: Scan, verifier: Verifier | None = None, cache: dict | None = None) -> int:
    """:func:`count_units` of unit ``k`` alone."""
    return count_units(plan, [k], acc, verifier, cache)


def count_units(plan: Plan, ks: list[int], acc: Scan, verifier: Verifier | None = None,
                cache: dict | None = None) -> int:
    """Read units ``ks`` once and add everything :class:`Scan` holds to ``acc``, per unit as if each
    were counted alone; returns their documents. Consecutive row groups of one Parquet file are read
    and counted as one **run** (:func:`run_end`: one Arrow read, one normalisation scan, one library
    call per tokenizer; the per-call costs are paid once per run). Python's cycle collector is paused
    meanwhile: a run allocates many objects (no cycles), which otherwise trigger collections."""
    cache = {} if cache is None else cache
    enabled = gc.isenabled()
    gc.disable()
    try:
        n, i = 0, 0
        while i < len(ks):
            j = run_end(plan, ks, i, cache)
            n += _count_run(plan, ks[i:j], acc, verifier, cache)
            i = j
        return n
    finally:
        if enabled:
            gc.enable()


def run_end(plan: Plan, ks: list[int], i: int, cache: dict) -> int:
    """The end of the run that starts at ``ks[i]``: the next units while they are the following row
    groups of the same Parquet file, at most :data:`RUN_UNITS` of them and :data:`RUN_BYTES` of
    data as stored uncompressed (the footer's sizes; a larger row group is a run of its own)."""
    first = plan.units[ks[i]]
    if first.kind != "rowgroup" or plan.lang_id != "off":
        return i + 1
    pf = _parquet(first.path, cache)
    size, j = pf.row_group_shape(first.index)[1], i + 1
    while j < len(ks) and j - i < RUN_UNITS:
        cl = plan.units[ks[j]]
        if cl.kind != "rowgroup" or cl.path != first.path or cl.lang != first.lang or ks[j] != ks[j - 1] + 1:
            break
        size += pf.row_group_shape(cl.index)[1]
        if size > RUN_BYTES:
            break
        j += 1
    return j


def _parquet(path: str, cache: dict):
    """One open Parquet file per worker (the units of a file come in order)."""
    held = cache.get(("pf",))
    if held is None or held[0] != path:
        held = cache[("pf",)] = (path, parquet_file(Path(path), "shard"))
    return held[1]


def _read_run(plan: Plan, run: list[int], cache: dict) -> tuple[np.ndarray, FlatTexts, np.ndarray]:
    """Language index (into ``plan.langs``; -1: left out), normalised text and the document offsets
    of each unit (len(run)+1) of one run."""
    li = cache.setdefault(("langs",), {lang: i for i, lang in enumerate(plan.langs)})
    cl = plan.units[run[0]]
    if cl.kind == "rowgroup" and plan.lang_id == "off":
        pf = _parquet(cl.path, cache)
        rows = [pf.row_group_shape(plan.units[k].index)[0] for k in run]
        texts, idx = _rowgroups(pf, [plan.units[k].index for k in run], cl, plan, li, cache)
        return idx, normalised(texts, plan.normalize, cache), offsets(np.array(rows, dtype=np.int64))
    rows = read_cluster(cl, text_col=plan.text_col, lang_col=plan.lang_col, block=plan.block, lang_id=plan.lang_id)
    norm = cache.setdefault(("norm",), normalizer(plan.normalize))
    asciiok = not plan.normalize.endswith("+strip")
    texts = [t if asciiok and t.isascii() else norm(t) for _, t in rows]
    idx = np.fromiter((li.get(c, -1) for c, _ in rows), dtype=np.int64, count=len(rows))
    return idx, FlatTexts.of(texts), np.array([0, len(rows)], dtype=np.int64)


def _rowgroups(pf, groups: list[int], cl: Cluster, plan: Plan, li: dict, cache: dict) -> tuple[FlatTexts, np.ndarray]:
    """The texts and language indices (into ``plan.langs``; -1: left out) of row groups ``groups``."""
    texts, t, own, script = _read_groups(pf, groups, cl, plan.text_col, plan.lang_col)
    if own is None:
        return texts, np.full(len(texts), li.get(cl.lang, -1), dtype=np.int64)
    codes, row = _lang_codes(t.column(own), t.column(script) if script else None, Path(cl.path), cache)
    return texts, np.array([li.get(c, -1) for c in codes], dtype=np.int64)[row]


def _is_text(t) -> bool:
    """Whether an Arrow type holds text (string, large string or string view)."""
    import pyarrow as pa

    return (pa.types.is_string(t) or pa.types.is_large_string(t)
            or getattr(pa.types, "is_string_view", lambda _: False)(t))


def _read_groups(pf, groups: list[int], cl: Cluster, text_col: str, lang_col: str | None):
    """Row groups ``groups`` of ``pf`` read in one call: the texts (one Arrow buffer, checked to be
    UTF-8, nulls as empty), the table, and its language and script columns (None where not read)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    p = Path(cl.path)
    own = lang_col if lang_col and cl.lang is None else None
    script = SCRIPT_COLUMN if own == "language" and SCRIPT_COLUMN in pf.names else None
    cols = [text_col] + ([own] if own else []) + ([script] if script else [])
    t = pf.read_row_groups(groups, columns=cols, use_threads=False)
    col = t.column(text_col)
    if pa.types.is_null(col.type):
        return FlatTexts.of([""] * len(col)), t, own, script
    if pa.types.is_dictionary(col.type) and _is_text(col.type.value_type):     # dictionary-encoded text
        col = col.cast(col.type.value_type)
    if not _is_text(col.type):
        raise TokstatError(f"expected text, found {col.type} in column {text_col!r}", path=p,
                           fix="make the text column a string (or null)")
    arr = col.combine_chunks() if col.num_chunks != 1 else col.chunk(0)
    if arr.type != pa.large_string():
        arr = arr.cast(pa.large_string())
    if arr.null_count:
        arr = pc.fill_null(arr, "")
    try:
        arr.validate(full=True)
    except pa.ArrowInvalid:
        bad = next((g for g in groups if not _valid_utf8(pf, g, text_col)), groups[0])
        raise TokstatError(f"invalid UTF-8 in the text column (row group {bad})", path=p,
                           fix="rewrite the column as valid UTF-8 text") from None
    return FlatTexts(arr), t, own, script


def _valid_utf8(pf, g: int, col: str) -> bool:
    import pyarrow as pa

    try:
        pf.read_row_group(g, columns=[col], use_threads=False).column(col).combine_chunks().validate(full=True)
        return True
    except pa.ArrowInvalid:
        return False


def normalised(texts: FlatTexts, form: str, cache: dict) -> FlatTexts:
    """``texts`` normalised as :func:`tokstat.corpus.normalizer` does it, columnar: only the texts
    that hold a character :func:`tokstat.corpus.unsettled` names (found by one RE2 scan of the
    buffer) become Python strings and go through ``unicodedata``; when none changes, the buffer is
    the one read (no copy)."""
    import pyarrow.compute as pc

    if form == "none" or not len(texts):
        return texts
    norm = cache.setdefault(("norm",), normalizer(form))
    if form.endswith("+strip"):                  # strip changes ASCII too: every text
        return FlatTexts.of([norm(t) for t in texts.tolist()])
    pat = cache.get(("unsettled", form))
    if pat is None:
        from ..corpus import unsettled

        pat = cache[("unsettled", form)] = unsettled(form.upper())
    rows = np.flatnonzero(numpy_of(pc.match_substring_regex(texts.arr, pat)))
    if not len(rows):
        return texts
    old = texts.arr.take(arrow_of(rows)).to_pylist()
    new = [norm(t) for t in old]
    changed = [k for k, (a, b) in enumerate(zip(old, new)) if a is not b and a != b]
    if not changed:
        return texts
    out = texts.tolist().copy()
    for k in changed:
        out[rows[k]] = new[k]
    return FlatTexts.of(out)


def _count_run(plan: Plan, run: list[int], acc: Scan, verifier: Verifier | None, cache: dict) -> int:
    idx, texts, bounds = _read_run(plan, run, cache)
    nbytes, nchars = texts.nbytes(), texts.nchars()
    over = np.flatnonzero(nchars > plan.max_chars)
    if len(over):                        # before anything is encoded (engine.job's rule), named as unit and row
        u = int(np.searchsorted(bounds, over[0], side="right")) - 1
        cl, own = plan.units[run[u]], nchars[bounds[u]:bounds[u + 1]]
        n = int(own.max())
        raise TokstatError(f"a document of {n:,} characters ({cl.kind} {cl.index}, row {int(own.argmax())}) is "
                           f"over the limit of {plan.max_chars:,} per text", path=cl.path,
                           fix="split long documents into paragraphs"
                               + (f", or raise the limit with --max-chars {n}" if plan.max_chars_option else ""))
    off, data = texts.offsets(), texts.buffer()
    for u, k in enumerate(run):                  # each unit's leaf, as if it were read alone
        lo, hi = int(bounds[u]), int(bounds[u + 1])
        h = hashlib.sha256(idx[lo:hi].tobytes())
        h.update(nbytes[lo:hi].tobytes())
        h.update(data[int(off[lo] - off[0]):int(off[hi] - off[0])])
        acc.leaves[k] = h.digest()
    if verifier is not None:
        verifier.check(idx, texts, nbytes)
    U, L, T = len(run), len(plan.langs), len(plan.adapters)
    unit = np.repeat(np.arange(U, dtype=np.int64), np.diff(bounds))
    keep = idx >= 0
    live = keep & (nbytes > 0)
    cell = unit[live] * L + idx[live]               # (unit, language) of each non-empty document

    def per_cell(w=None, where=cell) -> np.ndarray:
        return np.bincount(where, weights=w, minlength=U * L).astype(np.int64).reshape(U, L)

    docs, lives = per_cell(where=unit[keep] * L + idx[keep]), per_cell()
    chars, nb = per_cell(nchars[live]), per_cell(nbytes[live])
    tokens = np.zeros((T, U, L), dtype=np.int64)
    if live.any():
        todo = texts if live.all() else texts.filter(live)
        for ai, a in enumerate(plan.adapters):
            n = a.token_counts(todo if getattr(a, "flat_input", False) else todo.tolist(), nbytes[live])
            tokens[ai] = per_cell(n)
    acc.totals += Counts(docs.sum(0), lives.sum(0), chars.sum(0), nb.sum(0), tokens.sum(1))
    acc.read += int(nbytes.sum())
    for u, k in enumerate(run):
        if k in plan.keep:
            acc.units[k] = Counts(docs[u], lives[u], chars[u], nb[u], tokens[:, u])
        if plan.buckets:
            b = k % UNIT_BUCKETS
            acc.bucket_tokens[:, :, b] += tokens[:, u]
            acc.bucket_chars[:, b] += chars[u]
            acc.bucket_bytes[:, b] += nb[u]
        lo, hi = int(bounds[u]), int(bounds[u + 1])
        if plan.sample_bytes and live[lo:hi].any():
            keys = np.random.default_rng([plan.seed, k]).random(hi - lo)
            li_own = idx[lo:hi]
            # the documents that can enter: below their language's cut (once the sample is full,
            # few are, and a unit with none costs no Python loop over its languages)
            cand = live[lo:hi] & (keys < acc.sample.cuts(L)[np.maximum(li_own, 0)])
            if cand.any():
                label = plan.units[k].label
                for lang in np.unique(li_own[cand]).tolist():
                    acc.sample.offer(lang, keys, label, texts, nbytes, np.flatnonzero(cand & (li_own == lang)), lo)
    return len(texts)


# --- execution: this process, forked workers, Ray actors ----------------------------------------

class _Units:
    """A worker of the columnar pass (:func:`tokstat.engine.local.run_pool`): counts chunks of units
    of ``plan`` (inherited by the fork, pickled under spawn), each task's counts sent back."""

    def __init__(self, plan: Plan):
        self.plan = plan

    def start(self) -> None:
        from .local import _single_threaded

        _single_threaded(self.plan)      # the libraries on one thread each: the processes use the cores
        self.verifier, self.cache = Verifier(self.plan), {}

    def task(self, chunk: list[int]) -> tuple[Scan, int, int]:
        acc = self.plan.empty()
        docs = count_units(self.plan, chunk, acc, self.verifier, self.cache)
        return acc, docs, acc.read

    def final(self) -> None:
        return None


def chunks(todo: list[int], workers: int) -> list[list[int]]:
    """Tasks of a few units each, in unit order: enough of them to balance ``workers``, at most a
    run (:data:`RUN_UNITS`) each."""
    size = max(1, min(RUN_UNITS, len(todo) // (8 * max(1, workers)) or 1))
    return [todo[i:i + size] for i in range(0, len(todo), size)]


def run_scan(plan: Plan, todo: list[int], *, workers: int | None = 1, engine: str = "local", address: str | None = None,
             progress=None) -> Scan:
    """Count units ``todo`` of ``plan``; ``workers`` processes (or Ray actors) each read their own
    units. When the fast library is found to differ from the reference on a text, it is turned off
    for that tokenizer (one warning) and the pass is rerun. ``workers`` None: all cores."""
    workers = (os.cpu_count() or 1) if workers is None else workers
    if workers < 1:
        raise TokstatError(f"--workers must be at least 1, not {workers}", fix="pass --workers 1 or more")
    gc.freeze()     # what exists now (modules, tokenizers) is never traversed by a collection, here or in a fork
    try:
        while True:
            try:
                if engine == "ray":
                    from .ray import run_scan_ray

                    return run_scan_ray(plan, todo, workers=workers, address=address, progress=progress)
                return _run_local(plan, todo, workers=workers, progress=progress)
            except Diverged as d:
                a = next(a for a in plan.adapters if a.id == d.ident)
                a._turn_off(f"on the corpus: {d.why}")
    finally:
        gc.unfreeze()


def _run_local(plan: Plan, todo: list[int], *, workers: int, progress) -> Scan:
    acc = plan.empty()
    if workers <= 1 or len(todo) < 2:
        from .local import _cores

        ver, cache = Verifier(plan), {}
        with _cores(plan, workers):
            for part in chunks(todo, 1):
                before = acc.read
                n = count_units(plan, part, acc, ver, cache)
                if progress:
                    progress.advance(n, acc.read - before)
        return acc
    from .local import run_pool

    for kind, value in run_pool(_Units(plan), chunks(todo, workers), workers=workers):
        if kind == "item":
            part, n, nb = value
            acc.merge(part)
            if progress:
                progress.advance(n, nb)
    return acc


def plan_for(corpus, adapters: list[Adapter], units: list[Cluster] | None = None, **kw) -> Plan:
    """The :class:`Plan` of a monolingual corpus made of files (``corpus.meta['files']``); ``units``:
    its :func:`clusters` when the caller has them already (cut with the same ``block``)."""
    meta = corpus.meta
    files = meta.get("files") or []
    block = kw.pop("block", BLOCK)
    return Plan(clusters(files, block) if units is None else units, list(corpus.languages), adapters, block=block,
                text_col=meta.get("text_col") or "text", lang_col=meta.get("lang_col"),
                lang_id=meta.get("lang_id") or "off", normalize=meta.get("normalize", "nfc"),
                source=corpus.name, **kw)


__all__ = ["Cluster", "clusters", "read_cluster", "Counts", "Scan", "Plan", "plan_for", "run_scan", "count_unit",
           "count_units", "normalised", "RUN_UNITS", "RUN_BYTES",
           "BLOCK", "VERIFY_BYTES", "UNIT_BUCKETS"]
