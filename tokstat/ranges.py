"""The range of every numeric option, in one table.

Every integer or real option of every command has its range here, by option name (one meaning per
name across commands), checked before any work starts (:func:`check`). A value outside its range,
a NaN or an infinity is one error naming the option, the range and the value: a price of $-1 per
GPU-hour, ``--gpus 0`` or ``--seed -1`` never reach the code that would divide by them or hand
them to numpy. ``tests/test_ranges.py`` walks every command's options and fails on a numeric
option without an entry, and tries each bound.

>>> check("--mfu", 1.5)
Traceback (most recent call last):
...
tokstat.errors.TokstatError: --mfu must be at most 1, got 1.5 (fix: give --mfu a value in (0, 1])
>>> check("--workers", 2)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .errors import TokstatError

INF = math.inf


@dataclass(frozen=True)
class Range:
    """``lo``..``hi`` (``open_lo``/``open_hi``: the bound itself is excluded); ``says`` replaces
    the generated description of the range where a phrase reads better."""

    lo: float
    hi: float = INF
    open_lo: bool = False
    open_hi: bool = False
    says: str | None = None

    def admits(self, v: float) -> bool:
        if isinstance(v, float) and math.isnan(v):
            return False
        if (v < self.lo) or (self.open_lo and v == self.lo) or (v > self.hi) or (self.open_hi and v == self.hi):
            return False
        return not (isinstance(v, float) and math.isinf(v))

    def describe(self) -> str:
        if self.says:
            return self.says
        if self.hi == INF and self.lo == 0 and self.open_lo:
            return "a finite positive number"
        if self.hi == INF:
            return f"at least {_num(self.lo)}" if not self.open_lo else f"above {_num(self.lo)}"
        return (f"in {'(' if self.open_lo else '['}{_num(self.lo)}, {_num(self.hi)}{')' if self.open_hi else ']'}")



def _num(x: float) -> str:
    return f"{int(x):,}" if float(x).is_integer() and abs(x) < 1e10 else f"{x:g}"


SEED = Range(0, 2**32 - 1)
COUNT = Range(1, 10**9)
POSITIVE = Range(0, INF, open_lo=True)
SHARE = Range(0, 1, open_lo=True)
WIDTH = Range(1, 10**7)
#: the largest vocabulary tokstat trains or prices (10 million; the largest published ones hold about
#: 1 million): the trainer reserves about 70 bytes per requested entry before it starts, so
#: ``train:bpe:4000000000`` would ask for 283 GB and abort the process
VOCAB = Range(2, 10**7)

#: option -> its range (one meaning per option name, in every command that has it)
RANGES: dict[str, Range] = {
    # seeds (numpy takes 0 .. 2**32 - 1)
    "--seed": SEED, "--boot-seed": SEED, "--diag-seed": SEED,
    # how the work runs
    "--workers": Range(1, 4096), "--max-chars": COUNT, "--max-segments": COUNT, "-n": COUNT,
    # corpora and training
    "--sample-bytes": POSITIVE, "--heldout": Range(0, 1, open_lo=True, open_hi=True),
    "--vocab-size": VOCAB, "--adapt-bytes": Range(0, 1e18),
    # model shape
    "--d-model": WIDTH, "--layers": WIDTH, "--heads": WIDTH, "--kv-heads": WIDTH, "--d-ff": WIDTH,
    "--head-dim": WIDTH, "--context": Range(1, 10**9), "--seq-len": Range(1, 10**9),
    # Tao et al.'s vocabulary laws are fitted on models of 33M-3B non-vocabulary parameters: a plan
    # for under a million is beyond any extrapolation (and divides by zero below 1e-300); their
    # approach 3 has no optimum past about 2e13 (tokstat.vocabplan.MIN_N_NV, MAX_N_NV)
    "--non-vocab-params": Range(1e6, 1e13, says="a finite number in [1e+06, 1e+13]"),
    # hardware and parallelism
    "--gpus": Range(1, 10**6), "--tp": Range(1, 10**6), "--pp": Range(1, 10**6), "--zero": Range(0, 3),
    "--micro-batch": Range(1, 10**6), "--batch": Range(1, 10**7),
    "--mfu": SHARE, "--mbu": SHARE, "--goodput": SHARE,
    "--price": Range(0, 1e6, open_lo=True),
    # volumes
    "--train-chars": POSITIVE, "--train-bytes": POSITIVE, "--train-tokens": POSITIVE, "--tokens-per-param": POSITIVE,
    "--serve-chars": POSITIVE, "--prompt-chars": Range(0, 1e12), "--output-chars": Range(0, 1e12, open_lo=True),
    "--flops": Range(0, 1e35, open_lo=True, says="a finite training budget in (0, 1e+35] FLOPs"),
    # thresholds
    "--max-unk": Range(0, 1), "--max-premium": Range(1, 1e9, says="a finite number of at least 1"),
}


def check_vocab(size: int, where: str) -> None:
    """A vocabulary size to train (``--sizes``, ``--add``, ``train:ALGO:SIZE``) within :data:`VOCAB`.

    >>> check_vocab(4_000_000_000, "train:bpe:4000000000")
    Traceback (most recent call last):
    ...
    tokstat.errors.TokstatError: train:bpe:4000000000: a vocabulary size must be in [2, 10,000,000], got 4,000,000,000 (fix: ...)
    """
    if not VOCAB.admits(size):
        raise TokstatError(f"{where}: a vocabulary size must be {VOCAB.describe()}, got {size:,}",
                           fix=f"train at most {_num(VOCAB.hi)} tokens" if size > VOCAB.hi else
                           f"train at least {_num(VOCAB.lo)} tokens")


def check(option: str, value) -> None:
    """Refuse ``value`` for ``option`` when it lies outside the option's range (None: not given).
    An option missing from :data:`RANGES` is a bug (``tests/test_ranges.py`` finds it first)."""
    if value is None or isinstance(value, bool):
        return
    r = RANGES[option]
    if r.admits(value):
        return
    whole = r.describe()
    if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
        need = (whole if whole.startswith(("a ", "in ")) and (r.hi <= 1 or r.says) else
                "a finite positive number" if r.open_lo and r.lo == 0 else f"a finite number {whole}")
        shown = "nan" if math.isnan(value) else value
    elif value < r.lo or (r.open_lo and value == r.lo):
        need, shown = (r.says or (("a finite positive number" if r.lo == 0 else f"above {_num(r.lo)}") if r.open_lo
                                  else f"at least {_num(r.lo)}")), value
    else:
        need, shown = r.says or (f"below {_num(r.hi)}" if r.open_hi else f"at most {_num(r.hi)}"), value
    raise TokstatError(f"{option} must be {need}, got {shown}",
                       fix=f"{option} takes {whole}" if whole.startswith("a ") else f"give {option} a value {whole}")


#: a derived quantity (FLOPs, hours, dollars, seconds) is a number a reader can use when it is 0 or
#: its magnitude lies in [MEANINGFUL_LOW, MEANINGFUL_HIGH]: past them, products and ratios of it
#: overflow to infinity or lose every digit to underflow
MEANINGFUL_LOW, MEANINGFUL_HIGH = 1e-200, 1e200


def meaningful(v) -> bool:
    """Whether a derived quantity is a number a reader can use (None: not computed, fine).

    >>> meaningful(3.5), meaningful(0.0), meaningful(float("inf")), meaningful(1e-310), meaningful(None)
    (True, True, False, False, True)
    """
    if v is None:
        return True
    return math.isfinite(v) and (v == 0 or MEANINGFUL_LOW <= abs(v) <= MEANINGFUL_HIGH)


def usable_edge(clean, given: float, ordinary: float) -> tuple[str, float]:
    """The edge of an input's usable range between ``ordinary`` (``clean(ordinary)`` holds) and
    ``given`` (it does not), by bisection in log space (every derived quantity is monotone in each
    input): ``("up to", x)`` where ``given`` is too large, ``("at least", x)`` where too small.

    >>> usable_edge(lambda v: v * 1e10 <= 1e200, 1e300, 1.0)[0], round(usable_edge(lambda v: v * 1e10 <= 1e200, 1e300, 1.0)[1] / 1e190, 3)
    ('up to', 1.0)
    """
    lo, hi = math.log10(ordinary), math.log10(given)
    for _ in range(60):
        mid = (lo + hi) / 2
        if clean(10 ** mid):
            lo = mid
        else:
            hi = mid
    return ("up to" if given > ordinary else "at least"), 10 ** lo


def refuse_derived(option: str, given: float, what: str, value, edge: tuple[str, float], context: str = "") -> TokstatError:
    """The one error of an input that makes a derived quantity meaningless."""
    side, x = edge
    return TokstatError(f"{option} {given:g} makes {what} {value:g}: not a number a reader can use"
                        f"{f' ({context}, {option} is usable {side} {x:.3g})' if context else f' ({option} is usable {side} {x:.3g})'}",
                        fix=f"give {option} a value {side} {x:.3g}")


__all__ = ["RANGES", "Range", "check", "meaningful", "usable_edge", "refuse_derived", "MEANINGFUL_LOW", "MEANINGFUL_HIGH"]
