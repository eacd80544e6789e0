"""No pool can hang, 50 times over: runs the fault matrix of ``tests/test_pools.py`` (every stage by
every kind of worker failure, and one worker hanging while another fails; compare's pool and
budget's exact pass) ``--rounds`` times in one process, and prints per case how many rounds ended
with the expected error, the slowest ending, and whether any child process was left behind.

    python analysis/stress_pools.py --rounds 50     # about 5 minutes on 2 cores

Writes ``analysis/results/pools/stress_pools.txt``. A hang is caught by an alarm and counted as a
failure (the script never stalls); exit status 1 when any round failed.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

import polars as pl  # noqa: E402

import test_pools as tp  # noqa: E402
from faults import MARK, cases  # noqa: E402
from tokstat.engine.local import JOIN_S  # noqa: E402
from tokstat.io import write_bytes  # noqa: E402


def make_shards(d: Path) -> Path:
    """The same shards as the tests' fixture."""
    for k in range(3):
        texts = [(MARK if (k, i) in ((1, 40), (2, 90)) else "") + f"document {k}-{i} " * (1 + i % 5) for i in range(150)]
        pl.DataFrame({"text": texts, "language": ["en" if i % 3 else "zh" for i in range(150)]}).write_parquet(
            d / f"{k:03d}.parquet", row_group_size=10)
    return d


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=50)
    ap.add_argument("--out", default=str(ROOT / "analysis/results/pools/stress_pools.txt"))
    args = ap.parse_args()
    matrix = [(pool, s, k) for pool in ("compare", "budget") for s, k in cases()]
    took: dict[tuple, list[float]] = {c: [] for c in matrix}
    failed: dict[tuple, list[str]] = {c: [] for c in matrix}
    t0, c0 = time.monotonic(), time.process_time()
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "shards").mkdir()
        shards = make_shards(Path(tmp) / "shards")
        for r in range(args.rounds):
            for case in matrix:
                pool, stage, kind = case
                lock = Path(tmp) / f"hang-{r}-{pool}-{stage}-{kind}.lock"
                try:
                    took[case].append(tp.check_ends(pool, stage, kind, shards, lock))
                except BaseException as e:  # noqa: BLE001 - a failed round is counted, the loop goes on
                    if isinstance(e, KeyboardInterrupt):
                        raise
                    failed[case].append(f"round {r}: {type(e).__name__}: {str(e).splitlines()[0][:120] if str(e) else ''}")
                    for p in mp.active_children():
                        p.kill()
            print(f"round {r + 1}/{args.rounds}: {sum(map(len, failed.values()))} failures so far", file=sys.stderr)
    wall, cpu = time.monotonic() - t0, time.process_time() - c0
    lines = [f"# stress_pools: {args.rounds} rounds x {len(matrix)} cases = {args.rounds * len(matrix)} failing runs",
             f"# {platform.python_version()} on {os.cpu_count()} cores; JOIN_S = {JOIN_S} s, bound = {tp.BOUND} s; "
             f"wall {wall:.0f} s, driver CPU {cpu:.0f} s",
             f"{'pool':8} {'stage':7} {'kind':5} {'ended':>7} {'median s':>9} {'max s':>6}"]
    for case in matrix:
        t = took[case]
        lines.append(f"{case[0]:8} {case[1]:7} {case[2]:5} {len(t):>3}/{args.rounds:<3} "
                     f"{statistics.median(t) if t else float('nan'):>9.2f} {max(t) if t else float('nan'):>6.2f}")
    bad = [f"{c}: {m}" for c, ms in failed.items() for m in ms]
    lines.append(f"# failures: {len(bad)}")
    lines += bad
    text = "\n".join(lines) + "\n"
    print(text, end="")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    write_bytes(out, text.encode("utf-8"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
