"""Hugging Face ``datasets``: a ``save_to_disk`` folder, or a hub id / local data folder via ``load_dataset``.

Columns are named per language (``{"en": "sentence_eng_Latn"}``); a dotted name reaches into a
struct (``translation.zh``). FLORES+-style datasets, with one config per language, are aligned by
row with ``configs={"en": "eng_Latn", "zh": "cmn_Hans"}`` and one text column.
Never runs remote code (``trust_remote_code`` is not passed).
"""

from __future__ import annotations

from pathlib import Path

from ..corpus import Corpus, Segment
from ..errors import TokstatError
from ..langs import normalize_langs
from .fields import lookup


def _text(v, lang: str, col: str, n: int, path: str) -> str:
    """A text cell: a string, or None for an empty segment; anything else (ints, lists, structs) is
    an error, never turned into its Python repr."""
    if v is None or isinstance(v, str):
        return v or ""
    raise TokstatError(f"column {col!r} ({lang}) holds {type(v).__name__} values, not text (row {n})", path=path,
                       fix="name a text column with --columns LANG=COLUMN (dotted names reach into structs)")


def _check_columns(row: dict, columns: dict[str, str], path: str) -> None:
    """The first row must have every named column: a misspelt name would give all-empty segments."""
    for lang, col in columns.items():
        if not lookup(row, col)[0]:
            keys = ", ".join(list(row)[:8])
            raise TokstatError(f"no column {col!r} for {lang} (the rows have: {keys})", path=path,
                               fix="pass --columns LANG=COLUMN with existing names (dotted for structs)")


def _open(path: str, config: str | None, split: str):
    import datasets

    p = Path(path)
    try:
        if p.is_dir() and ((p / "dataset_info.json").exists() or (p / "state.json").exists()
                           or (p / "dataset_dict.json").exists()):
            ds = datasets.load_from_disk(str(p))
            if isinstance(ds, datasets.DatasetDict):
                if split not in ds:
                    raise TokstatError(f"split {split!r} not in {sorted(ds)}", path=p,
                                       fix="pass --split with one of these")
                ds = ds[split]
            return ds
        return datasets.load_dataset(path, config, split=split, streaming=True)
    except TokstatError:
        raise
    except Exception as e:  # network, missing dataset, bad config: one line that names the fix
        first = str(e).splitlines()[0] if str(e) else type(e).__name__
        if p.is_dir():
            raise TokstatError(f"cannot read the saved dataset ({first})", path=p,
                               fix="save it again with Dataset.save_to_disk (a file of it is damaged or missing)") from None
        raise TokstatError(f"cannot load Hugging Face dataset {path!r}"
                           f"{f' config {config!r}' if config else ''}: {first}",
                           fix="check the id/config, run once with network so it is cached, "
                               "or set HF_DATASETS_OFFLINE=1 with a filled cache") from None


def load_hf(path: str, *, config: str | None = None, split: str = "train",
            columns: dict[str, str] | None = None, configs: dict[str, str] | None = None,
            text_column: str = "text", id_column: str | None = None, name: str | None = None) -> Corpus:
    """Stream rows as segments; see module docstring for ``columns`` and ``configs``."""
    if not columns and not configs:
        raise TokstatError(f"say which column holds which language for {path}",
                           fix="pass --columns en=COL,zh=COL (or a manifest with configs)")
    given = dict(configs or columns)
    codes = normalize_langs(list(given), source=path)   # the rule of every loader (en-US -> en, ...)
    mapped: dict[str, str] = {}
    for raw, col in given.items():
        if codes[raw] in mapped:
            first = next(r for r in given if codes[r] == codes[raw])
            raise TokstatError(f"{first!r} and {raw!r} are both language {codes[raw]}", path=path,
                               fix="name each language once in --columns")
        mapped[codes[raw]] = col
    if configs:
        configs = mapped
    else:
        columns = mapped
    langs = list(mapped)

    def gen():
        if configs:
            streams = {lang: iter(_open(path, cfg, split)) for lang, cfg in configs.items()}
            n = 0
            while True:
                rows = {lang: next(it, None) for lang, it in streams.items()}
                if all(r is None for r in rows.values()):
                    return
                if any(r is None for r in rows.values()):
                    raise TokstatError("per-language configs have different row counts", path=path,
                                       fix="use configs from one aligned release")
                n += 1
                first = next(iter(rows.values()))
                sid = str(first.get(id_column)) if id_column else str(n)
                if n == 1:
                    for lang, r in rows.items():
                        _check_columns(r, {lang: text_column}, path)
                yield Segment(sid, {lang: _text(r.get(text_column), lang, text_column, n, path) for lang, r in rows.items()})
        else:
            for n, row in enumerate(_open(path, config, split), 1):
                if n == 1:
                    _check_columns(row, columns, path)
                sid = str(row.get(id_column)) if id_column and id_column in row else str(n)
                yield Segment(sid, {lang: _text(lookup(row, col)[1], lang, col, n, path) for lang, col in columns.items()})

    p = Path(path)
    sources = sorted(f for f in p.rglob("*") if f.is_file()) if p.is_dir() else []
    return Corpus(name or p.name or path, langs, gen, sources, {"loader": "hf", "path": path, "config": config,
                                                           "split": split, "columns": columns,
                                                           "configs": configs})


