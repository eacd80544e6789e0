"""Monolingual corpora: documents, each in one language (pretraining data, product traffic).

A monolingual corpus is a corpus whose segments each hold *one* language's text: the same
:class:`~tokstat.corpus.Corpus` every stage reads (``meta["kind"] == "monolingual"``), so compare,
the engine and the metrics need no second pipeline; a premium needs aligned content and is null
on it unless calibrated on a parallel corpus (:func:`tokstat.compare.compare` ``calibrate``).

Layouts understood:

* a table (JSONL or Parquet, one file, a folder or a glob of shards) with a text column and a
  language column (``--text-col``, ``--lang-col``; defaults ``text`` and ``language``/``lang``);
  FineWeb-2's ``language`` + ``language_script`` (``cmn`` + ``Hani``) are read together;
* shards in per-language folders (``data/zh/*.parquet``, ``data/en/*.jsonl``: CulturaX, MADLAD-400,
  FineWeb-2's ``data/cmn_Hani/train/*.parquet``): the language is the folder's name;
* one file per language (``en.txt``, ``zh.txt``) of any lengths, one document per line
  (``--kind monolingual``);
* any of the above with one language for everything (``--lang zh``).

A document whose language value is empty or null is ``und`` (counted, never dropped); one without
text is counted as empty, as in every corpus.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from ..corpus import Corpus, Segment
from ..errors import TokstatError
from ..io import parquet_file, regular_file
from ..langs import label, normalize_lang
from .table import _json_objects
from .textio import read_lines

if TYPE_CHECKING:
    import numpy as np

LANG_COLUMNS = ("language", "lang")
#: gzip-compressed JSON lines (MADLAD-400 ships ``data/zh/zh_clean_0000.jsonl.gz``)
GZ_SUFFIXES = (".jsonl.gz", ".ndjson.gz", ".json.gz")


def is_gz_jsonl(path: Path) -> bool:
    return path.name.lower().endswith(GZ_SUFFIXES)


def _gz_objects(path: Path):
    """``(line number, object)`` of a gzip-compressed JSONL file, streamed; invalid UTF-8, a line
    that is not one JSON object or a damaged archive is an error naming the line."""
    import gzip
    import json
    import zlib

    regular_file(path, "shard")
    try:
        with gzip.open(path, "rb") as f:
            for no, raw in enumerate(f, 1):
                if not raw.strip():
                    continue
                try:
                    obj = json.loads(raw.decode("utf-8"))
                except UnicodeDecodeError as e:
                    raise TokstatError(f"invalid UTF-8 at byte {e.start} of the line", path=path, line=no,
                                       fix="rewrite the file as UTF-8") from None
                except json.JSONDecodeError as e:
                    raise TokstatError(f"malformed JSON ({e.msg})", path=path, line=no,
                                       fix="make every line one JSON object") from None
                if not isinstance(obj, dict):
                    raise TokstatError("a line is not a JSON object", path=path, line=no,
                                       fix="make every line one JSON object")
                yield no, obj
    except (OSError, EOFError, zlib.error) as e:
        raise TokstatError(f"cannot read the gzip file ({str(e).splitlines()[0] if str(e) else type(e).__name__})",
                           path=path, fix="check that the archive is complete") from None
SCRIPT_COLUMN = "language_script"
UND = "und"


def columns_of(path: Path) -> list[str]:
    """The column names of a Parquet file (its schema) or of a JSONL file (its first object)."""
    regular_file(path, "shard")       # a FIFO or a device would be read forever
    if is_gz_jsonl(path):
        for _, obj in _gz_objects(path):
            return list(obj)
        return []
    if path.suffix.lower() == ".parquet":
        return parquet_file(path, "shard").names
    for _, obj in _json_objects(path):
        return list(obj)
    return []


def looks_monolingual(path: Path) -> bool:
    """A table with a ``text`` column and a language column, and no column named by a language."""
    names = columns_of(path)
    return "text" in names and any(c in names for c in LANG_COLUMNS)


def _lang_of(value, script, path: Path, cache: dict) -> str:
    """A language value (and FineWeb-2's script) -> tokstat's code; empty or null -> ``und``."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return UND
    if not isinstance(value, str):
        raise TokstatError(f"the language column holds a {type(value).__name__}, not a language code", path=path,
                           fix="give each document a language code (e.g. zh, cmn_Hani), or --lang-col NAME")
    key = (value, script)
    if key not in cache:
        script = script if isinstance(script, str) and script.strip() else None
        tail = script.replace("-", "_").split("_")[-1] if script else None
        spelt = value if not tail or value.replace("-", "_").endswith("_" + tail) else f"{value}_{tail}"
        code = label(value.strip(), script=script, source=path)
        spellings = cache.setdefault(None, {})     # code -> (first spelling, its file), over every file given this cache
        first = spellings.setdefault(code, (spelt, path))
        if first[0] != spelt:
            where = "" if Path(first[1]) == Path(path) else f" (in {Path(first[1]).name})"
            raise TokstatError(f"the language column spells one language two ways: {first[0]!r}{where} and {spelt!r} "
                               f"are both {code}", path=path,
                               fix="write one spelling for each language in the column (tokstat never merges two "
                               "spellings silently), e.g. rewrite the column with a single code per language")
        cache[key] = code
    return cache[key]


def _check_text(v, path: Path, no) -> str:
    if v is None:
        return ""
    if not isinstance(v, str):
        raise TokstatError(f"expected text, found {type(v).__name__}", path=path, line=no,
                           fix="make the text column a string (or null)")
    try:
        v.encode("utf-8")
    except UnicodeEncodeError as e:
        raise TokstatError(f"a lone surrogate {v[e.start]!r} is not Unicode text", path=path, line=no,
                           fix="write the character itself (or its surrogate pair)") from None
    return v


def documents(path: Path, *, text_col: str, lang_col: str | None, lang: str | None,
              id_prefix: str = "", batch_size: int = 2048, lang_id: str = "off",
              cache: dict | None = None) -> Iterator[tuple[str, str, str]]:
    """``(id, language, text)`` of every document of one JSONL/Parquet/text file, streamed; with
    ``lang_id`` (``doc``, ``spans``: :mod:`tokstat.langid`) the language is identified, and with
    ``spans`` a document yields one item per language span (ids ``ID#1``, ``ID#2``, …)."""
    if lang_id != "off":
        from ..langid import identify, spans

        for did, _, text in documents(path, text_col=text_col, lang_col=None, lang="und", id_prefix=id_prefix,
                                      batch_size=batch_size):
            if lang_id == "doc" or not text.strip():
                yield did, identify(text)[0] if text.strip() else UND, text
            else:
                parts = spans(text)
                for k, (code, part) in enumerate(parts, 1):
                    yield (f"{did}#{k}" if len(parts) > 1 else did), code, part
        return
    cache = {} if cache is None else cache
    suf = path.suffix.lower()
    if suf == ".parquet":
        pf = parquet_file(path, "shard")
        names = pf.names
        script = SCRIPT_COLUMN if lang_col == "language" and SCRIPT_COLUMN in names else None
        sel = [text_col] + ([lang_col] if lang_col else []) + ([script] if script else [])
        n = 0
        try:
            for rb in pf.iter_batches(batch_size=batch_size, columns=sel):
                texts = rb.column(text_col).to_pylist()
                langs = rb.column(lang_col).to_pylist() if lang_col else None
                scripts = rb.column(script).to_pylist() if script else None
                for k, t in enumerate(texts):
                    n += 1
                    code = lang or _lang_of(langs[k], scripts[k] if scripts else None, path, cache)
                    yield f"{id_prefix}{n}", code, _check_text(t, path, None)
        except OSError as e:
            raise TokstatError(f"cannot read rows ({str(e).splitlines()[0]})", path=path,
                               fix="check that the file is complete Parquet") from None
        except UnicodeDecodeError:
            raise TokstatError(f"invalid UTF-8 in the text column (in the rows from {n + 1})", path=path,
                               fix="rewrite the column as valid UTF-8 text") from None
    elif suf in (".jsonl", ".ndjson") or is_gz_jsonl(path):
        n = 0
        for no, obj in (_gz_objects(path) if is_gz_jsonl(path) else _json_objects(path)):
            n += 1
            if n == 1 and text_col not in obj:
                raise TokstatError(f"no field {text_col!r} in the first object (fields: {', '.join(list(obj)[:8])})",
                                   path=path, line=no, fix="name the text field with --text-col")
            code = lang or _lang_of(obj.get(lang_col), obj.get(SCRIPT_COLUMN) if lang_col == "language" else None,
                                    path, cache)
            yield f"{id_prefix}{n}", code, _check_text(obj.get(text_col), path, no)
    else:   # a text file: one document per line, the file's language given
        for no, t in read_lines(path):
            yield f"{id_prefix}{no}", lang, t


def _distinct(col) -> tuple[list, np.ndarray]:
    """A column's distinct values (in order of first appearance, None for null) and each row's index into them."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    from ..utf8 import numpy_of

    arr = col.combine_chunks() if col.num_chunks != 1 else col.chunk(0)
    if pa.types.is_null(arr.type):
        return [None], np.zeros(len(arr), dtype=np.int64)
    d = arr if pa.types.is_dictionary(arr.type) else pc.dictionary_encode(arr)
    values = d.dictionary.to_pylist() + [None]
    ind = pc.fill_null(d.indices, len(values) - 1) if d.indices.null_count else d.indices
    return values, numpy_of(ind).astype(np.int64)


def _lang_codes(lang, script, p: Path, cache: dict) -> tuple[list[str], np.ndarray]:
    """The language codes of a language (and FineWeb-2 script) column: the distinct ones and each
    row's index into them; each distinct (language, script) pair is read once, in order of first
    appearance (so the first bad value is the one an error names)."""
    import numpy as np
    import pyarrow as pa

    try:
        lv, lx = _distinct(lang)
        sv, sx = _distinct(script) if script is not None else ([None], np.zeros(len(lx), dtype=np.int64))
    except (pa.ArrowNotImplementedError, pa.ArrowInvalid, pa.ArrowTypeError):   # a column Arrow cannot encode
        ls = lang.to_pylist()
        ss = script.to_pylist() if script is not None else [None] * len(ls)
        return [_lang_of(v, s, p, cache) for v, s in zip(ls, ss)], np.arange(len(ls))
    uniq, first, inv = np.unique(lx * len(sv) + sx, return_index=True, return_inverse=True)
    codes: list[str] = [""] * len(uniq)
    for u in np.argsort(first, kind="stable").tolist():
        a, b = divmod(int(uniq[u]), len(sv))
        codes[u] = _lang_of(lv[a], sv[b], p, cache)
    return codes, inv.reshape(-1)


def _languages(files: list[tuple[Path, str | None]], *, text_col: str, lang_col: str | None,
               lang_id: str = "off", composition: dict | None = None) -> set[str]:
    """Every language of the files: the given ones, and one pass over the language column of the
    others (Parquet: that column only, row group by row group), or over the identified documents.
    ``composition``, a dict, receives each Parquet file's documents per language of every row
    group (``{path: [{language: documents}, ...]}``): what budget's sample is stratified and weighted by."""
    out: set[str] = set()
    cache: dict = {}            # one for every file: two spellings of a language across shards are found too
    for p, lang in files:
        if lang_id != "off":
            out.update(code for _, code, _ in documents(p, lang=None, text_col=text_col, lang_col=None, lang_id=lang_id))
        elif lang is not None:
            out.add(lang)
        elif p.suffix.lower() == ".parquet":
            import numpy as np

            pf = parquet_file(p, "shard")
            script = SCRIPT_COLUMN if lang_col == "language" and SCRIPT_COLUMN in pf.names else None
            groups = []
            try:
                for g in range(pf.num_row_groups):
                    t = pf.read_row_group(g, columns=[lang_col] + ([script] if script else []), use_threads=False)
                    # the distinct (language, script) pairs, in order of first appearance: one message
                    codes, row = _lang_codes(t.column(lang_col), t.column(script) if script else None, p, cache)
                    n = np.bincount(row, minlength=len(codes)) if len(row) else np.zeros(len(codes), dtype=np.int64)
                    got: dict[str, int] = {}
                    for code, k in zip(codes, n.tolist()):
                        if k:
                            got[code] = got.get(code, 0) + k
                    groups.append(got)
                    out.update(got)
            except OSError as e:
                raise TokstatError(f"cannot read the language column ({str(e).splitlines()[0]})", path=p,
                                   fix="check that the file is complete Parquet") from None
            if composition is not None:
                composition[str(p)] = groups
        else:
            out.update(code for _, code, _ in documents(p, lang=None, text_col=text_col, lang_col=lang_col, cache=cache))
    return out


def file_names(paths) -> dict[str, str]:
    """A name for each file of a corpus, unique among them, that its documents' ids begin with: the
    folder and stem (``train/000_00000``), with more of the path where two would share it
    (FineWeb-2's ``ace_Arab/train/000_00000`` beside ``ace_Latn/train/000_00000``).

    >>> file_names(["d/a/train/0.parquet", "d/b/train/0.parquet", "d/c/x/1.jsonl"])
    {'d/a/train/0.parquet': 'a/train/0', 'd/b/train/0.parquet': 'b/train/0', 'd/c/x/1.jsonl': 'x/1'}
    """
    paths = [str(p) for p in paths]
    parts = {p: Path(p).with_name(Path(p).name.split(".")[0]).parts for p in paths}
    depth = {p: 2 for p in paths}
    while True:
        names = {p: "/".join(parts[p][-depth[p]:]) for p in paths}
        seen: dict[str, list[str]] = {}
        for p, n in names.items():
            seen.setdefault(n, []).append(p)
        clash = [p for ps in seen.values() if len(ps) > 1 for p in ps if depth[p] < len(parts[p])]
        if not clash:
            return names
        for p in clash:
            depth[p] += 1


def _same_columns(files: list[tuple[Path, str | None]], text_col: str, lang_col: str | None, first: Path) -> None:
    """Every table shard has the text column, and the language column where its language is read
    from it (a shard given its language by its folder needs none): one error naming the shard, its
    columns and the first shard that has them — never a missing column found half-way through a pass."""
    for p, lang in files:
        if p == first or not (p.suffix.lower() in (".parquet", ".jsonl", ".ndjson") or is_gz_jsonl(p)):
            continue
        names = columns_of(p)
        need = [text_col] + ([lang_col] if lang_col and lang is None else [])
        missing = [c for c in need if c not in names]
        if missing:
            near = [n for n in names if n.lower() in {c.lower() for c in missing}]
            what = "text" if missing[0] == text_col else "language"
            raise TokstatError(f"no {what} column {missing[0]!r} (columns: {', '.join(names[:8]) or 'none'}), which the "
                               f"first shard {first.name} has", path=p,
                               fix=(f"rename {near[0]!r} to {missing[0]!r} in this shard" if near else
                                    "give every shard the same columns, or pass the shards that have them"))


def load_monolingual(files: list[tuple[Path, str | None]], *, text_col: str | None = None, lang_col: str | None = None,
                     name: str | None = None, lang_id: str = "off") -> Corpus:
    """Documents of ``files`` (``(path, language or None)``: None reads the language column) as a
    monolingual corpus; each file is a shard. The languages are found with one pass over the
    language column (Parquet: that column only)."""
    if not files:
        raise TokstatError("no document files", fix="pass JSONL/Parquet shards or language files")
    for p, _ in files:
        regular_file(p, "shard")
    text_col = text_col or "text"
    tables = [p for p, lang in files if p.suffix.lower() in (".parquet", ".jsonl", ".ndjson") or is_gz_jsonl(p)]
    if tables:
        names = columns_of(tables[0])
        if text_col not in names:
            raise TokstatError(f"no text column {text_col!r} (columns: {', '.join(names[:8])})", path=tables[0],
                               fix="name it with --text-col")
        if lang_id != "off":
            if lang_col is not None:
                raise TokstatError("--lang-id identifies every document's language: it cannot be read from --lang-col "
                                   "too", path=tables[0], fix="drop one of --lang-id and --lang-col")
        elif lang_col is None and any(lang is None for _, lang in files):
            lang_col = next((c for c in LANG_COLUMNS if c in names), None)
            if lang_col is None:
                raise TokstatError(f"no language column (columns: {', '.join(names[:8])})", path=tables[0],
                                   fix="name it with --lang-col, or give the language with --lang")
        elif lang_col is not None and lang_col not in names:
            raise TokstatError(f"no language column {lang_col!r} (columns: {', '.join(names[:8])})", path=tables[0],
                               fix="name it with --lang-col")
        _same_columns(files, text_col, lang_col if lang_id == "off" else None, first=tables[0])
    kw = {"text_col": text_col, "lang_col": lang_col}
    composition: dict = {}
    langs = sorted(_languages(files, lang_id=lang_id, composition=composition, **kw), key=lambda k: (k == UND, k))
    if not langs:
        raise TokstatError("no document in the files", path=files[0][0], fix="check the files")
    multi = len(files) > 1
    names = file_names([p for p, _ in files])

    def shard(p: Path, lang: str | None) -> Corpus:
        prefix = f"{names[str(p)]}:" if multi else ""

        def gen():
            for did, code, text in documents(p, lang=lang, id_prefix=prefix, lang_id=lang_id, **kw):
                yield Segment(did, {code: text})
        return Corpus(p.stem, list(langs), gen, [p], {"loader": "monolingual", "kind": "monolingual"})

    shards = [shard(p, lang) for p, lang in files]

    def gen():
        for sh in shards:
            yield from sh

    meta = {"loader": "monolingual", "kind": "monolingual", "text_col": text_col, "lang_col": lang_col,
            "files": [(str(p), lang) for p, lang in files], "lang_id": lang_id, "composition": composition}
    if lang_id != "off":
        from ..langid import signature

        meta["lang_id_signature"] = signature() + ("/spans" if lang_id == "spans" else "")
    return Corpus(name or files[0][0].parent.name or files[0][0].stem, list(langs), gen, [p for p, _ in files], meta,
                  shards=shards if multi else None)


def language_folders(directory: Path) -> list[tuple[Path, str]] | None:
    """Per-language folders of shards (``zh/*.parquet``, ``cmn_Hani/train/*.parquet``): ``[(shard,
    language)]``, or None when the folder is not laid out that way."""
    from . import SHARD_SUFFIXES

    out = []
    subs = [d for d in sorted(directory.iterdir()) if d.is_dir() and not d.name.startswith(".")]
    if not subs:
        return None
    named: dict[str, Path] = {}          # language -> its folder
    unnamed: list[Path] = []             # folders of documents not named by a language code
    for d in subs:
        files = sorted(q for q in d.rglob("*") if (q.suffix.lower() in SHARD_SUFFIXES + (".txt",) or is_gz_jsonl(q))
                       and not q.is_dir())
        if not files:
            continue
        try:
            code = normalize_lang(d.name, source=d)
        except TokstatError:
            unnamed.append(d)
            continue
        if code in named:
            raise TokstatError(f"two folders for language {code}: {named[code].name}/ and {d.name}/", path=directory,
                               fix="keep one folder per language (tokstat never merges two spellings silently): "
                               "move the files of one into the other")
        named[code] = d
        out.extend((q, code) for q in files)
    if unnamed and named:
        raise TokstatError(f"the folder {unnamed[0].name}/ is not named by a language code (beside "
                           f"{', '.join(d.name + '/' for d in named.values())})", path=unnamed[0],
                           fix="rename it to its language code (e.g. zh/, cmn_Hani/) or move it out of the corpus folder")
    if not out:
        return None
    return out


def monolingual_textdir(directory: Path, files: dict[str, Path]) -> Corpus:
    """One file per language of any lengths, one document per line (``--kind monolingual``)."""
    return load_monolingual([(p, lang) for lang, p in files.items()], name=directory.name)


__all__ = ["load_monolingual", "looks_monolingual", "language_folders", "monolingual_textdir", "documents", "UND"]
