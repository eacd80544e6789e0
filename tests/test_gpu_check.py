"""analysis/gpu_check.py stays correct without a GPU: on the CPU with the tiny shapes it runs, its
JSON has every field, the KV bytes per token it reads from real cache tensors and the weight bytes
equal tokstat's formulas exactly, and analysis/gpu_compare.py prints a ratio for every figure."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys

import pytest

from conftest import ROOT

#: the interpreter that has torch and transformers: this one, or $TORCH_PYTHON (a separate environment,
#: as on the GPU machine, where tokstat's own dependencies are not installed)
TORCH_PYTHON = os.environ.get("TORCH_PYTHON") or sys.executable
HAVE_TORCH = subprocess.run([TORCH_PYTHON, "-c", "import torch, transformers"], capture_output=True).returncode == 0 if (
    os.environ.get("TORCH_PYTHON") or all(importlib.util.find_spec(m) is not None for m in ("torch", "transformers"))) else False


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_TORCH, reason="torch and transformers are not installed (pip install torch transformers, or "
                                                   "TORCH_PYTHON=an interpreter that has them)")
def test_gpu_check_runs_on_cpu_and_compares(tmp_path):
    out = tmp_path / "gpu_check.json"
    r = subprocess.run([TORCH_PYTHON, str(ROOT / "analysis/gpu_check.py"), "--tiny", "--device", "cpu", "--repeats", "2",
                        "--warmup", "1", "--out", str(out)], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    data = json.loads(out.read_text())
    assert {"python", "torch", "transformers", "device", "date", "gpu"} <= set(data["environment"])
    assert [m["preset"] for m in data["measurements"]] == ["tiny-dense", "tiny-moe"]
    for m in data["measurements"]:
        assert {"parameters", "weight_bytes", "kv_cache_bytes_per_token", "prefill", "decode", "train"} <= set(m)
        assert all({"batch", "seq", "seconds", "repeats"} <= set(p) for p in m["prefill"])
        assert all({"batch", "context", "seconds_per_token", "repeats"} <= set(d) for d in m["decode"])
        assert {t["checkpointing"] for t in m["train"]} == {False, True} and all(t["seconds"] > 0 for t in m["train"])
    cmp = subprocess.run([sys.executable, str(ROOT / "analysis/gpu_compare.py"), str(out), "--json"],
                         capture_output=True, text=True, timeout=600)
    assert cmp.returncode == 0, cmp.stderr[-3000:]
    rows = json.loads(cmp.stdout)["rows"]
    exact = [r for r in rows if r["figure"] in ("weight bytes", "KV bytes per token")]
    assert len(exact) == 4 and all(r["ratio"] == pytest.approx(1.0) for r in exact), exact
    assert all(r["ratio"] and r["ratio"] > 0 for r in rows)
