"""Tables with one column per language: TSV/CSV (incl. Tatoeba ``cmn.txt``), JSONL and Parquet."""

from __future__ import annotations

import csv
import json
import sys
from collections.abc import Iterator
from pathlib import Path


from ..corpus import Corpus, Segment
from ..errors import TokstatError
from ..io import parquet_file, regular_file
from ..langs import normalize_lang, normalize_langs
from .fields import lookup
from .textio import read_lines

ID_NAMES = {"id", "sent_id", "segment_id", "seg_id"}
SKIP = {"_", "-", ""}


def _lang_columns(names: list[str], path: Path, columns: list[str] | dict[str, str] | None,
                  dotted: bool = False) -> tuple[dict[str, str], str | None]:
    """Return ``{lang: column}`` and the id column. Explicit ``columns`` name the language of each
    column in order (``_`` skips one) or map languages to column names (``{"en": "text_en"}``;
    with ``dotted``, JSONL, ``translation.en`` reaches into an object); otherwise the header names
    are language codes."""
    id_col = next((c for c in names if c.lower() in ID_NAMES), None)
    if isinstance(columns, dict):
        out: dict[str, str] = {}
        for lang, col in columns.items():
            if col not in names and not (dotted and col.split(".")[0] in names):
                raise TokstatError(f"no column {col!r} for {lang} (columns: {', '.join(names[:8])})", path=path,
                                   fix="pass --columns LANG=COLUMN with existing names" + (" (dotted for objects)" if dotted else ""))
            code = normalize_lang(lang, source=path)
            if code in out:
                raise TokstatError(f"--columns gives language {code} twice", path=path, fix="name each language once")
            out[code] = col
        return out, id_col
    if columns is not None:
        if len(columns) > len(names):
            raise TokstatError(f"--columns names {len(columns)} columns but the file has {len(names)}",
                               path=path, fix="give one language code (or _) per column")
        out: dict[str, str] = {}
        for i, c in enumerate(columns):
            if c in SKIP:
                continue
            lang = normalize_lang(c, source=path)
            if lang in out:
                raise TokstatError(f"--columns gives language {lang} to two columns ({out[lang]!r} and {names[i]!r})",
                                   path=path, fix="give each language one column (_ skips a column)")
            out[lang] = names[i]
        return out, id_col
    out = {}
    known = []
    for c in names:
        if c == id_col:
            continue
        try:
            normalize_lang(c, source=path)
        except TokstatError:
            continue  # a non-language column (domain, attribution, ...) is ignored
        known.append(c)
    codes = normalize_langs(known, source=path)
    for c in known:
        lang = codes[c]
        if lang in out:
            raise TokstatError(f"columns {out[lang]!r} and {c!r} are both language {lang}", path=path,
                               fix="rename or drop one of them, or pick with --columns (e.g. en,_,zh)")
        out[lang] = c
    if not out:
        raise TokstatError(f"no column is named by a language code (columns: {', '.join(names)})", path=path,
                           fix="name the columns en, zh, ... or pass --columns en,zh,_")
    return out, id_col


def _is_tatoeba(path: Path) -> bool:
    if path.suffix.lower() != ".txt":
        return False
    for _, line in read_lines(path):
        cells = line.split("\t")
        return len(cells) == 3 and cells[2].startswith("CC-BY")
    return False


QUOTINGS = ("auto", "csv", "none")
CR_STAND_IN = "\ufdd0"   # a noncharacter: holds a CR's place while the csv module reads the line


