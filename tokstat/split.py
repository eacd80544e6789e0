"""Seeded, streaming train/held-out split by segment id (a segment's side never depends on order)."""

from __future__ import annotations

import hashlib

HELDOUT = 0.1


def is_heldout(segment_id: str, fraction: float = HELDOUT, seed: int = 0) -> bool:
    """True for about ``fraction`` of ids: the first 8 bytes of sha256(seed:id) read as a number in [0,1).

    >>> sum(is_heldout(str(i)) for i in range(10000))
    1008
    """
    h = hashlib.sha256(f"{seed}:{segment_id}".encode()).digest()
    return int.from_bytes(h[:8], "big") / 2**64 < fraction
