"""Dotted field names into nested rows (``translation.en``), shared by the JSONL and hf: loaders."""

from __future__ import annotations


def lookup(row: object, dotted: str) -> tuple[bool, object]:
    """``(found, value)`` of ``dotted`` in ``row``, one dict level per dot.

    >>> lookup({"translation": {"en": "hi"}}, "translation.en"), lookup({"t": {}}, "t.en")
    ((True, 'hi'), (False, None))
    """
    val = row
    for part in dotted.split("."):
        if not isinstance(val, dict) or part not in val:
            return False, None
        val = val[part]
    return True, val
