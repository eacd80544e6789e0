"""Start-up cost: ``import tokstat`` and ``tokstat --help`` against a bare interpreter, side by side.

Targets (issue 13): ``import tokstat`` costs at most 0.25 s over ``python -c pass``; ``tokstat --help``
is instant (at most 0.25 s over the bare interpreter too). Each command runs ``--runs`` times,
interleaved, and the medians are compared, so machine noise hits all three alike. Exits 1 when a
target is missed.

    python analysis/bench_import.py [--runs 15]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

COMMANDS = {
    "bare": [sys.executable, "-c", "pass"],
    "import tokstat": [sys.executable, "-c", "import tokstat"],
    "tokstat --help": [sys.executable, "-c", "import sys; from tokstat.cli import main; sys.exit(main(['--help']))"],
    "import tokstat + compare": [sys.executable, "-c", "import tokstat; tokstat.compare"],
}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=15)
    args = ap.parse_args()
    times: dict[str, list[float]] = {k: [] for k in COMMANDS}
    for _ in range(args.runs):
        for name, cmd in COMMANDS.items():
            t0 = time.perf_counter()
            subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
            times[name].append(time.perf_counter() - t0)
    med = {k: statistics.median(v) for k, v in times.items()}
    ok = True
    for name in COMMANDS:
        over = med[name] - med["bare"]
        line = f"{name:28s} median {med[name] * 1000:7.1f} ms   over bare {over * 1000:7.1f} ms"
        if name in ("import tokstat", "tokstat --help"):
            hit = over <= 0.25
            ok &= hit
            line += f"   target <= 250 ms: {'met' if hit else 'MISSED'}"
        print(line)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