def load_hf_monolingual(path: str, *, config: str | None = None, split: str = "train", text_col: str | None = None,
                        lang_col: str | None = None, lang: str | None = None, lang_id: str = "off",
                        name: str | None = None) -> Corpus:
    """A Hugging Face dataset of documents (a text column and a language column, one language for
    all with ``lang``, or identified with ``lang_id``), streamed; the languages are listed with one
    pass over the language column (the whole dataset when it streams from the hub)."""
    from .mono import LANG_COLUMNS, SCRIPT_COLUMN, UND, _check_text, _lang_of

    text_col = text_col or "text"

    def rows():
        return iter(_open(path, config, split))

    first = next(rows(), None)
    if first is None:
        raise TokstatError("the dataset has no rows", path=path, fix="check the dataset and --split")
    if text_col not in first:
        raise TokstatError(f"no text column {text_col!r} (columns: {', '.join(list(first)[:8])})", path=path,
                           fix="name it with --text-col")
    if lang is None and lang_id == "off":
        lang_col = lang_col or next((c for c in LANG_COLUMNS if c in first), None)
        if lang_col is None or lang_col not in first:
            raise TokstatError(f"no language column (columns: {', '.join(list(first)[:8])})", path=path,
                               fix="name it with --lang-col, give one with --lang, or identify with --lang-id doc")
    script = SCRIPT_COLUMN if lang_col == "language" and SCRIPT_COLUMN in first else None
    cache: dict = {}

    def docs():
        if lang_id != "off":
            from ..langid import identify, spans

        for n, row in enumerate(rows(), 1):
            text = _check_text(row.get(text_col), Path(path), n)
            if lang is not None:
                yield str(n), lang, text
            elif lang_id == "doc" or (lang_id == "spans" and not text.strip()):
                yield str(n), identify(text)[0] if text.strip() else UND, text
            elif lang_id == "spans":
                parts = spans(text)
                for k, (code, part) in enumerate(parts, 1):
                    yield (f"{n}#{k}" if len(parts) > 1 else str(n)), code, part
            else:
                yield str(n), _lang_of(row.get(lang_col), row.get(script) if script else None, Path(path), cache), text

    langs = sorted({code for _, code, _ in docs()}, key=lambda k: (k == UND, k))

    def gen():
        for did, code, text in docs():
            yield Segment(did, {code: text})

    p = Path(path)
    sources = sorted(f for f in p.rglob("*") if f.is_file()) if p.is_dir() else []
    meta = {"loader": "hf", "kind": "monolingual", "path": path, "config": config, "split": split,
            "text_col": text_col, "lang_col": lang_col, "lang_id": lang_id}
    if lang_id != "off":
        from ..langid import signature

        meta["lang_id_signature"] = signature() + ("/spans" if lang_id == "spans" else "")
    return Corpus(name or p.name or path, langs, gen, sources, meta)
