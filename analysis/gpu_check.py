"""Measure what tokstat's cost model projects, on a real GPU: weight bytes, KV-cache bytes per token,
prefill latency, decode latency per token and one training step, for model presets that fit one GPU.

Runs with **torch and transformers only** (the device image has nothing else; tokstat is not
imported): each preset's shape is read from ``tokstat/cost/presets.toml`` with ``tomllib``, the model
is built from a transformers config with random weights directly on the device (no download), and
every figure is timed with CUDA events after warm-ups, the median of repeats kept with the repeats.

    python analysis/gpu_check.py --out analysis/results/gpu_check.json          # on the GPU machine
    python analysis/gpu_check.py --tiny --device cpu --out /tmp/gpu_check.json  # the CPU self-test
    python analysis/gpu_compare.py analysis/results/gpu_check.json              # here, with tokstat

``gpu_compare.py`` puts tokstat's projection beside each measurement with the ratio.
"""

from __future__ import annotations

import argparse
import gc
import json
import platform
import statistics
import sys
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PRESETS = ROOT / "tokstat" / "cost" / "presets.toml"

#: presets that fit one H200 in bf16 (weights; a training step holds weights + gradients + activations)
DEFAULT = ["llama3-8b", "qwen2.5-7b", "mistral-7b", "llama2-13b", "qwen3-30b-a3b"]
TRAIN = {"llama3-8b", "qwen2.5-7b", "mistral-7b"}   # dense presets given a training step (bf16 weights + grads fit)
PREFILL = [(1, 1024), (8, 1024), (1, 4096), (8, 4096)]
DECODE_BATCHES = [1, 8, 32, 64]
DECODE_PROMPT = 1024
TRAIN_SEQ = 4096

#: the tiny shape of the CPU self-test (every field a preset has, so every code path runs)
TINY = {"tiny-dense": {"d_model": 64, "layers": 2, "heads": 4, "kv_heads": 2, "d_ff": 128, "vocab_size": 512,
                       "context": 256, "tied": False, "mlp": "swiglu"},
        "tiny-moe": {"d_model": 64, "layers": 2, "heads": 4, "kv_heads": 2, "head_dim": 16, "d_ff": 128, "experts": 4,
                     "experts_per_token": 2, "expert_d_ff": 32, "vocab_size": 512, "context": 256, "tied": False,
                     "mlp": "swiglu", "qk_norm": True}}


