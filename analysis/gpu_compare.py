"""tokstat's projection beside each figure ``analysis/gpu_check.py`` measured, with the ratio.

    python analysis/gpu_compare.py analysis/results/gpu_check.json [--gpu h200] [--mbu 0.7]

For each preset: weight bytes and KV-cache bytes per token (``model-info``), prefill latency at each
(batch, sequence) and decode latency per token at each batch (the serving roofline of
:mod:`tokstat.cost.projection` at the calibrated MFU and ``--mbu``), and a training step's time at
the calibrated MFU against the measured one, whose achieved MFU (tokstat's FLOPs per token × tokens
/ seconds / the GPU's dense bf16 peak) is printed too. Ratios are measured / projected; |log ratio|
over ln 1.15 is marked ``!`` (docs/cost-model.md explains each). Also prints the decode MBU and the
prefill MFU that would make the projections match (candidates for a calibration row).
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys

from tokstat.cost.calibration import default_mfu
from tokstat.cost.hardware import gpu
from tokstat.cost.model import (ModelConfig, forward_flops_per_token, inference_weight_bytes, kv_cache_bytes_per_token,
                                preset, training_flops_per_token)
from tokstat.cost.projection import decode_step_seconds, prefill_seconds


def model_of(m: dict) -> ModelConfig:
    try:
        return preset(m["preset"])
    except Exception:   # noqa: BLE001 - a tiny self-test shape is not a preset
        return ModelConfig(name=m["preset"], **m["shape"])


def rows(data: dict, gpu_name: str, mbu: float) -> list[dict]:
    g = gpu(gpu_name)
    mfu, _ = default_mfu(gpu_name)
    out = []
    for meas in data["measurements"]:
        m = model_of(meas)
        width = 4 if meas.get("dtype") == "fp32" else 2          # the CPU self-test runs in fp32
        add = lambda fig, got, want: out.append({"preset": meas["preset"], "figure": fig, "measured": got,  # noqa: E731
                                                 "projected": want, "ratio": got / want if want else None})
        add("weight bytes", meas["weight_bytes"], inference_weight_bytes(m) * width / 2)
        add("KV bytes per token", meas["kv_cache_bytes_per_token"], kv_cache_bytes_per_token(m) * width / 2)
        for p in meas["prefill"]:
            add(f"prefill s, batch {p['batch']} × {p['seq']}", p["seconds"],
                prefill_seconds(m, g, batch=p["batch"], seq=p["seq"], mfu=mfu, mbu=mbu)[0])
        for d in meas["decode"]:
            add(f"decode s/token, batch {d['batch']} at {d['context']}", d["seconds_per_token"],
                decode_step_seconds(m, g, batch=d["batch"], context=d["context"], mfu=mfu, mbu=mbu)[0])
        for t in meas.get("train", []):
            if "seconds" not in t:
                continue
            flops = training_flops_per_token(m, context=t["seq"], recompute=t["checkpointing"]) * t["tokens"]
            achieved = flops / t["seconds"] / (g.bf16_tflops * 1e12)
            add(f"train step s, seq {t['seq']}{' (checkpointing)' if t['checkpointing'] else ''}; achieved MFU "
                f"{achieved:.3f}", t["seconds"], flops / (g.bf16_tflops * 1e12 * mfu))
    return out


def fitted(data: dict, gpu_name: str) -> dict:
    """The decode MBU and prefill MFU that the measurements imply (medians over presets and shapes)."""
    g = gpu(gpu_name)
    mbus, mfus = [], []
    for meas in data["measurements"]:
        m = model_of(meas)
        for d in meas["decode"]:
            if d["batch"] == 1:
                nbytes = inference_weight_bytes(m) + kv_cache_bytes_per_token(m) * d["context"]
                mbus.append(nbytes / d["seconds_per_token"] / (g.bandwidth_gb_s * 1e9))
        for p in meas["prefill"]:
            if p["seq"] >= 1024:
                mfus.append(p["batch"] * p["seq"] * forward_flops_per_token(m, context=p["seq"]) / p["seconds"]
                            / (g.bf16_tflops * 1e12))
    return {"decode_mbu": statistics.median(mbus) if mbus else None,
            "prefill_mfu": statistics.median(mfus) if mfus else None}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results")
    ap.add_argument("--gpu", default="h200")
    ap.add_argument("--mbu", type=float, default=0.7)
    ap.add_argument("--json", action="store_true", help="print the rows as JSON")
    a = ap.parse_args(argv)
    data = json.loads(open(a.results, encoding="utf-8").read())
    rs = rows(data, a.gpu, a.mbu)
    if a.json:
        print(json.dumps({"rows": rs, "implied": fitted(data, a.gpu), "environment": data["environment"]}, indent=1))
        return 0
    env = data["environment"]
    print(f"measured on {env.get('gpu') or env['device']} (torch {env['torch']}, transformers {env['transformers']}, "
          f"{env['date']}); projected for {a.gpu} at the calibrated MFU and MBU {a.mbu}")
    print(f"{'preset':<14} {'figure':<62} {'measured':>12} {'projected':>12} {'ratio':>7}")
    for r in rs:
        flag = " !" if r["ratio"] and abs(math.log(r["ratio"])) > math.log(1.15) else ""
        print(f"{r['preset']:<14} {r['figure']:<62} {r['measured']:>12.4g} {r['projected']:>12.4g} "
              f"{r['ratio']:>7.3f}{flag}")
    print("implied:", json.dumps(fitted(data, a.gpu)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
