"""Parts of a parallel corpus written as files, for the coverage studies (study_coverage_*.py)."""

from __future__ import annotations

import json
from pathlib import Path


def write_parallel(path: Path, segs, langs) -> Path:
    """Segments as JSON lines, one object per segment: its id and a text per language."""
    with open(path, "w", encoding="utf-8") as f:
        for s in segs:
            f.write(json.dumps({"id": s.id, **{lang: s.texts.get(lang, "") for lang in langs}}, ensure_ascii=False) + "\n")
    return path


def pud_segments(langs: list[str]) -> list:
    """PUD's segments in ``langs`` (../shared via $TOKSTAT_DATA), in id order: the population the studies draw from."""
    from tokstat import load_corpus

    return sorted(load_corpus("ud-pud").select(langs), key=lambda s: s.id)
