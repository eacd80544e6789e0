"""Every example of README.md runs as written: each ``tokstat`` command of its bash blocks (in order,
in one folder, as a newcomer would type them after the set-up) exits 0, and each Python block runs."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys

import pytest

from conftest import ROOT, SHARED

README = (ROOT / "README.md").read_text(encoding="utf-8")


def blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", README, flags=re.S)


def commands() -> list[str]:
    """The ``tokstat`` lines of the bash blocks (continuation lines joined, comments dropped)."""
    out = []
    for b in blocks("bash"):
        for line in b.replace("\\\n", " ").splitlines():
            line = line.split("  #")[0].strip()
            if line.startswith("tokstat "):
                out.append(line)
    return out


def test_the_readme_has_examples_and_no_placeholders():
    cmds = commands()
    assert len(cmds) >= 15 and len(blocks("python")) >= 3
    for c in cmds:
        assert not re.search(r"\bCORPUS\b|\[--|\bPATH\b", c), f"not runnable as written: {c}"


@pytest.mark.slow
def test_every_readme_example_runs_as_written(tmp_path):
    if not SHARED.is_dir():
        pytest.skip("../shared is absent (the examples read tiktoken:cl100k_base and spm files from it)")
    # exactly what the README says to export: nothing tokstat reads is inherited from this process
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("TOKSTAT_")},
           "TOKSTAT_TOKENIZERS": str(SHARED / "tokenizers"), "TOKSTAT_DATA": str(SHARED / "corpora"), "COLUMNS": "100"}
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "TOKSTAT_TOKENIZERS=../shared/tokenizers TOKSTAT_DATA=../shared/corpora" in readme
    assert len(readme.encode("utf-8")) <= 20_000
    for c in commands():
        r = subprocess.run([sys.executable, "-m", "tokstat.cli", *shlex.split(c)[1:], *(["--quiet"] if any(
            c.startswith(f"tokstat {k} ") for k in ("compare", "sweep", "train", "report")) else [])],
            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
        assert r.returncode == 0, f"{c}\n{r.stderr[-2000:]}"
        assert "internal error" not in r.stderr
    for b in blocks("python"):
        r = subprocess.run([sys.executable, "-c", b], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
        assert r.returncode == 0, f"{b}\n{r.stderr[-2000:]}"
