"""One exception type, whose message names the file, the line and the fix."""

from __future__ import annotations


class TokstatError(Exception):
    """A user-facing error: printed as one line by the CLI, never as a traceback.

    >>> str(TokstatError("bad line", path="a.txt", line=3, fix="remove it"))
    'a.txt:3: bad line (fix: remove it)'
    """

    def __init__(self, message: str, *, path: object | None = None, line: int | None = None,
                 fix: str | None = None):
        self.message, self.path, self.line, self.fix = message, path, line, fix
        where = ""
        if path is not None:
            where = f"{path}:{line}: " if line is not None else f"{path}: "
        super().__init__(f"{where}{message}" + (f" (fix: {fix})" if fix else ""))

    def __reduce__(self):
        """Pickled whole (a worker's error reaches the driver with its path, line and fix)."""
        return _rebuild, (type(self), self.message, self.path, self.line, self.fix)


def _rebuild(cls, message, path, line, fix):
    return cls(message, path=path, line=line, fix=fix)
