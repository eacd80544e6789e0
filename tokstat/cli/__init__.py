"""Command line: each command maps one-to-one onto a function of the Python API; ``main()`` only
dispatches. One module per job over two shared ones:

================  ==========================================================================
``options``       the options every command shares (corpus, tokenizers, split, mix, model),
                  :class:`~.options.Command` (numbers range-checked, inputs recorded)
``terminal``      what commands print: wrapped prose, fitted tables, signatures, choices
``measure``       measure a corpus: corpus info, compare, budget, groups, show, worst, ...
``price``         price it: model-info, cost
``vocab``         choose or build a vocabulary: train, sweep, vocab-plan, extend
``report``        report: one page from results, or from a corpus end to end
================  ==========================================================================

Nothing heavy is imported until a command runs, so ``tokstat --help`` is instant.
"""

from __future__ import annotations

import shlex
import signal
import sys
import warnings

import click

from ..errors import TokstatError
from ..fmt import visible
from . import measure, price, report, vocab
from .options import OUTPUT_PARAMS, Group
from .terminal import GLYPHS, _print, wrap_prose

__all__ = ["GLYPHS", "OUTPUT_PARAMS", "cli", "main", "wrap_prose", "_print"]


JOBS = (measure, price, vocab, report)


class Jobs(Group):
    """The ``tokstat`` group: ``--help`` lists the commands under their job."""

    def format_commands(self, ctx, formatter):
        w = max(len(c.name) for j in JOBS for c in j.COMMANDS)       # one column for every job
        for job in JOBS:
            rows = [(c.name.ljust(w), c.get_short_help_str(formatter.width - 6 - w)) for c in job.COMMANDS if not c.hidden]
            with formatter.section(job.JOB):
                formatter.write_dl(rows)


@click.group(cls=Jobs)
@click.version_option(package_name="tokstat")
def cli():
    """tokstat: token statistics, language premiums and GPU cost per language."""


for _job in JOBS:        # the four jobs' commands, each one mapping onto the API
    for _c in _job.COMMANDS:
        cli.add_command(_c)




class Terminated(KeyboardInterrupt):
    """SIGTERM, raised like Ctrl-C so that every ``finally`` (temporary files, workers) runs."""


def _on_sigterm(signum, frame):
    raise Terminated


def _warning(message, category, filename, lineno, file=None, line=None):
    """Warnings as one line, ``tokstat: warning: ...`` (not Python's ``path:line: UserWarning``).
    A library's deprecation notice is for tokstat's developers, not its users: shown only with
    ``TOKSTAT_DEBUG=1``."""
    import os

    if issubclass(category, (DeprecationWarning, PendingDeprecationWarning)) and not os.environ.get("TOKSTAT_DEBUG"):
        return
    text = visible(str(message))
    if text in _WARNED:          # once per run, whichever line or worker raised it
        return
    _WARNED.add(text)
    click.echo(f"tokstat: warning: {text}", err=True)


#: the warnings this run has shown (:func:`_warning`; emptied by :func:`main`)
_WARNED: set[str] = set()


def main(argv: list[str] | None = None) -> int:
    """Entry point: run the click group; a :class:`TokstatError` becomes one line on stderr and exit 2.
    Ctrl-C (exit 130) and SIGTERM (exit 143) remove temporary files, stop the workers and say what
    to rerun; no output file is ever left half-written (they are renamed into place when complete).
    Any other exception is a bug: one line naming it, exit 1 (``TOKSTAT_DEBUG=1`` shows the traceback)."""
    import os

    args = sys.argv[1:] if argv is None else argv
    previous = signal.signal(signal.SIGTERM, _on_sigterm)
    caught = warnings.catch_warnings()
    caught.__enter__()
    warnings.simplefilter("default")   # each run shows its own warnings once (a fresh registry per run)
    warnings.showwarning = _warning
    _WARNED.clear()
    try:
        if not args:                     # bare ``tokstat``: its help, as ``tokstat --help`` prints it
            args = ["--help"]
        cli.main(args=args, prog_name="tokstat", standalone_mode=False)
    except TokstatError as e:
        click.echo(f"tokstat: error: {visible(e)}", err=True)
        return 2
    except (click.exceptions.Abort, KeyboardInterrupt) as e:
        term = isinstance(e, Terminated) or isinstance(e.__cause__ or e.__context__, Terminated)
        click.echo(f"tokstat: {'terminated' if term else 'interrupted'}; no output was written, rerun: "
                   f"tokstat {visible(shlex.join(args))}", err=True)
        return 143 if term else 130
    except click.UsageError as e:
        cmd = e.ctx.command_path.replace("python -m tokstat.cli", "tokstat") if e.ctx else "tokstat"
        msg = " ".join(e.format_message().split())     # click lists choices on lines of their own: one line
        click.echo(f"tokstat: error: {visible(msg)} (fix: see {visible(cmd)} --help)", err=True)
        return 2
    except click.ClickException as e:
        e.show()
        return e.exit_code
    except MemoryError:
        click.echo("tokstat: error: out of memory (fix: lower --max-chars, use fewer --workers or fewer segments "
                   "at once, or run on a machine with more memory; no output was written)", err=True)
        return 2
    except (SystemExit, GeneratorExit):
        raise
    except BaseException as e:  # noqa: BLE001 - a bug (or a Rust panic, a BaseException), in one line
        if os.environ.get("TOKSTAT_DEBUG"):
            raise
        msg = str(e).splitlines()[0][:200] if str(e) else ""
        click.echo(f"tokstat: internal error: {type(e).__name__}: {visible(msg)} (fix: rerun with TOKSTAT_DEBUG=1 for "
                   "the traceback and report it)", err=True)
        return 1
    finally:
        signal.signal(signal.SIGTERM, previous)
        caught.__exit__(None, None, None)
    return 0
