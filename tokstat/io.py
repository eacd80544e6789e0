"""Outputs: checked before any work starts, written atomically at the end (temporary file beside the
target, then rename), several as one unit. No partial files; inputs and each other never overwritten."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from .errors import TokstatError

if TYPE_CHECKING:
    import polars as pl

TABLE_SUFFIXES = (".parquet", ".csv", ".json")
#: what each kind of output must be: file suffixes (an empty tuple: a folder)
KINDS = {"table": TABLE_SUFFIXES, "html": (".html", ".htm"), "png": (".png",), "folder": ()}


def _same(a: Path, b: Path) -> bool:
    try:
        return a.exists() and b.exists() and os.path.samefile(a, b)
    except OSError:
        return False


def _writable(folder: Path) -> bool:
    """Whether a file can be created in ``folder`` (tried, not guessed from permission bits)."""
    try:
        fd, tmp = tempfile.mkstemp(prefix=".tokstat-probe.", dir=folder)
    except OSError:
        return False
    os.close(fd)
    os.unlink(tmp)
    return True


def check_outputs(outputs: dict[str, tuple[str | os.PathLike | None, str]], *,
                  inputs: list[str | os.PathLike] = ()) -> dict[str, Path]:
    """Check every output before any work starts: ``{"--out": (path, kind)}`` with ``kind`` in
    :data:`KINDS`. Each must have its kind's suffix, not be a folder (or, for ``folder``, not a
    file), sit in a writable folder, not be one of ``inputs`` and not be another output. Unset
    outputs (``None``) are skipped. Returns the checked paths.

    >>> check_outputs({"--out": ("a.txt", "table")})
    Traceback (most recent call last):
    ...
    tokstat.errors.TokstatError: a.txt: --out must end in .parquet, .csv or .json (fix: e.g. --out a.parquet)
    """
    got: dict[str, Path] = {}
    ins = [Path(i) for i in inputs]
    for opt, (value, kind) in outputs.items():
        if value is None or value == "":
            continue
        p = Path(value)
        suffixes = KINDS[kind]
        if suffixes and p.suffix.lower() not in suffixes:
            names = ", ".join(suffixes[:-1]) + f" or {suffixes[-1]}" if len(suffixes) > 1 else suffixes[0]
            raise TokstatError(f"{opt} must end in {names}", path=p, fix=f"e.g. {opt} {p.with_suffix(suffixes[0]).name}")
        if suffixes and p.is_dir():
            raise TokstatError(f"{opt} is a folder", path=p, fix=f"name a file inside it, e.g. {opt} {p / ('out' + suffixes[0])}")
        if not suffixes and p.exists() and not p.is_dir():
            raise TokstatError(f"{opt} is a file, not a folder", path=p, fix=f"pass a folder name to {opt}")
        parent = p.absolute().parent if suffixes else p.absolute()
        while not parent.exists():
            parent = parent.parent
        if not parent.is_dir() or not _writable(parent):
            raise TokstatError(f"cannot write {opt}: {parent} is not a writable folder", path=p,
                               fix="choose a path in a folder you can write to")
        for i in ins:
            if _same(p, i) or p.absolute() == i.absolute():
                raise TokstatError(f"{opt} is an input of this run; it would be overwritten", path=p,
                                   fix=f"write {opt} to another path")
        for other, q in got.items():
            if p.absolute() == q.absolute() or _same(p, q):
                raise TokstatError(f"{opt} and {other} are the same file", path=p, fix="give each output its own path")
        got[opt] = p
    return got


@contextmanager
def atomic_path(path: str | os.PathLike, suffix: str = ".tmp") -> Iterator[str]:
    """Yield a temporary path beside ``path``; on success rename it onto ``path``, on any error
    (KeyboardInterrupt included) delete it, so no partial file is ever left."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", suffix=suffix, dir=p.parent)
    os.close(fd)
    try:
        yield tmp
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)   # mkstemp makes 0600 files; outputs get the usual permissions
        os.replace(tmp, p)
    finally:
        Path(tmp).unlink(missing_ok=True)


