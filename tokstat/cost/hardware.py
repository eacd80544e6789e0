"""The accelerator catalogue (``hardware.toml``): dense peak throughput, memory, bandwidth, price."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from importlib import resources

from ..errors import TokstatError


@dataclass(frozen=True)
class GPU:
    name: str
    bf16_tflops: float          # dense BF16/FP16 tensor peak
    memory_gb: float
    bandwidth_gb_s: float
    interconnect_gb_s: float
    price_usd_h: float
    source: str
    fp8_tflops: float | None = None
    int8_tops: float | None = None
    precision_note: str = ""
    link: str = "nvlink"

    @property
    def link_gb_s_per_direction(self) -> float:
        """What a ring all-reduce sends at each way: half the bidirectional total the vendors quote."""
        return self.interconnect_gb_s / 2

    @property
    def hop_latency_s(self) -> float:
        """Per-step latency of a ring collective (NCCL's tuning model, ring LL protocol: NVLink 0.6 µs,
        PCIe 1.0 µs per hop)."""
        return (1.0 if self.link == "pcie" else 0.6) * 1e-6


def catalogue() -> dict[str, GPU]:
    data = tomllib.loads(resources.files("tokstat.cost").joinpath("hardware.toml").read_text(encoding="utf-8"))
    return {k: GPU(name=k, **v) for k, v in data.items()}


def gpu(name: str) -> GPU:
    cat = catalogue()
    if name not in cat:
        raise TokstatError(f"unknown accelerator {name!r}", fix=f"use one of {', '.join(cat)}")
    return cat[name]


#: fixed cost of launching one ring collective (NCCL's tuning model, ring LL base latency)
RING_BASE_LATENCY_S = 6.6e-6


def ring_allreduce_seconds(nbytes: float, n: int, g: GPU) -> float:
    """One ring all-reduce of ``nbytes`` over ``n`` devices of ``g``: 2·(n−1) steps, each sending
    nbytes/n one way (Patarasuk & Yuan 2009), at :attr:`GPU.link_gb_s_per_direction`, plus NCCL's
    latency model: a base latency and a per-step hop latency.

    >>> a100 = gpu("a100-80gb-sxm")
    >>> round(ring_allreduce_seconds(1e9, 8, a100) * 1e3, 3)     # 1 GB over 8 GPUs at 300 GB/s each way
    5.848
    >>> ring_allreduce_seconds(1e9, 1, a100)
    0.0
    """
    if n <= 1:
        return 0.0
    return (RING_BASE_LATENCY_S + 2 * (n - 1) * g.hop_latency_s
            + 2 * (n - 1) / n * nbytes / (g.link_gb_s_per_direction * 1e9))


def check_mfu(mfu: float) -> None:
    """MFU (model FLOPs utilisation) must lie in (0, 1]; NaN does not."""
    if not 0 < mfu <= 1:
        raise TokstatError(f"MFU must be in (0, 1], got {mfu}", fix="typical values are 0.3-0.5")


def check_goodput(goodput: float) -> None:
    """Goodput (the share of paid GPU-hours that train) must lie in (0, 1]; NaN does not."""
    if not 0 < goodput <= 1:
        raise TokstatError(f"goodput must be in (0, 1], got {goodput}", fix="e.g. --goodput 0.9 (1 with a calibrated MFU)")


def peak_tflops(g: GPU, precision: str = "bf16") -> float:
    """Dense peak at the training precision: BF16/FP16, or FP8 where the accelerator has it."""
    if precision == "bf16":
        return g.bf16_tflops
    if precision == "fp8":
        if not g.fp8_tflops:
            raise TokstatError(f"{g.name} has no FP8 tensor cores", fix="use --train-precision bf16 or an FP8 GPU (H100, H200, B200, ...)")
        return g.fp8_tflops
    raise TokstatError(f"unknown training precision {precision!r}", fix="use bf16 or fp8")


def gpu_hours(flops: float, g: GPU, mfu: float, precision: str = "bf16", goodput: float = 1.0) -> float:
    """GPU-hours = FLOPs / (dense peak · MFU · goodput · 3600). MFU (model FLOPs utilisation,
    Chowdhery et al. 2022) and goodput (the share of paid hours that train) must lie in (0, 1]."""
    check_mfu(mfu)
    check_goodput(goodput)
    return flops / (peak_tflops(g, precision) * 1e12 * mfu * goodput * 3600)
