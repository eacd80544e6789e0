"""Shard-parallel counting: segments -> per-shard :class:`~tokstat.counts.LangStats` -> one exact merge.

``job`` (the job model and the counting of one batch), ``local`` (this process or forked worker
processes), ``ray`` (Ray actors). Every engine and worker count gives identical results.
"""

from .job import Columns, Job, Stats, batches, count_segments, count_stream, merge
from .local import run_local
from .ray import run_ray

__all__ = ["Columns", "Job", "Stats", "batches", "count_segments", "count_stream", "merge", "run_local", "run_ray"]
