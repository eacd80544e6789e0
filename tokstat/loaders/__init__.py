"""Corpus spec strings -> loaders. ``load_corpus("sample")``, ``load_corpus("data/en-zh.tmx")``,
``load_corpus("hf:openlanguagedata/flores_plus")``, ``load_corpus("flores")`` (a manifest)."""

from __future__ import annotations

import glob
import os
import tomllib
from pathlib import Path

from ..corpus import Corpus
from ..errors import TokstatError
from ..io import regular_file
from ..langs import normalize_lang
from .conllu import load_conllu
from .gettext import load_gettext
from .hf import load_hf, load_hf_monolingual
from .mono import is_gz_jsonl, language_folders, load_monolingual, looks_monolingual, monolingual_textdir
from .table import load_delimited, load_polars, load_sharded
from .textdir import load_textdir
from .tmx import load_tmx

__all__ = ["load_corpus", "corpora_dir", "manifests", "BUNDLED"]

BUNDLED = {"sample": "sample-zh-en", "sample-zh-en": "sample-zh-en", "sample-docs": "sample-docs"}


def corpora_dir() -> Path:
    """The bundled ``corpora/`` folder: inside the wheel (``tokstat/_corpora``) or the source checkout."""
    here = Path(__file__).resolve().parent.parent
    for cand in (here / "_corpora", here.parent / "corpora"):
        if cand.is_dir():
            return cand
    raise TokstatError("bundled corpora not found", fix="reinstall tokstat (pip install -e .)")


def manifests() -> dict[str, dict]:
    """Manifests of public corpora (``corpora/*.toml``), by name."""
    out = {}
    for p in sorted(corpora_dir().glob("*.toml")):
        with open(p, "rb") as f:
            m = tomllib.load(f)
        m["_file"] = p
        out[m["name"]] = m
    return out


def _from_manifest(m: dict, **opts) -> Corpus:
    if m["loader"] == "hf":
        c = load_hf(m["path"], config=m.get("config"), split=opts.get("split") or m.get("split", "train"),
                       columns=m.get("columns"), configs=m.get("configs"),
                       text_column=m.get("text_column", "text"), id_column=m.get("id_column"),
                       name=m["name"])
        inner = c.factory

        def gen():
            try:
                yield from inner()
            except TokstatError as e:
                raise TokstatError(f"{e.message} [manifest {m['_file'].name}]", path=m["_file"],
                                   fix="run where the Hugging Face hub is reachable, or download the "
                                       f"data ({m.get('url')}) and pass its path") from None

        c.factory = gen
        return c
    # local: the first candidate path that exists (relative to the working directory or $TOKSTAT_DATA)
    roots = [Path.cwd()] + ([Path(os.environ["TOKSTAT_DATA"])] if os.environ.get("TOKSTAT_DATA") else [])
    for cand in m.get("candidates", []):
        for root in roots:
            p = root / cand
            if p.exists():
                c = _load(str(p), **opts)
                c.name = m["name"]
                return c
    raise TokstatError(f"corpus {m['name']!r} is not on this machine", path=m["_file"],
                       fix=f"download it ({m.get('url', 'see the manifest')}) and pass its path, "
                           "or set TOKSTAT_DATA to the folder holding it")


SHARD_SUFFIXES = (".jsonl", ".ndjson", ".parquet")