WRITE_FIX = "free space or choose a folder you can write to; no output was replaced"


def write_bytes(path: str | os.PathLike, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (an OS failure is one error line; nothing is replaced)."""
    try:
        with atomic_path(path) as tmp:
            Path(tmp).write_bytes(data)
    except OSError as e:
        raise TokstatError(f"cannot write: {e.strerror or e}", path=path, fix=WRITE_FIX) from None


def write_files(folder: str | os.PathLike, files: dict[str, bytes]) -> None:
    """Write ``files`` into ``folder`` as one unit: all are written into a temporary sibling folder
    first; a new ``folder`` is that folder renamed into place, an existing one receives each file
    by rename (its other files are kept). A failure (disk full, permission denied, an interrupt)
    leaves neither a partial file nor a new, empty folder behind."""
    d = Path(folder)
    try:
        d.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{d.name}.", suffix=".tmp", dir=d.parent))
    except OSError as e:
        raise TokstatError(f"cannot write: {e.strerror or e}", path=d, fix=WRITE_FIX) from None
    try:
        for name, data in files.items():
            (tmp / name).write_bytes(data)
        if not d.exists():
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp, 0o777 & ~umask)   # mkdtemp makes 0700 folders
            os.rename(tmp, d)               # the folder appears whole
            return
        for name in files:
            os.replace(tmp / name, d / name)
    except OSError as e:
        raise TokstatError(f"cannot write: {e.strerror or e}", path=d, fix=WRITE_FIX) from None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _write_df(df: pl.DataFrame, path: str, suf: str) -> None:
    if suf == ".parquet":
        df.write_parquet(path, statistics=False)
    elif suf == ".csv":
        df.write_csv(path)
    else:
        df.write_json(path)


def write_tables(tables: dict[str | os.PathLike, pl.DataFrame]) -> list[Path]:
    """Write each DataFrame as Parquet, CSV or JSON (by suffix), all as one unit: every file is
    written to a temporary file first and renamed into place only when all are written."""
    paths = [Path(p) for p in tables]
    for p in paths:
        if p.suffix.lower() not in TABLE_SUFFIXES:
            raise TokstatError(f"unknown output format {p.suffix!r}", path=p, fix="use .parquet, .csv or .json")
    with ExitStack() as stack:   # each file renamed into place only when the block ends without error
        for p, df in zip(paths, tables.values()):
            try:
                _write_df(df, stack.enter_context(atomic_path(p)), p.suffix.lower())
            except OSError as e:   # disk full, permission denied, ...: nothing is replaced
                raise TokstatError(f"cannot write: {e.strerror or e}", path=p, fix=WRITE_FIX) from None
    return paths


def write_table(df: pl.DataFrame, path: str | os.PathLike) -> Path:
    """Write ``df`` as Parquet, CSV or JSON (by suffix), atomically."""
    return write_tables({path: df})[0]


def read_table(path: str | os.PathLike, what: str = "tokstat compare/sweep/cost --out") -> pl.DataFrame:
    """Read a result table (.parquet/.csv/.json) written by tokstat; one clear error otherwise."""
    import polars as pl

    p = Path(path)
    if not p.is_file():
        raise TokstatError("result file not found", path=p, fix="check the path")
    readers = {".parquet": pl.read_parquet, ".csv": pl.read_csv, ".json": pl.read_json}
    if p.suffix.lower() not in readers:
        raise TokstatError(f"unknown result format {p.suffix!r}", path=p, fix="use .parquet, .csv or .json")
    try:
        return readers[p.suffix.lower()](p)
    except Exception as e:  # polars raises several types for damaged files
        raise TokstatError(f"cannot read results ({str(e).splitlines()[0][:120]})", path=p,
                           fix=f"pass a file written by {what}") from None