def _csv_rows(path: Path, delim: str, errors: str, raw: list[str] | None = None) -> Iterator[tuple[int, list[str]]]:
    """``(line where the row starts, cells)``, RFC 4180 quoting with ``delim``: a quoted field may
    span lines (its line endings kept, CR included); a quote left open is an error, not a swallowed
    file. ``raw``, when given, holds the source lines of the row just yielded."""
    # a field may be a whole document: no 128 KiB field limit (an unclosed quote still ends in an error)
    csv.field_size_limit(min(sys.maxsize, 2**31 - 1))

    bare_cr = [False]

    def lines():
        for no, t in read_lines(path, errors=errors, keepends=True):
            if raw is not None:
                raw.append(t)
            body = t[:-2] if t.endswith("\r\n") else t
            if "\r" in body:
                # the csv module ends a record at a CR in an unquoted field; Python's own writer
                # leaves such fields unquoted (with lineterminator="\n"): a CR there is text
                if CR_STAND_IN in t:
                    raise TokstatError("a line holds both a bare CR and U+FDD0", path=path, line=no,
                                       fix="remove one of them")
                bare_cr[0] = True
                t = body.replace("\r", CR_STAND_IN) + t[len(body):]
            yield t
    reader = csv.reader(lines(), delimiter=delim, strict=True)
    start = 1
    while True:
        try:
            cells = next(reader)
            if bare_cr[0]:
                cells = [c.replace(CR_STAND_IN, "\r") for c in cells]
                bare_cr[0] = False
        except StopIteration:
            return
        except csv.Error as e:
            raise TokstatError(f"{'CSV' if delim == ',' else 'quoted TSV'}: {e} (a quote opened on line {start} "
                               "is never closed?)", path=path, line=start,
                               fix='close the quote, or double a quote inside a field ("")'
                                   + ("" if delim == "," else "; --quoting none reads quotes as text")) from None
        yield start, cells
        if raw is not None:
            raw.clear()
        start = reader.line_num + 1


def _tsv_quoting(path: Path, errors: str) -> str:
    """How a TSV file quotes: ``"csv"`` when a spreadsheet-style writer quoted it (RFC 4180 with
    tabs: fields holding a tab, newline, CR or quote are wrapped in quotes, inner quotes doubled),
    ``"none"`` when quotes are text (Tatoeba: ``"Hi," he said.``).

    A file is read as quoted only when it parses as such *and* shows it: a quoted field holding a
    tab, line break, CR or doubled quote, or a header whose every name is quoted. A file whose
    only quotes wrap whole fields (``"Hi."``) could be either: it is read literally, with a warning.
    """
    if not any(t.startswith('"') or '\t"' in t for _, t in read_lines(path, errors=errors)):
        return "none"
    raw: list[str] = []
    wrapped = header_quoted = False
    try:
        for n, (_, cells) in enumerate(_csv_rows(path, "\t", errors, raw)):
            lit = "".join(raw)
            lit = lit[:len(lit) - (2 if lit.endswith("\r\n") else 1 if lit.endswith("\n") else 0)]
            lits = lit.split("\t")
            if len(raw) > 1 or len(lits) != len(cells):
                return "csv"          # a field spans lines or holds a tab
            for lc, c in zip(lits, cells):
                if lc != c:
                    if any(ch in c for ch in '"\r'):
                        return "csv"  # a doubled quote or a CR inside quotes
                    wrapped = True
            if n == 0:
                header_quoted = all(c.startswith('"') and c.endswith('"') and len(c) > 1 for c in lits)
    except TokstatError:
        return "none"                 # not valid quoting: the quotes are text
    if header_quoted:
        return "csv"
    if wrapped:
        import warnings

        warnings.warn(f"{path}: fields wrapped in double quotes are read as text, quotes kept (pass "
                      "--quoting csv if a spreadsheet wrote the file)", stacklevel=3)
    return "none"


