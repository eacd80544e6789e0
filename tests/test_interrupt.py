"""Nothing lost or half-written: Ctrl-C (SIGINT to the process group) and SIGTERM stop a run, stop
its workers, leave no output or temporary file, and say what to rerun."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import polars as pl
import pytest

from tokstat.io import write_files, write_table

from conftest import ROOT


def _big_corpus(path: Path, rows: int = 60_000) -> None:
    base = [json.loads(json.dumps({"en": f"The committee met on day {i} to discuss budget item {i * 7}.",
                                   "zh": f"委员会在第{i}天开会讨论第{i * 7}项预算。"})) for i in range(200)]
    with open(path, "w", encoding="utf-8") as f:
        for k in range(rows // 200):
            for i, r in enumerate(base):
                f.write(json.dumps({"id": f"{k}-{i}", **r}, ensure_ascii=False) + "\n")


def _children(pid: int) -> set[int]:
    out = set()
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                if int(open(f"/proc/{d}/stat").read().rsplit(")", 1)[1].split()[1]) == pid:
                    out.add(int(d))
            except (OSError, IndexError):
                pass
    return out


@pytest.mark.slow
@pytest.mark.parametrize("sig, code, word", [(signal.SIGINT, 130, "interrupted"), (signal.SIGTERM, 143, "terminated")])
def test_signal_leaves_no_partial_output(tmp_path, sig, code, word):
    corpus = tmp_path / "big.jsonl"
    _big_corpus(corpus)
    out = tmp_path / "out"
    out.mkdir()
    cmd = [sys.executable, "-m", "tokstat.cli", "compare", str(corpus), "-t", "train:bpe:500", "--workers", "2",
           "--quiet", "--out", str(out / "r.parquet"), "--segments-out", str(out / "s.parquet")]
    p = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    deadline = time.time() + 60
    while len(_children(p.pid)) < 2 and time.time() < deadline:   # wait until the workers run
        time.sleep(0.1)
    workers = _children(p.pid)
    assert len(workers) >= 2, "the workers never started"
    time.sleep(0.5)
    if sig == signal.SIGINT:
        os.killpg(p.pid, sig)          # what Ctrl-C does: the whole foreground process group
    else:
        p.send_signal(sig)             # what a scheduler does: the main process only
    _, err = p.communicate(timeout=60)
    err = err.decode()
    assert p.returncode == code, err
    assert f"tokstat: {word}; no output was written, rerun: tokstat compare" in err, err
    assert "Traceback" not in err, err
    assert list(out.iterdir()) == []
    time.sleep(0.5)
    assert not any(Path(f"/proc/{w}").exists() and "Z" not in open(f"/proc/{w}/stat").read().split()[2]
                   for w in workers), "a worker outlived the run"


@pytest.mark.slow
def test_workers_die_with_a_killed_parent(tmp_path):
    """``kill -9`` of the main process (no handler runs): its --workers children end too, within
    seconds, instead of waiting forever on their queue."""
    corpus = tmp_path / "big.jsonl"
    _big_corpus(corpus)
    cmd = [sys.executable, "-m", "tokstat.cli", "compare", str(corpus), "-t", "train:bpe:500", "--workers", "2", "--quiet"]
    p = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.time() + 60
    while len(_children(p.pid)) < 2 and time.time() < deadline:
        time.sleep(0.1)
    workers = _children(p.pid)
    assert len(workers) >= 2, "the workers never started"
    p.kill()
    p.wait()
    deadline = time.time() + 10
    alive = workers
    while alive and time.time() < deadline:
        time.sleep(0.2)
        alive = {w for w in workers if Path(f"/proc/{w}").exists() and "Z" not in open(f"/proc/{w}/stat").read().split()[2]}
    assert not alive, f"workers {sorted(alive)} outlived their killed parent"


def _interrupt_on_write(monkeypatch, n: int):
    """``os.write`` raises KeyboardInterrupt on its ``n``-th call (the checked writer's own writes)."""
    real, calls = os.write, []

    def flaky(fd, data):
        calls.append(fd)
        if len(calls) == n:
            real(fd, bytes(data)[: len(data) // 2])
            raise KeyboardInterrupt
        return real(fd, data)

    monkeypatch.setattr(os, "write", flaky)


def test_interrupt_mid_write_keeps_the_old_file(tmp_path, monkeypatch):
    target = tmp_path / "r.csv"
    target.write_text("old\n")
    _interrupt_on_write(monkeypatch, 1)
    with pytest.raises(KeyboardInterrupt):
        write_table(pl.DataFrame({"a": [1]}), target)
    monkeypatch.undo()
    assert target.read_text() == "old\n" and sorted(tmp_path.iterdir()) == [target]


def test_write_table_interrupted_mid_write_leaves_nothing(tmp_path, monkeypatch):
    _interrupt_on_write(monkeypatch, 1)
    with pytest.raises(KeyboardInterrupt):
        write_table(pl.DataFrame({"a": [1]}), tmp_path / "t.csv")
    monkeypatch.undo()
    assert list(tmp_path.iterdir()) == []


def test_write_files_all_or_nothing(tmp_path, monkeypatch):
    d = tmp_path / "tok"
    _interrupt_on_write(monkeypatch, 2)
    with pytest.raises(KeyboardInterrupt):
        write_files(d, {"tokenizer.json": b"{}", "metadata.json": b"{}"})
    monkeypatch.undo()
    assert list(tmp_path.iterdir()) == []   # no file, no temporary folder, no new empty folder