def load_corpus(spec: str | os.PathLike, *, columns: list[str] | dict[str, str] | None = None,
                split: str | None = None, encoding_errors: str = "strict",
                langmap: dict[str, str] | None = None, source_lang: str = "en", quoting: str = "auto",
                normalize: str = "nfc", kind: str = "auto", text_col: str | None = None,
                lang_col: str | None = None, lang: str | None = None, lang_id: str = "off",
                strip: bool = False) -> Corpus:
    """Resolve a corpus spec string (see README, "Corpora") to a :class:`~tokstat.corpus.Corpus`.
    ``quoting`` (``auto``, ``csv``, ``none``) is how a TSV file quotes (see ``load_delimited``);
    ``normalize`` (``nfc``, ``nfkc``, ``none``) the Unicode normalisation every text gets, and
    ``strip`` strips each text's edge whitespace after it (signatures say ``norm:nfc+strip``).
    ``kind``: ``parallel``, ``monolingual`` (documents each in one language, :mod:`.mono`) or
    ``auto`` (monolingual for a table with a text and a language column, per-language folders of
    shards, or when ``text_col``/``lang_col``/``lang`` is given; parallel otherwise)."""
    from ..corpus import normalized, normalizer

    normalizer(normalize)   # an unknown form is an error before anything is read
    if kind not in ("auto", "parallel", "monolingual"):
        raise TokstatError(f"unknown corpus kind {kind!r}", fix="use --kind auto, parallel or monolingual")
    from ..langid import check_mode

    lang_id = check_mode(lang_id)
    if lang_id != "off" and lang:
        raise TokstatError("--lang-id identifies each document's language; --lang gives one to all",
                           fix="drop one of them")
    mono = {"text_col": text_col, "lang_col": lang_col, "lang": normalize_lang(lang) if lang else None,
            "lang_id": lang_id if lang_id != "off" else None}
    if kind == "parallel" and any(mono.values()):
        raise TokstatError("--text-col, --lang-col and --lang describe a monolingual corpus, not --kind parallel",
                           fix="drop them, or use --kind monolingual")
    if any(mono.values()) or kind == "monolingual":
        if columns:
            raise TokstatError("--columns names a parallel corpus's language columns; a monolingual one has one "
                               "text column", fix="use --text-col and --lang-col (or --lang) instead")
    c = _load(spec, columns=columns, split=split, encoding_errors=encoding_errors, langmap=langmap,
              source_lang=source_lang, quoting=quoting, kind=kind, **mono)
    if c.kind != "monolingual" and any(mono.values()):   # options of documents on aligned text: refused, never ignored
        given = [o for o, v in (("--text-col", text_col), ("--lang-col", lang_col), ("--lang", lang),
                                ("--lang-id", mono["lang_id"])) if v]
        raise TokstatError(f"{', '.join(given)} {'applies' if len(given) == 1 else 'apply'} to a monolingual corpus "
                           f"(documents), and {c.name} is parallel (aligned segments, one column per language)",
                           path=c.sources[0] if c.sources else None,
                           fix=f"drop {' and '.join(given)} (the columns give the languages)")
    return normalized(c, normalize + ("+strip" if strip else ""))


def _mono_files(paths: list[Path], lang: str | None, lang_col: str | None = None) -> list[tuple[Path, str | None]]:
    """The shards with the language ``--lang`` gives; a table with a language column of its own is
    refused beside ``--lang`` (one of them would be ignored)."""
    from .mono import LANG_COLUMNS, columns_of

    if lang is not None and paths and paths[0].suffix.lower() != ".txt":
        q = paths[0]
        names = columns_of(q)
        col = lang_col or next((c for c in LANG_COLUMNS if c in names), None)
        if col is not None and col in names:
            raise TokstatError(f"--lang {lang} gives every document one language, but the table has a "
                               f"language column ({col!r})", path=q,
                               fix="drop --lang (the column gives each document's language), or drop the "
                               "column from the files")
    return [(q, lang) for q in paths]


def _documents_table(p: Path, columns, kind: str, mono_asked: bool) -> bool:
    """Whether ``p`` (the first shard) is read as documents. A table of documents (a text and a
    language column) given ``--columns`` is refused: read as parallel it would be one language."""
    if kind == "parallel":
        return False
    if mono_asked:
        return True
    if looks_monolingual(p):
        if columns:
            raise TokstatError("--columns names the language columns of a parallel corpus, but this table holds "
                               "documents (a text and a language column)", path=p,
                               fix="drop --columns (use --text-col/--lang-col to name the columns), or add "
                               "--kind parallel if the table really is aligned")
        return True
    return False


