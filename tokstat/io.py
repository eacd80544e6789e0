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
:func:`read_input` reads one whole, once; :func:`parquet_file` opens Parquet through one guarded
reader (a damaged file is one error naming it, never pyarrow's exception).

Every input a run opens passes :func:`regular_file`, which records it in the run's scope
(:func:`run_scope`, opened by the command line for each command and by the API jobs): its identity
(device, inode) and its size and modification time when first read. That record is the one list of
what a run read, whichever option named the file: :func:`check_outputs` refuses an output that is
one of them, :func:`write_outputs` refuses again at the last moment (an output never replaces
anything the run read, whatever code path opened it), and an input read twice that changed between
the reads, or changed before the results are written, is an error instead of a mixed result.
"""

from __future__ import annotations

import errno
import io
import os
import shutil
import stat
import tempfile
from collections.abc import Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Union

from .errors import TokstatError

if TYPE_CHECKING:
    import polars as pl

TABLE_SUFFIXES = (".parquet", ".csv", ".json")
#: what each kind of output must be: file suffixes (an empty tuple: a folder)
KINDS = {"table": TABLE_SUFFIXES, "html": (".html", ".htm"), "png": (".png",), "json": (".json",), "folder": (),
         "md": (".md", ".markdown"), "report": (".html", ".htm", ".md", ".markdown", ".json")}

WRITE_FIX = "free space or choose a folder you can write to; no output was replaced"

#: one output: the bytes of a file, or a folder's files by name
Content = Union[bytes, Mapping[str, bytes]]


# ---------------------------------------------------------------- what a run reads

class Reads:
    """What one run has read: absolute path -> ``(device, inode, size, mtime_ns)`` when first read
    (size and time are ``None`` for a folder or a path only named on the command line)."""

    def __init__(self) -> None:
        self.files: dict[str, tuple] = {}


_SCOPES: list[Reads] = []


@contextmanager
def run_scope():
    """The record of one run's inputs. Nested scopes share the outermost one (an API job called by
    the command line adds to the command's record).

    >>> with run_scope() as r:
    ...     _ = regular_file(__file__)
    ...     [Path(f).name for f in r.files]
    ['io.py']
    """
    if _SCOPES:
        yield _SCOPES[-1]
        return
    r = Reads()
    _SCOPES.append(r)
    try:
        yield r
    finally:
        _SCOPES.remove(r)


def _ident(st: os.stat_result, content: bool) -> tuple:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns) if content else (st.st_dev, st.st_ino, None, None)


def note_input(path: str | os.PathLike, st: os.stat_result | None = None, *, what: str = "input",
               content: bool = True) -> None:
    """Record ``path`` as read by the current run (nothing outside a :func:`run_scope`). A file
    read before whose size or modification time has changed since is an error: the run would mix
    two versions of it. ``content=False`` records only its identity (a folder, or a path named on
    the command line before it is opened)."""
    if not _SCOPES:
        return
    try:
        st = st or os.stat(path)
    except OSError:
        return
    key = os.path.abspath(path)
    now = _ident(st, content and stat.S_ISREG(st.st_mode))
    before = _SCOPES[-1].files.get(key)
    if before is not None and before[2] is not None and now[2] is not None and before != now:
        raise TokstatError(f"the {what} changed while this run was reading it ({_change(before, now)})", path=path,
                           fix="rerun once the file is complete, or copy it and read the copy; nothing was written")
    if before is None or before[2] is None:
        _SCOPES[-1].files[key] = now


def _change(before: tuple, now: tuple) -> str:
    if before[:2] != now[:2]:
        return "it was replaced by another file"
    if before[2] != now[2]:
        return f"{before[2]:,} bytes, then {now[2]:,}"
    return "its modification time moved"


def check_inputs_unchanged() -> None:
    """Every file the run read is still as it was when first read (size, time, identity);
    otherwise one error naming it: results from a file that changed under the run are never written."""
    if not _SCOPES:
        return
    for key, before in list(_SCOPES[-1].files.items()):
        if before[2] is None:
            continue
        try:
            now = _ident(os.stat(key), True)
        except OSError:
            raise TokstatError("an input of this run disappeared while it ran", path=key,
                               fix="rerun once the input is in place; nothing was written") from None
        if now != before:
            raise TokstatError(f"an input changed while this run was reading it ({_change(before, now)})", path=key,
                               fix="rerun once the file is complete, or copy it and read the copy; nothing was written")


def _is_input(p: Path, extra: list[Path] = ()) -> Path | None:
    """The input (explicit or recorded) that ``p`` is, if any: the same path or the same file, or an
    existing file under a folder the run names (whether or not the run opens it)."""
    try:
        st = os.stat(p)
        ident = (st.st_dev, st.st_ino)
    except OSError:
        ident = None
    ab = p.absolute()
    recorded = list(_SCOPES[-1].files.items()) if _SCOPES else []
    for key, before in recorded:
        if Path(key) == ab or (ident is not None and before[:2] == ident):
            return Path(key)
    for i in extra:
        if _same(p, i) or ab == i.absolute():
            return i
    if ident is not None:       # an existing file under a folder the run names is an input, read or not
        real = os.path.realpath(p)
        for folder in [k for k, b in recorded if b[2] is None] + [str(i) for i in extra]:
            top = os.path.realpath(folder)
            if os.path.isdir(top) and real.startswith(top.rstrip(os.sep) + os.sep):
                return p
    return None


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
    note_input(p, st, what=what)
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


class ParquetFile:
    """A Parquet file behind one guard: every pyarrow call on it (the footer, the schema, a row
    group, a batch) that fails on a truncated or damaged file is one error naming the file and
    what is wrong, never ``ArrowInvalid``. The file passes :func:`regular_file` first (and is
    recorded as read)."""

    FIX = "check that the file is complete Parquet (rewrite or re-download it)"

    def __init__(self, path: str | os.PathLike, what: str = "Parquet file") -> None:
        import pyarrow.parquet as pq

        self.path = regular_file(path, what)
        self._pf = self._guard(lambda: pq.ParquetFile(self.path), "cannot read Parquet file")

    def _guard(self, call, message: str = "cannot read rows"):
        try:
            return call()
        except TokstatError:
            raise
        except MemoryError:
            raise TokstatError(f"{message}: out of memory", path=self.path,
                               fix="free memory or rewrite the file with smaller row groups") from None
        except Exception as e:   # ArrowInvalid, ArrowIOError/OSError, ArrowNotImplementedError, ... on a broken file
            first = (str(e).splitlines() or [type(e).__name__])[0][:160]
            raise TokstatError(f"{message} ({first})", path=self.path, fix=self.FIX) from None

    @property
    def schema(self):
        """The file's Arrow schema."""
        return self._guard(lambda: self._pf.schema_arrow, "cannot read the Parquet schema")

    @property
    def names(self) -> list[str]:
        return self.schema.names

    @property
    def num_row_groups(self) -> int:
        return self._guard(lambda: self._pf.metadata.num_row_groups, "cannot read the Parquet footer")

    def column_sizes(self, column: str) -> list[tuple[int, int]]:
        """``(rows, uncompressed bytes of column)`` of every row group, from the footer alone (the
        row group's whole size where the column is not a top-level one)."""
        def sizes():
            md = self._pf.metadata
            ci = self._pf.schema_arrow.get_field_index(column)
            leaf = next((k for k in range(md.num_columns) if md.row_group(0).column(k).path_in_schema == column), None) \
                if md.num_row_groups and ci >= 0 else None
            out = []
            for i in range(md.num_row_groups):
                rg = md.row_group(i)
                out.append((rg.num_rows, rg.column(leaf).total_uncompressed_size if leaf is not None else rg.total_byte_size))
            return out
        return self._guard(sizes, "cannot read the Parquet footer")

    @property
    def uncompressed_size(self) -> int:
        """Bytes of every row group as stored uncompressed (from the footer alone)."""
        return self._guard(lambda: sum(self._pf.metadata.row_group(i).total_byte_size
                                       for i in range(self._pf.metadata.num_row_groups)),
                           "cannot read the Parquet footer")

    def read_row_group(self, i: int, columns: list[str] | None = None, use_threads: bool = True):
        """Row group ``i``; ``use_threads=False`` decodes it on this thread (4× less CPU for a small row
        group than Arrow's pool, measured: what a worker that owns one core wants)."""
        return self._guard(lambda: self._pf.read_row_group(i, columns=columns, use_threads=use_threads),
                           f"cannot read row group {i}")

    def read_row_groups(self, ids: list[int], columns: list[str] | None = None, use_threads: bool = True):
        """Row groups ``ids`` as one table (one call); on a damaged file the error names the first
        row group that cannot be read."""
        try:
            return self._pf.read_row_groups(ids, columns=columns, use_threads=use_threads)
        except Exception:  # noqa: BLE001 - reread one by one: the error names the row group
            for i in ids:
                self.read_row_group(i, columns=columns, use_threads=use_threads)
            return self._guard(lambda: self._pf.read_row_groups(ids, columns=columns, use_threads=use_threads))

    def row_group_shape(self, i: int) -> tuple[int, int]:
        """``(rows, bytes stored uncompressed)`` of row group ``i``, from the footer."""
        def shape():
            rg = self._pf.metadata.row_group(i)
            return rg.num_rows, rg.total_byte_size
        return self._guard(shape, "cannot read the Parquet footer")

    def read(self, columns: list[str] | None = None):
        return self._guard(lambda: self._pf.read(columns=columns))

    def iter_batches(self, **kw):
        it = self._guard(lambda: iter(self._pf.iter_batches(**kw)))
        while True:
            rb = self._guard(lambda: next(it, None))
            if rb is None:
                return
            yield rb


def parquet_file(path: str | os.PathLike, what: str = "Parquet file") -> ParquetFile:
    """Open ``path`` through the guarded Parquet reader (:class:`ParquetFile`).

    >>> import tempfile, pathlib
    >>> bad = pathlib.Path(tempfile.mkdtemp()) / "x.parquet"
    >>> _ = bad.write_bytes(b"PAR1 not really")
    >>> parquet_file(bad)
    Traceback (most recent call last):
    ...
    tokstat.errors.TokstatError: ...x.parquet: cannot read Parquet file (...) (fix: check that the file is complete Parquet ...)
    """
    return ParquetFile(path, what)


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
    scatter files), not be one of ``inputs`` nor anything the run has read or named so far
    (:func:`note_input`), and not be another output. Unset outputs (``None``) are skipped. Returns
    the checked paths.

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
        if _is_input(p, ins) is not None:        # first: whatever else is wrong, this would lose data
            raise TokstatError(f"{opt} is an input of this run; it would be overwritten", path=p,
                               fix=f"write {opt} to another path")
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
        for other, q in got.items():
            if p.absolute() == q.absolute() or _same(p, q):
                raise TokstatError(f"{opt} and {other} are the same file", path=p, fix="give each output its own path")
        got[opt] = p
    return got


# ---------------------------------------------------------------- the checked writer

def refuse_inputs(paths) -> None:
    """The writer's last guard: none of ``paths`` may be a file this run read or named (its record,
    :func:`run_scope`), whichever code path opened it."""
    for f in paths:
        if _is_input(Path(f)) is not None:
            raise TokstatError("this output is an input of this run; it would be overwritten", path=f,
                               fix="write the output to another path; nothing was written")


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
    refuse_inputs([f for target, content in outputs.items() for f in
                   ([Path(target)] if isinstance(content, (bytes, bytearray, memoryview)) else
                    [Path(target)] + [Path(target) / n for n in content])])
    check_inputs_unchanged()
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
    refuse_inputs(tables)
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