def load_delimited(path: Path, *, columns: list[str] | dict[str, str] | None = None, header: bool | None = None,
                   encoding_errors: str = "strict", quoting: str = "auto") -> Corpus:
    """TSV (``.tsv``, ``.txt``) or CSV (``.csv``: RFC 4180 quoting).

    TSV ``quoting``: ``"none"`` (tabs separate, quotes are text), ``"csv"`` (RFC 4180 quoting with
    tabs, as spreadsheets and ``pandas.to_csv(sep="\\t")`` write it) or ``"auto"``: quoted when the
    file shows it (see :func:`_tsv_quoting`). The mode read is recorded in the corpus ``meta``.
    Tatoeba/manythings exports (``cmn.txt``: English, translation, attribution; no header) are
    recognised: the second column's language is the file stem (``cmn`` -> ``zh``); they are never quoted.
    """
    regular_file(path, "corpus file")   # a FIFO or a device would be read forever
    if quoting not in QUOTINGS:
        raise TokstatError(f"unknown quoting {quoting!r}", fix=f"use one of {', '.join(QUOTINGS)}")
    delim = "," if path.suffix.lower() == ".csv" else "\t"
    tatoeba = columns is None and header is None and _is_tatoeba(path)
    if tatoeba:
        columns, header = ["en", path.stem, "_"], False
    if delim == ",":
        if quoting == "none":
            raise TokstatError("--quoting none does not apply to CSV", path=path,
                               fix="drop --quoting (CSV is always RFC 4180), or save the file as TSV")
        quoting = "csv"
    elif tatoeba:
        quoting = "none" if quoting == "auto" else quoting
    elif quoting == "auto":
        quoting = _tsv_quoting(path, encoding_errors)

    def rows():
        if quoting == "csv":
            yield from _csv_rows(path, delim, encoding_errors)
        else:
            for no, t in read_lines(path, errors=encoding_errors):
                yield no, t.split("\t")

    first = next(rows(), None)
    if first is None:
        raise TokstatError("empty file", path=path, fix="add a header line and rows")
    first = first[1]
    if header is None:
        header = columns is None or isinstance(columns, dict)   # LANG=COLUMN names header columns
    names = first if header else [str(i) for i in range(len(first))]
    mapping, id_col = _lang_columns(names, path, columns)
    idx = {lang: names.index(c) for lang, c in mapping.items()}
    id_i = names.index(id_col) if id_col else None

    def gen():
        it = rows()
        if header:
            next(it)
        for n, (line, cells) in enumerate(it):
            if len(cells) != len(names):
                raise TokstatError(f"row has {len(cells)} fields, expected {len(names)}", path=path,
                                   line=line, fix="check for a missing tab/comma or a stray newline")
            sid = cells[id_i] if id_i is not None else str(n + 1)
            yield Segment(sid, {lang: cells[i] for lang, i in idx.items()})

    return Corpus(path.stem, list(mapping), gen, [path],
                  {"loader": "tatoeba" if tatoeba else "table", "columns": columns, "quoting": quoting})


def _field(obj: dict, col: str):
    """``obj[col]``, or for a dotted name not present as such, the path into nested objects."""
    if col in obj or "." not in col:
        return obj.get(col)
    return lookup(obj, col)[1]


def _check_paths(obj: dict, mapping: dict[str, str], path: Path, no: int) -> None:
    """A dotted column must exist in the first object (a misspelt one would give all-empty segments)."""
    for lang, col in mapping.items():
        if "." in col and col not in obj and not lookup(obj, col)[0]:
            raise TokstatError(f"no field {col!r} for {lang} in the first object", path=path, line=no,
                               fix="pass --columns LANG=FIELD.SUBFIELD with names that exist")


def _json_objects(path: Path) -> Iterator[tuple[int, dict]]:
    """``(line number, object)`` for every non-blank line of a JSONL file, streamed; a line that is
    not one JSON object is an error naming it."""
    for no, line in read_lines(path):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as e:
            raise TokstatError(f"malformed JSON ({e.msg})", path=path, line=no, fix="make every line one JSON object") from None
        if not isinstance(obj, dict):
            raise TokstatError("a line is not a JSON object", path=path, line=no, fix="make every line one JSON object")
        yield no, obj


def _jsonl_keys(path: Path) -> list[str]:
    """The keys of every object of a JSONL file, in order of first appearance (one streaming pass:
    a key that first appears on line 100,000 is a column like any other)."""
    keys: dict[str, None] = {}
    for _, obj in _json_objects(path):
        keys.update(dict.fromkeys(obj))
    if not keys:
        raise TokstatError("no JSON object in the file", path=path, fix='write one object per line, e.g. {"en": "...", "zh": "..."}')
    return list(keys)


