"""``tokstat report``: compare, sweep and cost results -> one self-contained HTML file (inline SVG
charts, no scripts or fonts fetched from anywhere) and, on request, the same charts as PNG.

The page opens with the answers (which tokenizer, what each language costs, which vocabulary size),
then the comparison table, the charts, the sweep curves, the cost table and every signature.
Rendering only: the pipeline that produces the tables is :func:`tokstat.study.study`.
``read`` reads result files, ``charts`` draws, ``answers`` writes the prose, ``page`` the HTML.
"""

from __future__ import annotations

import io
import os
from pathlib import Path

import polars as pl

from ..io import write_bytes, write_files
from .charts import charts
from .page import render
from .read import kind_of, read_results

__all__ = ["report", "read_results", "kind_of", "render", "charts"]


def report(results: list[str | os.PathLike] | dict[str, pl.DataFrame], out: str | os.PathLike, *,
           png: str | os.PathLike | None = None, title: str = "tokstat report") -> Path:
    """Write the HTML report of ``results`` (compare/sweep/cost files, or :func:`study`'s dict) to
    ``out``; with ``png``, the same charts as ``DIR/NAME.png`` (200 dpi). Returns the HTML path."""
    import matplotlib.pyplot as plt

    data = results if isinstance(results, dict) else read_results(results)
    figs = charts(data)
    try:
        page = render(data, figs, title).encode("utf-8")
        pngs = {}
        for f in figs if png is not None else []:
            buf = io.BytesIO()
            f.figure.savefig(buf, format="png", dpi=200, metadata={"Software": None})
            pngs[f"{f.name}.png"] = buf.getvalue()
        # everything is rendered before the first byte is written: a failure leaves no output
        if png is not None:
            write_files(png, pngs)
        write_bytes(out, page)
    finally:
        for f in figs:
            plt.close(f.figure)
    return Path(out)
