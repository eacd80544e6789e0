"""No pool can hang: every executor (compare's forked workers, budget's columnar pass, and both on
Ray actors) ends within a bounded time with one clear error when a worker fails before, during or
after its task — raising, exiting, killed, or with a sibling stuck forever — and leaves no process
behind. ``analysis/stress_pools.py`` runs this matrix 50 times in a loop."""

from __future__ import annotations

import multiprocessing as mp
import os
import signal
import time
from contextlib import contextmanager

import polars as pl
import pytest

from faults import MARK, Faulty, cases, expected
from tokstat import budget, compare
from tokstat.corpus import Corpus, Segment
from tokstat.engine.local import JOIN_S

#: seconds a failing run may take, teardown included (the work itself takes about one)
BOUND = 4 * JOIN_S + 10


class Hung(Exception):
    pass


@contextmanager
def deadline(seconds: float):
    """Raise :class:`Hung` in this thread when the block runs past ``seconds`` (a hang fails the
    test instead of stalling the suite)."""
    def on_alarm(signum, frame):
        raise Hung(f"still running after {seconds:g} s")
    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def parallel() -> Corpus:
    """400 aligned segments; a few past the first batches hold :data:`faults.MARK`."""
    segs = [Segment(str(i), {"en": f"line {i} of the text", "zh": (MARK if i in (120, 260) else "好") * (1 + i % 7)})
            for i in range(400)]
    return Corpus("faults", ["en", "zh"], lambda: iter(segs))


@pytest.fixture(scope="module")
def shards(tmp_path_factory):
    """Parquet shards of small row groups: budget's exact pass gives its workers many units."""
    d = tmp_path_factory.mktemp("pool-shards")
    for k in range(3):
        texts = [(MARK if (k, i) in ((1, 40), (2, 90)) else "") + f"document {k}-{i} " * (1 + i % 5) for i in range(150)]
        pl.DataFrame({"text": texts, "language": ["en" if i % 3 else "zh" for i in range(150)]}).write_parquet(
            d / f"{k:03d}.parquet", row_group_size=10)
    return d


def run(pool: str, adapter, shards_dir, engine: str = "local"):
    if pool == "compare":
        return compare(parallel(), [adapter], workers=2, batch_size=16, n_boot=0, engine=engine)
    return budget(str(shards_dir), [adapter], exact=True, workers=2, block=2_000, engine=engine, progress=False)


def check_ends(pool, stage, kind, shards_dir, lock, engine="local"):
    """The run raises the expected error within :data:`BOUND` seconds and leaves no child process."""
    exc, pattern = expected(stage, kind)
    t0 = time.monotonic()
    with deadline(BOUND + 30):
        with pytest.raises(exc, match=pattern):
            run(pool, Faulty(stage, kind, os.getpid(), lock=str(lock)), shards_dir, engine)
    took = time.monotonic() - t0
    assert took < BOUND, f"{pool} {stage}/{kind} took {took:.1f} s"
    assert not mp.active_children()
    return took


@pytest.mark.parametrize("stage,kind", cases())
@pytest.mark.parametrize("pool", ["compare", "budget"])
def test_a_failing_worker_ends_the_pool_with_one_error(pool, stage, kind, shards, tmp_path):
    check_ends(pool, stage, kind, shards, tmp_path / "hang.lock")


@pytest.mark.parametrize("pool", ["compare", "budget"])
def test_the_same_pool_without_a_fault_counts_every_text(pool, shards, tmp_path):
    """The control: a Faulty whose fault never fires (a stage no executor reaches) gives the counts of
    a run in one process, so the failures above are the injected ones."""
    a = Faulty("never", "raise", os.getpid())
    b = Faulty("never", "raise", -1)      # every process is "a worker": nothing may fire either
    got, ref = run(pool, a, shards), run(pool, b, shards)
    assert got["tokens"].to_list() == ref["tokens"].to_list() and sum(got["tokens"].to_list()) > 0


def test_the_cli_ends_a_damaged_shard_with_one_line_and_two_workers(shards, tmp_path, capsys):
    """The case that once hung: budget --exact --workers 2 on a shard damaged after its first row
    groups (the error rises in a worker)."""
    import shutil

    from tokstat.cli import main

    d = tmp_path / "damaged"
    shutil.copytree(shards, d)
    raw = (d / "001.parquet").read_bytes()
    (d / "001.parquet").write_bytes(raw[:200] + bytes(len(raw) // 2) + raw[200 + len(raw) // 2:])
    t0 = time.monotonic()
    with deadline(BOUND + 30):
        rc = main(["budget", str(d), "-t", "tiktoken:cl100k_base", "--exact", "--workers", "2"])
    err = capsys.readouterr().err
    assert rc == 2 and len(err.strip().splitlines()) == 1 and "001.parquet" in err and "internal" not in err, err
    assert time.monotonic() - t0 < BOUND and not mp.active_children()


@pytest.mark.slow
@pytest.mark.ray
@pytest.mark.parametrize("stage,kind", [("before", "raise"), ("during", "bug"), ("during", "kill"), ("after", "exit")])
@pytest.mark.parametrize("pool", ["compare", "budget"])
def test_a_failing_ray_actor_ends_the_run_with_one_error(pool, stage, kind, shards, tmp_path):
    ray = pytest.importorskip("ray")
    from ray import cloudpickle

    import faults

    cloudpickle.register_pickle_by_value(faults)     # the actors unpickle Faulty without importing tests/
    try:
        check_ends(pool, stage, kind, shards, tmp_path / "hang.lock", engine="ray")
    finally:
        cloudpickle.unregister_pickle_by_value(faults)
    assert not ray.is_initialized()
