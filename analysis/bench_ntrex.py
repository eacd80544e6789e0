"""Benchmark: `compare --kind monolingual` and `budget --exact` on 128 languages (issue 58), against the
fastest exact pass the libraries alone make over the same shards, CPU seconds side by side in one run.

    python analysis/bench_ntrex.py [--copies 1] [--dir /tmp/tokstat-bench-ntrex]

The corpus: NTREX-128's documents (``analysis/ntrex.py``; about 47 MB of text per copy, 128 languages
and variants, 19 scripts with a word segmenter or a syllable rule of their own) as FineWeb-2-style
Parquet shards (``text``, ``language``, ``language_script``), every language in every shard.

The baseline is what an exact count costs with no tokstat code at all (``bench_budget.py``'s
definitions): the libraries' start-up in a fresh interpreter (numpy, polars, pyarrow, rich, click,
langcodes, tiktoken, gigatoken imported, the encoding loaded, gigatoken built) plus every library
call of one checked pass over the shards on one core (read, UTF-8 check, normalisation scan,
hash, gigatoken, characters, languages, sums: ``checked_floor(full=True)``). The commands run as a
user runs them (a subprocess with the default options: workers left to the pass, diagnostics
``auto``; the run of least CPU of two; CPU = user + system of the process and its workers).
Targets: compare ≤ 2.5× the baseline, budget --exact ≤ 1.5×. Exits 1 when one is missed.
"""

from __future__ import annotations

import argparse
import compileall
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "analysis"))

import bench_budget as bb  # noqa: E402
import ntrex  # noqa: E402

TOK = bb.TOK


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--copies", type=int, default=1)
    ap.add_argument("--dir", default="/tmp/tokstat-bench-ntrex")
    ap.add_argument("--profile", action="store_true", help="also print where compare's time goes (cProfile)")
    a = ap.parse_args()
    if not ntrex.NTREX.is_dir():
        print("../shared/corpora/ntrex-128 is absent: nothing to measure")
        return 0
    d = Path(a.dir) / f"ntrex-x{a.copies}"
    if not d.exists():
        ntrex.fineweb_shards(d, order="shuffled", shards=8, copies=a.copies)
    compileall.compile_dir(str(ROOT / "tokstat"), quiet=1)
    import polars as pl

    from tokstat.adapters import load_tokenizer
    from tokstat.adapters.fast import _build

    texts = bb.texts_of(d)
    mb = sum(len(t.encode()) for t in texts) / 1e6
    ref = load_tokenizer(TOK)
    g_cpu = min(bb.first_pass(_build(ref), bb.in_batches(texts))[0] for _ in range(2))
    texts.clear()
    ranks = Path(tempfile.mkdtemp()) / "ranks.tiktoken"
    ranks.write_bytes(ref.ranks_bytes)
    lib0 = bb.library_startup(ranks)
    floor = min(bb.checked_floor(d, ref, full=True) for _ in range(2))
    base = lib0 + floor
    print(f"corpus {d}: {mb:.0f} MB of text, 128 languages; tokenizer {TOK}")
    print(f"  gigatoken alone (8 MiB batches, one thread): {g_cpu:.2f} CPU s")
    print(f"  baseline, the libraries alone: start-up {lib0:.2f} + every call of one checked pass {floor:.2f} = "
          f"{base:.2f} CPU s")
    out = Path(tempfile.mkdtemp())
    ok = True

    def row(what: str, cpu: float, wall: float, target: float) -> None:
        nonlocal ok
        r = cpu / base
        ok &= r <= target
        print(f"  {what}: {cpu:.2f} CPU s ({wall:.1f} s wall), {r:.2f}x the baseline (target {target}x) "
              f"{'ok' if r <= target else 'MISSED'}")

    b_cpu, b_wall = bb.least_of(["budget", str(d), "-t", TOK, "--exact", "--quiet", "--out", str(out / "b.csv")],
                                out / "b.csv")
    row("budget --exact", b_cpu, b_wall, 1.5)
    c_cpu, c_wall = bb.least_of(["compare", str(d), "-t", TOK, "--kind", "monolingual", "--quiet",
                                 "--out", str(out / "c.csv")], out / "c.csv")
    row("compare --kind monolingual", c_cpu, c_wall, 2.5)
    c = pl.read_csv(out / "c.csv")
    b = pl.read_csv(out / "b.csv")
    print(f"  compare: {c.height} rows, diagnostics on {int(c['diag_documents'].cast(pl.Int64).sum()):,} documents "
          f"({c['signature'][0].rsplit('|', 2)[-2]}); tokens equal budget's exact count: "
          f"{int(c['tokens'].sum()) == int(b.filter(pl.col('language') == '(all)')['exact'][0])}")
    if a.profile:
        bb.profile_compare(d)
    print("targets met" if ok else "targets missed")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
