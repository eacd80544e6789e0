"""Inputs and outputs at the edge of the pipeline.

Outputs: checked before any work starts (:func:`check_outputs`); written through one checked
writer (:func:`write_outputs`): every byte of every file is written by ``os.write`` in a loop,
flushed with ``fsync`` and its size compared with what was meant, into a temporary file beside its
target; only when every file of the run is complete are they renamed into place, and a failure
while renaming puts the earlier files back. A full disk, a file-size limit or a permission error is
one error line; no output is ever replaced by a partial or empty one, and nothing half-written is
left behind.

Inputs: :func:`regular_file` admits a path only when it is a readable regular file (a FIFO, a
device, a socket, a dangling or looping symbolic link is refused before a byte is read);
:func:`read_input` reads one whole, once.
"""

from __future__ import annotations

import errno
import io
import os
import shutil
import stat
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Union

from .errors import TokstatError

if TYPE_CHECKING:
    import polars as pl

TABLE_SUFFIXES = (".parquet", ".csv", ".json")
#: what each kind of output must be: file suffixes (an empty tuple: a folder)
KINDS = {"table": TABLE_SUFFIXES, "html": (".html", ".htm"), "png": (".png",), "folder": ()}

WRITE_FIX = "free space or choose a folder you can write to; no output was replaced"

#: one output: the bytes of a file, or a folder's files by name
Content = Union[bytes, Mapping[str, bytes]]


# ---------------------------------------------------------------- inputs

def regular_file(path: str | os.PathLike, what: str = "input") -> Path:
    """``path`` if it is a regular file (after following symbolic links) that can be opened for
    reading; otherwise one error naming the path, what it is and the fix. A FIFO or a device would
    be read forever or block; a dangling link or one that loops is not a file at all.

    >>> regular_file("/dev/null")
    Traceback (most recent call last):
    ...
    tokstat.errors.TokstatError: /dev/null: the input is a character device, not a regular file (fix: ...)
    """
    p = Path(path)
    try:
        st = os.stat(p)
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise TokstatError(f"the {what} is a symbolic link that loops", path=p, fix="point the link at a file") from None
        if e.errno == errno.ENOENT and os.path.lexists(p):
            raise TokstatError(f"the {what} is a symbolic link to a file that does not exist ({os.readlink(p)})",
                               path=p, fix="point the link at an existing file or remove it") from None
        if e.errno == errno.ENOENT:
            raise TokstatError(f"{what} not found", path=p, fix="check the path") from None
        raise TokstatError(f"cannot read the {what}: {e.strerror or e}", path=p, fix="check the path and its permissions") from None
    if not stat.S_ISREG(st.st_mode):
        kind = ("a folder" if stat.S_ISDIR(st.st_mode) else "a FIFO (named pipe)" if stat.S_ISFIFO(st.st_mode)
                else "a character device" if stat.S_ISCHR(st.st_mode) else "a block device" if stat.S_ISBLK(st.st_mode)
                else "a socket" if stat.S_ISSOCK(st.st_mode) else "not a file")
        raise TokstatError(f"the {what} is {kind}, not a regular file", path=p,
                           fix="pass a regular file; copy the data into one first")
    try:
        fd = os.open(p, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as e:
        raise TokstatError(f"cannot read the {what}: {e.strerror or e}", path=p,
                           fix="check its permissions (it exists but cannot be opened)") from None
    os.close(fd)
    return p


def read_input(path: str | os.PathLike, what: str = "input") -> bytes:
    """The bytes of regular file ``path``, read once (hash and parse these same bytes)."""
    p = regular_file(path, what)
    try:
        with open(p, "rb") as f:
            return f.read()
    except OSError as e:
        raise TokstatError(f"cannot read the {what}: {e.strerror or e}", path=p, fix="check the file") from None
    except MemoryError:
        raise TokstatError(f"the {what} does not fit in memory", path=p, fix="free memory or pass a smaller file") from None


# ---------------------------------------------------------------- checking outputs

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
    file), sit in an existing writable folder (a missing folder is never created: a typo would
    scatter files), not be one of ``inputs`` and not be another output. Unset outputs (``None``)
    are skipped. Returns the checked paths.

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
        if suffixes and (p.exists() or os.path.lexists(p)) and not p.is_file():
            raise TokstatError(f"{opt} exists and is not a regular file", path=p, fix=f"write {opt} to another path")
        parent = p.absolute().parent
        if not parent.exists():
            raise TokstatError(f"cannot write {opt}: the folder {parent} does not exist", path=p,
                               fix=f"create it first (mkdir -p {parent}) or choose an existing folder")
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


