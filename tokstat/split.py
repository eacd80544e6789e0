"""Seeded, streaming train/held-out split by segment id (a segment's side never depends on order).

A :class:`Split` is a value: the tokenizer trained on a corpus carries the split it was trained with,
the job that evaluates it uses that same split, and the signature names it. The bootstrap seed of
the confidence intervals is a different, independent number.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

HELDOUT = 0.1


def is_heldout(segment_id: str, fraction: float = HELDOUT, seed: int = 0) -> bool:
    """True for about ``fraction`` of ids: the first 8 bytes of sha256(seed:id) read as a number in [0,1).

    >>> sum(is_heldout(str(i)) for i in range(10000))
    975
    >>> sum(is_heldout(str(i), 0.1, seed=7) for i in range(10000))
    1018
    """
    h = hashlib.sha256(f"{seed}:{segment_id}".encode()).digest()
    return int.from_bytes(h[:8], "big") / 2**64 < fraction


@dataclass(frozen=True)
class Split:
    """The held-out share of a corpus and the seed that picks it.

    >>> s = Split(0.1, seed=7)
    >>> s.label
    'heldout-0.1-seed7'
    >>> s.is_heldout("a") == is_heldout("a", 0.1, 7)
    True
    >>> Split(1.5)
    Traceback (most recent call last):
    ...
    tokstat.errors.TokstatError: held-out fraction 1.5 is not in (0, 1) (fix: e.g. --heldout 0.1)
    """

    fraction: float = HELDOUT
    seed: int = 0

    def __post_init__(self):
        from .errors import TokstatError

        if not 0 < self.fraction < 1:
            raise TokstatError(f"held-out fraction {self.fraction:g} is not in (0, 1)", fix="e.g. --heldout 0.1")
        if not isinstance(self.seed, int) or isinstance(self.seed, bool):
            raise TokstatError(f"split seed {self.seed!r} is not an integer", fix="e.g. --seed 0")
        from .ranges import SEED

        if not SEED.admits(self.seed):      # ?seed=-1 in a spec, as --seed -1 on the command line
            raise TokstatError(f"split seed {self.seed} is not {SEED.describe()}", fix="e.g. seed=0")

    def is_heldout(self, segment_id: str) -> bool:
        return is_heldout(segment_id, self.fraction, self.seed)

    @property
    def label(self) -> str:
        return f"heldout-{self.fraction:g}-seed{self.seed}"