def _load(spec: str | os.PathLike, *, columns=None, split=None, encoding_errors="strict", langmap=None,
          source_lang="en", quoting="auto", kind="auto", text_col=None, lang_col=None, lang=None,
          lang_id=None) -> Corpus:
    """:func:`load_corpus` without the normalisation."""
    spec = str(spec)
    mono_asked = kind == "monolingual" or bool(text_col or lang_col or lang or lang_id)
    mono_kw = {"text_col": text_col, "lang_col": lang_col, "lang_id": lang_id or "off"}
    if quoting != "auto" and not (Path(spec).suffix.lower() in (".tsv", ".txt") and Path(spec).is_file()):
        raise TokstatError(f"--quoting {quoting} applies to TSV files only, not {spec}",
                           fix="drop --quoting (CSV is always RFC 4180 quoted; other formats have no quoting)")
    if spec.startswith("bundled:"):
        if spec[8:] not in BUNDLED:
            raise TokstatError(f"no bundled corpus {spec[8:]!r}", fix=f"use one of: {', '.join(BUNDLED)}")
        spec = spec[8:]
    elif spec in BUNDLED and Path(spec).exists():
        # an explicit path always wins over a bundled name; say so, since the name is ambiguous here
        import warnings

        warnings.warn(f"{spec!r} is the local path ./{spec}, not the bundled corpus (for that one write "
                      f"bundled:{spec})", stacklevel=2)
        return _load(Path(spec).absolute(), columns=columns, split=split, encoding_errors=encoding_errors,
                     langmap=langmap, source_lang=source_lang, quoting=quoting)
    if spec in BUNDLED:
        if split is not None:
            raise TokstatError(f"--split applies to Hugging Face datasets, not to the bundled corpus {spec}",
                               fix="drop --split")
        if BUNDLED[spec] == "sample-docs":         # the monolingual one: per-language folders of JSONL
            if kind == "parallel":
                raise TokstatError("sample-docs is monolingual (documents)", fix="drop --kind parallel")
            return load_monolingual(language_folders(corpora_dir() / "sample-docs"), name="sample-docs", **mono_kw)
        c = load_delimited(corpora_dir() / BUNDLED[spec] / "sample.tsv", encoding_errors=encoding_errors)
        c.name = BUNDLED[spec]
        return c
    if spec.startswith("hf:") and mono_asked:
        ident, _, config = spec[3:].partition(":")
        return load_hf_monolingual(ident, config=config or None, split=split or "train", lang=lang, **mono_kw)
    if spec.startswith("hf:"):
        ident, _, config = spec[3:].partition(":")
        cols = columns if isinstance(columns, dict) else None
        if columns and not cols:
            raise TokstatError("for hf: corpora give columns as lang=COLUMN", fix="--columns en=text_en,zh=text_zh")
        return load_hf(ident, config=config or None, split=split or "train", columns=cols)
    p = Path(spec)
    if any(ch in spec for ch in "*?[") and not p.exists():   # a glob of JSONL/Parquet shards
        paths = sorted(Path(q) for q in glob.glob(spec))
        if not paths:
            raise TokstatError(f"no file matches {spec!r}", fix="check the pattern (quote it in the shell)")
        bad = [q for q in paths if q.suffix.lower() not in SHARD_SUFFIXES and not is_gz_jsonl(q)]
        if bad:
            raise TokstatError("a sharded corpus is JSONL or Parquet files only", path=bad[0],
                               fix="narrow the pattern, e.g. 'data/*.parquet'")
        if split is not None:
            raise TokstatError("--split applies to Hugging Face datasets, not to sharded files",
                               fix="drop --split, or narrow the pattern to the split's files")
        if _documents_table(paths[0], columns, kind, mono_asked):
            return load_monolingual(_mono_files(paths, lang, lang_col), **mono_kw)
        return load_sharded(paths, columns=columns)
    if not os.path.lexists(p):
        ms = manifests()
        if spec in ms:
            return _from_manifest(ms[spec], split=split)
        raise TokstatError(f"no corpus {spec!r}: not a file, folder, bundled name or manifest",
                           fix=f"pass a path, hf:ID, or one of: {', '.join([*BUNDLED, *ms])}")
    if split is not None and not (p.is_dir() and any((p / f).exists() for f in (
            "dataset_info.json", "dataset_dict.json", "state.json"))):
        raise TokstatError(f"--split applies to Hugging Face datasets, not to {p.name}", path=p,
                           fix="drop --split (a file holds one split)")
    if not p.is_dir():
        regular_file(p, "corpus file")   # a FIFO, a device or a broken link: one error before any read
    collist = columns   # a list (languages of the columns in order) or a dict (language -> column name)

    def no_columns(kind: str) -> None:
        if columns:
            raise TokstatError(f"--columns does not apply to {kind}: its languages come from the data", path=p,
                               fix="drop --columns (it is for TSV/CSV/JSONL/Parquet and hf: corpora)")
    if p.is_dir():
        conllu = sorted(p.glob("*.conllu")) or sorted(p.glob("*/*.conllu"))
        if conllu:
            no_columns("treebanks")
            return load_conllu(conllu)
        cats = (sorted(p.glob("*.po")) + sorted(p.glob("*.mo")) + sorted(p.glob("*/LC_MESSAGES/*.mo"))
                + sorted(p.glob("*/LC_MESSAGES/*.po")))
        if cats:
            no_columns("gettext catalogues")
            return load_gettext(cats, source_lang=source_lang)
        if (p / "dataset_info.json").exists() or (p / "dataset_dict.json").exists() or (p / "state.json").exists():
            if mono_asked:
                return load_hf_monolingual(str(p), split=split or "train", lang=lang, **mono_kw)
            return load_hf(str(p), split=split or "train", columns=columns if isinstance(columns, dict) else None)
        shards = sorted(q for q in p.iterdir() if q.suffix.lower() in SHARD_SUFFIXES or is_gz_jsonl(q))
        if shards:
            if _documents_table(shards[0], columns, kind, mono_asked):
                return load_monolingual(_mono_files(shards, lang, lang_col), name=p.name, **mono_kw)
            gz = [q for q in shards if is_gz_jsonl(q)]
            if gz:          # never left out silently
                raise TokstatError(f"{gz[0].name} is gzip-compressed: aligned (parallel) shards are read uncompressed",
                                   path=gz[0], fix="decompress it (gunzip), or pass --kind monolingual for documents")
            return load_sharded(shards, columns=collist)
        if kind != "parallel":
            folders = language_folders(p)
            if folders:
                if lang is not None and len({c for _, c in folders}) > 1:
                    raise TokstatError(f"--lang {lang} gives one language to a folder of per-language folders "
                                       f"({', '.join(sorted({c for _, c in folders}))})", path=p,
                                       fix="drop --lang (the folder names give the languages)")
                return load_monolingual(folders if not lang else [(q, lang) for q, _ in folders], name=p.name,
                                        **mono_kw)
        no_columns("a folder of language files")
        if mono_asked:
            from .textdir import language_files

            files = language_files(p, langmap)
            if lang is not None and len(files) > 1:
                raise TokstatError("--lang gives one language to a folder of several language files", path=p,
                                   fix="drop --lang (the file names give the languages)")
            return monolingual_textdir(p, files)
        return load_textdir(p, langmap=langmap, encoding_errors=encoding_errors)
    suf = p.suffix.lower()
    if is_gz_jsonl(p):           # compressed JSON lines are documents (MADLAD-400)
        if kind == "parallel":
            raise TokstatError("a .jsonl.gz file is read as documents (monolingual)", path=p,
                               fix="decompress it for a parallel table, or drop --kind parallel")
        return load_monolingual([(p, lang)], name=p.name.split(".")[0], **mono_kw)
    if mono_asked and suf == ".txt":
        if not lang and not lang_id:
            raise TokstatError("a text file of documents (one per line) needs its language", path=p,
                               fix="add --lang LANG (e.g. --lang zh)")
        return load_monolingual([(p, lang)], name=p.stem, **mono_kw)
    if suf in (".tsv", ".csv", ".txt"):
        return load_delimited(p, columns=collist, encoding_errors=encoding_errors, quoting=quoting)
    if suf in (".jsonl", ".ndjson", ".parquet"):
        if _documents_table(p, columns, kind, mono_asked):
            return load_monolingual(_mono_files([p], lang, lang_col), name=p.stem, **mono_kw)
        return load_polars(p, columns=collist)
    if suf == ".tmx":
        no_columns("TMX")
        return load_tmx(p)
    if suf == ".conllu":
        no_columns("treebanks")
        return load_conllu([p])
    if suf in (".po", ".mo"):
        no_columns("gettext catalogues")
        return load_gettext([p], source_lang=source_lang)
    raise TokstatError(f"unknown corpus format {suf or '(no suffix)'!r}", path=p,
                       fix="use .txt/.tsv/.csv/.jsonl/.parquet/.tmx/.conllu/.po/.mo or a folder")