# ---------------------------------------------------------------- the checked writer

def _write_fd(fd: int, data: bytes) -> None:
    """Write every byte of ``data`` to ``fd``, flush it to the disk and check the size on disk: a
    short write, a full disk or a file-size limit raises ``OSError`` (never a silent short file)."""
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        if n <= 0:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        view = view[n:]
    os.fsync(fd)
    if os.fstat(fd).st_size != len(data):
        raise OSError(errno.EIO, f"wrote {os.fstat(fd).st_size} of {len(data)} bytes")


def _umask() -> int:
    m = os.umask(0)
    os.umask(m)
    return m


def _stage_file(target: Path, data: bytes) -> Path:
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        _write_fd(fd, data)
        os.fchmod(fd, 0o666 & ~_umask())   # mkstemp makes 0600 files; outputs get the usual permissions
    except BaseException:
        os.close(fd)
        os.unlink(tmp)
        raise
    os.close(fd)
    return Path(tmp)


def _stage_folder(target: Path, files: Mapping[str, bytes]) -> Path:
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent))
    try:
        for name, data in files.items():
            if Path(name).name != name or name in ("", ".", ".."):
                raise ValueError(f"not a file name: {name!r}")
            fd = os.open(tmp / name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
            try:
                _write_fd(fd, data)
            finally:
                os.close(fd)
        os.chmod(tmp, 0o777 & ~_umask())   # mkdtemp makes 0700 folders
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return tmp


def _backup(target: Path) -> tuple[Path | None, bool]:
    """``(backup, existed)``: a hard link to an existing ``target``, restored if a later rename of
    the same run fails (None where the file system has no hard links: that file is then replaced
    atomically but not restored)."""
    if not os.path.lexists(target):
        return None, False
    bak = Path(tempfile.mktemp(prefix=f".{target.name}.", suffix=".bak", dir=target.parent))
    try:
        os.link(target, bak)
    except OSError as e:
        if e.errno in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EMLINK, errno.EXDEV):
            return None, True
        raise
    return bak, True


def write_outputs(outputs: Mapping[str | os.PathLike, Content]) -> list[Path]:
    """Write every output of a run as one unit, through the checked writer.

    ``outputs`` maps a path to the bytes of a file, or to ``{name: bytes}`` for a folder (a new
    folder appears whole; an existing one receives each file, its other files kept). Every file is
    written completely (``os.write`` loop, ``fsync``, size check) into a temporary file or folder
    beside its target; then all are renamed into place, and if a rename fails the ones already
    renamed are put back as they were. Any failure is one :class:`TokstatError`; no output is
    replaced, no temporary file is left.

    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> [p.name for p in write_outputs({d / "a.txt": b"one", d / "tok": {"x.json": b"{}"}})]
    ['a.txt', 'tok']
    >>> (d / "a.txt").read_bytes(), (d / "tok" / "x.json").read_bytes()
    (b'one', b'{}')
    """
    staged: list[tuple[Path, Path, bool]] = []        # (target, temporary, is a folder)
    done: list[tuple[Path, Path | None, bool]] = []   # (target, backup, created)
    current = None
    try:
        try:
            for target, content in outputs.items():
                current = Path(target)
                if not current.parent.is_dir():
                    raise OSError(errno.ENOENT, f"the folder {current.parent} does not exist")
                if isinstance(content, (bytes, bytearray, memoryview)):
                    staged.append((current, _stage_file(current, bytes(content)), False))
                else:
                    if current.exists() and not current.is_dir():
                        raise OSError(errno.ENOTDIR, "exists and is not a folder")
                    staged.append((current, _stage_folder(current, content), True))
            for target, tmp, is_folder in staged:
                current = target
                if is_folder and not target.exists():
                    os.rename(tmp, target)                  # the folder appears whole
                    done.append((target, None, False))
                elif is_folder:
                    for f in sorted(tmp.iterdir()):
                        bak, existed = _backup(target / f.name)
                        done.append((target / f.name, bak, existed))
                        os.replace(f, target / f.name)
                else:
                    bak, existed = _backup(target)
                    done.append((target, bak, existed))
                    os.replace(tmp, target)
        except OSError as e:
            for target, bak, existed in reversed(done):     # put back what was there
                try:
                    if bak is not None:
                        os.replace(bak, target)         # (a no-op where the target still is that file)
                    elif not existed and target.is_dir() and not target.is_symlink():
                        shutil.rmtree(target)
                    elif not existed:
                        target.unlink(missing_ok=True)
                except OSError:
                    pass
            raise TokstatError(f"cannot write: {e.strerror or e}", path=current, fix=WRITE_FIX) from None
        except MemoryError:
            raise TokstatError("cannot write: out of memory", path=current, fix=WRITE_FIX) from None
    finally:
        for _, tmp, _ in staged:
            if os.path.lexists(tmp):
                shutil.rmtree(tmp, ignore_errors=True) if tmp.is_dir() else tmp.unlink(missing_ok=True)
        for _, bak, _ in done:
            if bak is not None:
                bak.unlink(missing_ok=True)
    return [Path(p) for p in outputs]