def hf_config(name: str, p: dict):
    """The transformers config of a tokstat preset (the architecture family from its fields)."""
    import transformers as tf

    common = dict(vocab_size=p["vocab_size"], hidden_size=p["d_model"], num_hidden_layers=p["layers"],
                  num_attention_heads=p["heads"], num_key_value_heads=p["kv_heads"],
                  max_position_embeddings=p["context"], tie_word_embeddings=bool(p.get("tied", False)))
    if p.get("experts"):
        if p.get("qk_norm") or p.get("head_dim"):          # Qwen3-MoE: qk-norm, head_dim 128
            return tf.Qwen3MoeConfig(**common, head_dim=p.get("head_dim") or p["d_model"] // p["heads"],
                                     intermediate_size=p["d_ff"], moe_intermediate_size=p["expert_d_ff"],
                                     num_experts=p["experts"], num_experts_per_tok=p["experts_per_token"],
                                     decoder_sparse_step=1, mlp_only_layers=[])
        return tf.MixtralConfig(**common, intermediate_size=p["expert_d_ff"], num_local_experts=p["experts"],
                                num_experts_per_tok=p["experts_per_token"])
    if p.get("qkv_bias"):                                   # Qwen2 / Qwen2.5
        return tf.Qwen2Config(**common, intermediate_size=p["d_ff"])
    if p.get("sliding_window"):
        return tf.MistralConfig(**common, intermediate_size=p["d_ff"], sliding_window=p["sliding_window"])
    return tf.LlamaConfig(**common, intermediate_size=p["d_ff"],
                          head_dim=p.get("head_dim") or p["d_model"] // p["heads"])


class Timer:
    """Wall time of a block on ``device`` (CUDA events on a GPU, perf_counter elsewhere)."""

    def __init__(self, torch, device: str):
        self.torch, self.cuda = torch, device.startswith("cuda")

    def __call__(self, fn, warmup: int, repeats: int) -> list[float]:
        for _ in range(warmup):
            fn()
        self.sync()
        out = []
        for _ in range(repeats):
            if self.cuda:
                a, b = self.torch.cuda.Event(enable_timing=True), self.torch.cuda.Event(enable_timing=True)
                a.record()
                fn()
                b.record()
                b.synchronize()
                out.append(a.elapsed_time(b) / 1000)
            else:
                t = time.perf_counter()
                fn()
                out.append(time.perf_counter() - t)
        return out

    def sync(self):
        if self.cuda:
            self.torch.cuda.synchronize()


def _cache_bytes(cache) -> int:
    """Bytes of every key and value tensor of a transformers cache (DynamicCache of any version)."""
    import torch

    seen, total = set(), 0

    def add(t):
        nonlocal total
        if isinstance(t, torch.Tensor) and id(t) not in seen:
            seen.add(id(t))
            total += t.numel() * t.element_size()

    layers = getattr(cache, "layers", None)
    if layers is not None:                               # transformers >= 4.56: cache.layers[i].keys/values
        for layer in layers:
            add(getattr(layer, "keys", None))
            add(getattr(layer, "values", None))
    else:
        for k in ("key_cache", "value_cache"):
            for t in getattr(cache, k, []) or []:
                add(t)
        if not seen:
            for pair in cache:
                for t in pair:
                    add(t)
    return total


def _cache_api(model) -> tuple[str, str]:
    """The keyword a forward pass takes its cache by and the output field that returns it:
    ``cache`` in transformers >= 5.2x, ``past_key_values`` before."""
    import inspect

    new = "cache" in inspect.signature(model.forward).parameters
    return ("cache", "cache") if new else ("past_key_values", "past_key_values")


def _checkpointing(model, on: bool) -> None:
    """Activation checkpointing on or off (``activation_checkpointing_*`` in new transformers)."""
    name = ("activation_checkpointing_" if hasattr(model, "activation_checkpointing_enable")
            else "gradient_checkpointing_") + ("enable" if on else "disable")
    getattr(model, name)()


def _peak(torch, device):
    return torch.cuda.max_memory_allocated() if device.startswith("cuda") else None


def _reset_peak(torch, device):
    if device.startswith("cuda"):
        torch.cuda.synchronize()
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()


def measure(name: str, p: dict, *, device: str, dtype: str, repeats: int, warmup: int, prefill, decode_batches,
            decode_prompt: int, decode_steps: int, train_seq: int | None) -> dict:
    import torch
    from transformers import AutoModelForCausalLM

    td = {"bf16": torch.bfloat16, "fp32": torch.float32}[dtype]
    timer = Timer(torch, device)
    cfg = hf_config(name, p)
    cfg._attn_implementation = "sdpa"
    _reset_peak(torch, device)
    t0 = time.perf_counter()
    with torch.device(device):
        model = AutoModelForCausalLM.from_config(cfg, dtype=td)
    model.eval()
    kw, field = _cache_api(model)
    out = {"preset": name, "config_class": type(cfg).__name__, "shape": p, "dtype": dtype,
           "build_s": time.perf_counter() - t0,
           "parameters": sum(x.numel() for x in model.parameters()),
           "weight_bytes": sum(x.numel() * x.element_size() for x in model.parameters()),
           "peak_bytes_after_build": _peak(torch, device)}
    vocab = p["vocab_size"]
    gen = torch.Generator(device="cpu").manual_seed(0)

    def ids(b, s):
        return torch.randint(0, vocab, (b, s), generator=gen).to(device)

    # KV cache bytes per token, read from the real cache tensors
    with torch.no_grad():
        x = ids(1, decode_prompt)
        o = model(input_ids=x, use_cache=True)
        kv = _cache_bytes(getattr(o, field))
    out["kv_cache_bytes_per_token"] = kv / decode_prompt
    del o
    # prefill latency
    out["prefill"] = []
    for b, s in prefill:
        x = ids(b, s)
        _reset_peak(torch, device)
        with torch.no_grad():
            rep = timer(lambda: model(input_ids=x, use_cache=False), warmup, repeats)
        out["prefill"].append({"batch": b, "seq": s, "seconds": statistics.median(rep), "repeats": rep,
                               "peak_bytes": _peak(torch, device)})
    # decode latency per token with a warm cache of decode_prompt tokens
    out["decode"] = []
    for b in decode_batches:
        _reset_peak(torch, device)
        with torch.no_grad():
            pre = model(input_ids=ids(b, decode_prompt), use_cache=True)
            nxt = ids(b, 1)
            state = {"cache": getattr(pre, field)}

            def step():
                # each step appends one token to the cache: the context grows by one per repeat
                # (20 steps on 1,024 tokens: within 2 %)
                r = model(input_ids=nxt, use_cache=True, **{kw: state["cache"]})
                state["cache"] = getattr(r, field)

            rep = timer(step, warmup, max(repeats, decode_steps))
        out["decode"].append({"batch": b, "context": decode_prompt, "seconds_per_token": statistics.median(rep),
                              "repeats": rep, "peak_bytes": _peak(torch, device)})
    # one training step (forward + backward), activation checkpointing off and on
    out["train"] = []
    if train_seq:
        model.train()
        for ckpt in (False, True):
            _checkpointing(model, ckpt)
            x = ids(1, train_seq)
            _reset_peak(torch, device)

            def train_step():
                loss = model(input_ids=x, labels=x, use_cache=False).loss
                loss.backward()
                model.zero_grad(set_to_none=True)

            try:
                rep = timer(train_step, max(1, warmup // 2), max(2, repeats // 2))
                out["train"].append({"micro_batch": 1, "seq": train_seq, "checkpointing": ckpt,
                                     "seconds": statistics.median(rep), "repeats": rep, "tokens": train_seq,
                                     "peak_bytes": _peak(torch, device)})
            except torch.OutOfMemoryError as e:
                out["train"].append({"micro_batch": 1, "seq": train_seq, "checkpointing": ckpt, "error": str(e)[:200]})
                model.zero_grad(set_to_none=True)
    return out


def environment(torch, device: str) -> dict:
    import transformers

    env = {"python": platform.python_version(), "torch": torch.__version__, "transformers": transformers.__version__,
           "cuda": torch.version.cuda, "device": device, "date": time.strftime("%Y-%m-%d")}
    if device.startswith("cuda"):
        prop = torch.cuda.get_device_properties(0)
        env.update(gpu=prop.name, gpu_memory_bytes=prop.total_memory, sm_count=prop.multi_processor_count)
        try:
            import subprocess

            q = "clocks.sm,clocks.max.sm,clocks.mem,power.limit,driver_version"
            r = subprocess.run(["nvidia-smi", f"--query-gpu={q}", "--format=csv,noheader"], capture_output=True, text=True,
                               timeout=10)
            env["nvidia_smi"] = dict(zip(q.split(","), [x.strip() for x in r.stdout.strip().split(",")]))
        except (OSError, ValueError):
            env["nvidia_smi"] = None
    else:
        env["gpu"] = None
    return env


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--presets", default=",".join(DEFAULT), help="comma-separated preset names")
    ap.add_argument("--out", required=True, help="JSON file to write")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--tiny", action="store_true", help="the CPU self-test: tiny shapes, short sequences")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=2)
    args = ap.parse_args(argv)
    import torch

    torch.manual_seed(0)
    if args.tiny:
        presets = TINY
        plan = dict(prefill=[(1, 32), (2, 64)], decode_batches=[1, 2], decode_prompt=32, decode_steps=3, train_seq=64)
        dtype = "fp32" if args.device == "cpu" else "bf16"
    else:
        all_presets = tomllib.loads(PRESETS.read_text(encoding="utf-8"))
        presets = {n: all_presets[n] for n in args.presets.split(",")}
        plan = dict(prefill=PREFILL, decode_batches=DECODE_BATCHES, decode_prompt=DECODE_PROMPT, decode_steps=20,
                    train_seq=TRAIN_SEQ)
        dtype = "bf16"
    result = {"environment": environment(torch, args.device), "plan": {k: v for k, v in plan.items()},
              "measurements": []}
    for name, p in presets.items():
        t = time.perf_counter()
        m = measure(name, p, device=args.device, dtype=dtype, repeats=args.repeats, warmup=args.warmup,
                    **{**plan, "train_seq": plan["train_seq"] if (args.tiny or name in TRAIN) else None})
        m["wall_s"] = time.perf_counter() - t
        gc.collect()                       # the model of this preset is gone: free its memory
        if args.device.startswith("cuda"):
            torch.cuda.empty_cache()
        result["measurements"].append(m)
        print(f"{name}: {m['wall_s']:.0f} s", file=sys.stderr, flush=True)
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")   # after each preset
    return 0


if __name__ == "__main__":
    sys.exit(main())