def load_polars(path: Path, *, columns: list[str] | dict[str, str] | None = None, batch_size: int = 4096,
                id_prefix: str = "") -> Corpus:
    """JSONL (``.jsonl``/``.ndjson``) or Parquet, streamed in batches with polars. Without an id
    column, segment ids are ``id_prefix`` + the row number (from 1)."""
    regular_file(path, "corpus file")   # a FIFO or a device would be read forever
    is_parquet = path.suffix.lower() == ".parquet"

    if is_parquet:
        names = parquet_file(path, "corpus file").names
    else:
        names = _jsonl_keys(path)
    mapping, id_col = _lang_columns(names, path, columns, dotted=not is_parquet)
    sel = list(mapping.values()) + ([id_col] if id_col else [])

    def text(v, no):
        if v is None or isinstance(v, str):
            try:
                (v or "").encode("utf-8")
            except UnicodeEncodeError as e:
                raise TokstatError(f"a lone surrogate {v[e.start]!r} is not Unicode text", path=path, line=no,
                                   fix="write the character itself (or its surrogate pair) in the JSON") from None
            return v or ""
        raise TokstatError(f"expected text, found {type(v).__name__}", path=path, line=no,
                           fix="make every language column a string (or null)")

    def gen_jsonl():
        # pulled line by line: memory stays bounded however large the file (polars' background
        # batches run ahead of a slow consumer)
        n = 0
        for no, obj in _json_objects(path):
            n += 1
            if n == 1:
                _check_paths(obj, mapping, path, no)
            sid = obj.get(id_col) if id_col else None
            if sid is not None and (isinstance(sid, bool) or not isinstance(sid, (str, int))):
                raise TokstatError(f"the id column {id_col!r} holds a {type(sid).__name__}, not a text or an integer",
                                   path=path, line=no, fix="give every segment a string or integer id, or drop the column")
            yield Segment(str(sid) if sid is not None else f"{id_prefix}{n}",
                          {lang: text(_field(obj, c), no) for lang, c in mapping.items()})

    def gen_parquet():
        import pyarrow as pa

        n = 0
        try:
            pf = parquet_file(path, "corpus file")
            if id_col:
                t = pf.schema.field(id_col).type
                if not (pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_integer(t)
                        or pa.types.is_null(t)):
                    raise TokstatError(f"the id column {id_col!r} is of type {t}, not text or integers", path=path,
                                       fix="give every segment a string or integer id, or drop the column")
            for rb in pf.iter_batches(batch_size=batch_size, columns=sel):
                cols = {lang: rb.column(c).to_pylist() for lang, c in mapping.items()}
                ids = rb.column(id_col).cast("string").to_pylist() if id_col else None
                for k in range(rb.num_rows):
                    n += 1
                    yield Segment(ids[k] if ids and ids[k] is not None else f"{id_prefix}{n}",
                                  {lang: text(cols[lang][k], None) for lang in mapping})
        except OSError as e:
            raise TokstatError(f"cannot read rows ({str(e).splitlines()[0]})", path=path,
                               fix="check that the file is complete Parquet") from None
        except UnicodeDecodeError as e:
            raise TokstatError(f"invalid UTF-8 in a string column (in the rows from {n + 1}) (byte 0x{e.object[e.start]:02x})",
                               path=path, fix="rewrite the column as valid UTF-8 text") from None

    gen = gen_parquet if is_parquet else gen_jsonl
    return Corpus(path.stem, list(mapping), gen, [path], {"loader": "polars", "columns": columns})


def load_sharded(paths: list[Path], *, columns: list[str] | dict[str, str] | None = None) -> Corpus:
    """Many JSONL/Parquet files with the same language columns as one corpus, read in path order;
    ``shards`` lets each worker read whole files. Ids without an id column are ``STEM:ROW``."""
    for p in paths:
        regular_file(p, "shard")
    # a JSONL shard without a row (a writer with more shards than rows) holds nothing to lose
    full = [p for p in paths if p.suffix.lower() == ".parquet" or any(t.strip() for _, t in read_lines(p))]
    if not full:
        raise TokstatError(f"all {len(paths)} shards are empty", path=paths[0], fix="check the files")
    shards = [load_polars(p, columns=columns, id_prefix=f"{p.stem}:") for p in full]
    langs = shards[0].languages
    for p, sh in zip(full, shards):
        if sh.languages != langs:
            raise TokstatError(f"shard has languages {', '.join(sh.languages)}, the first shard "
                               f"{full[0].name} has {', '.join(langs)}", path=p,
                               fix="give every shard the same language columns")

    def gen():
        for sh in shards:
            yield from sh

    name = paths[0].parent.name or paths[0].stem
    return Corpus(name, list(langs), gen, list(paths), {"loader": "polars-shards", "columns": columns},
                  shards=shards)