def write_bytes(path: str | os.PathLike, data: bytes) -> None:
    """Write one file through the checked writer (:func:`write_outputs`)."""
    write_outputs({path: data})


def write_files(folder: str | os.PathLike, files: dict[str, bytes]) -> None:
    """Write ``files`` into ``folder`` as one unit through the checked writer (:func:`write_outputs`)."""
    write_outputs({folder: files})


def table_bytes(df: pl.DataFrame, suffix: str) -> bytes:
    """``df`` serialised as Parquet, CSV or JSON (by ``suffix``), in memory."""
    suf = suffix.lower()
    if suf not in TABLE_SUFFIXES:
        raise TokstatError(f"unknown output format {suffix!r}", fix="use .parquet, .csv or .json")
    if suf == ".parquet":
        buf = io.BytesIO()
        df.write_parquet(buf, statistics=False)
        return buf.getvalue()
    if suf == ".csv":   # a list of numbers (bootstrap replicates) as one space-separated cell
        import polars as pl

        lists = [c for c, t in df.schema.items() if isinstance(t, pl.List)]
        if lists:
            df = df.with_columns(pl.col(c).list.eval(pl.element().cast(pl.String)).list.join(" ") for c in lists)
        return df.write_csv().encode("utf-8")
    return df.write_json().encode("utf-8")


def figure_bytes(fig, **kw) -> bytes:
    """A Matplotlib figure as PNG bytes (no date or software stamp: identical runs, identical bytes)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", metadata={"Software": None}, **kw)
    return buf.getvalue()


def write_tables(tables: dict[str | os.PathLike, pl.DataFrame]) -> list[Path]:
    """Write each DataFrame as Parquet, CSV or JSON (by suffix), all as one unit (:func:`write_outputs`)."""
    data = {}
    for p, df in tables.items():
        try:
            data[p] = table_bytes(df, Path(p).suffix)
        except TokstatError as e:
            raise TokstatError(e.message, path=p, fix=e.fix) from None
    return write_outputs(data)


def write_table(df: pl.DataFrame, path: str | os.PathLike) -> Path:
    """Write ``df`` as Parquet, CSV or JSON (by suffix), atomically."""
    return write_tables({path: df})[0]


def read_table(path: str | os.PathLike, what: str = "tokstat compare/sweep/cost --out") -> pl.DataFrame:
    """Read a result table (.parquet/.csv/.json) written by tokstat; one clear error otherwise."""
    import polars as pl

    p = Path(path)
    readers = {".parquet": pl.read_parquet, ".csv": pl.read_csv, ".json": pl.read_json}
    if p.suffix.lower() not in readers:
        if not p.exists():
            raise TokstatError("result file not found", path=p, fix="check the path")
        raise TokstatError(f"unknown result format {p.suffix!r}", path=p, fix="use .parquet, .csv or .json")
    data = read_input(p, "result file")
    try:
        return readers[p.suffix.lower()](io.BytesIO(data))
    except Exception as e:  # polars raises several types for damaged files
        raise TokstatError(f"cannot read results ({str(e).splitlines()[0][:120]})", path=p,
                           fix=f"pass a file written by {what}") from None
