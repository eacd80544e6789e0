"""Ray execution: the same counting as Ray actors, on a local instance or a running cluster."""

from __future__ import annotations

import os
from collections.abc import Iterable

from ..corpus import Corpus, Segment
from ..errors import TokstatError
from .job import Columns, Job, Stats, batches, count_segments, count_stream, merge, text_size
from .local import _single_threaded


#: seconds a cluster address has to answer before it is declared unreachable
PROBE_SECONDS = 5.0


def probe(address: str, timeout: float = PROBE_SECONDS) -> None:
    """Check, within ``timeout`` seconds, that ``address`` (``HOST:PORT`` or ``ray://HOST:PORT``)
    answers as a Ray head does: Ray's GCS and Ray Client are gRPC servers, which answer the HTTP/2
    connection preface with a SETTINGS frame. Nothing listening, a dropped connection or a server
    that does not speak gRPC is one error in seconds (``ray.init`` itself would retry for minutes).
    ``auto`` and addresses without a port are left to Ray."""
    import socket

    hostport = address.split("://", 1)[-1]
    host, sep, port = hostport.rpartition(":")
    if address == "auto" or not sep or not port.isdigit():
        return
    host = host.strip("[]")
    fix = ("check --address (HOST:6379 for the GCS, ray://HOST:10001 for Ray Client) and that the cluster is up "
           "(ray status on the head node), or drop --address to start a local instance")
    try:
        with socket.create_connection((host, int(port)), timeout=timeout) as s:
            s.settimeout(timeout)
            s.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + b"\x00\x00\x00\x04\x00\x00\x00\x00\x00")
            head = b""
            while len(head) < 9:
                got = s.recv(9 - len(head))
                if not got:
                    break
                head += got
    except socket.timeout:
        raise TokstatError(f"the Ray cluster at {address} does not answer (nothing within {timeout:g} s)", fix=fix) from None
    except OSError as e:
        raise TokstatError(f"cannot reach the Ray cluster at {address} ({e.strerror or e})", fix=fix) from None
    if len(head) < 9 or head[3] != 0x04:
        raise TokstatError(f"{address} answers, but not as a Ray cluster (no gRPC/HTTP/2 reply)", fix=fix)


def _connect(workers: int | None, address: str | None) -> bool:
    """Join ``address`` or start a local instance with ``workers`` CPUs; True when this call started
    Ray (and must shut it down)."""
    try:
        import ray
    except ImportError:
        raise TokstatError("--engine ray needs Ray", fix="pip install 'tokstat[ray]'") from None
    started = not ray.is_initialized()
    if started and address:
        probe(address)
    if started:
        kw = {"address": address} if address else {"num_cpus": workers or os.cpu_count()}
        try:
            ray.init(include_dashboard=False, log_to_driver=False, configure_logging=False, **kw)
        except Exception as e:  # noqa: BLE001 - Ray raises ConnectionError, RuntimeError, ValueError, ...
            raise TokstatError(f"cannot start or reach Ray{f' at {address}' if address else ''} "
                               f"({type(e).__name__}: {str(e).splitlines()[0][:120] if str(e) else ''})",
                               fix="check --address (ray://HOST:10001, or auto inside a cluster), or drop it "
                                   "to start a local instance") from None
    return started


class _Kept:
    """An actor that keeps the error of its set-up and raises it from every call: Ray reports an
    error in ``__init__`` only as the actor's death, in text, so the caller would lose the error
    itself (a TokstatError with its file and fix)."""

    def keep(self, start, *args) -> None:
        try:
            start(*args)
            self.failed = None
        except Exception as e:  # noqa: BLE001 - raised again, unchanged, by check()
            self.failed = e

    def check(self) -> None:
        if self.failed is not None:
            raise self.failed


def run_scan_ray(plan, todo: list[int], *, workers: int | None = None, address: str | None = None, progress=None):
    """:func:`tokstat.engine.scan.run_scan` on Ray: each actor is given unit numbers only, opens the
    files itself (they must be on storage every node sees: the same path everywhere) and returns its
    mergeable :class:`~tokstat.engine.scan.Scan` once; the driver merges them. The plan (tokenizers
    included) is put in the object store once."""
    import ray

    from .scan import Verifier, chunks, count_units

    started = _connect(workers, address)
    actors: list = []
    try:
        n = max(1, min(workers or int(ray.cluster_resources().get("CPU", 1)), len(todo)))

        @ray.remote(num_cpus=1)
        class Scanner(_Kept):
            def __init__(self, plan):
                self.keep(self.start, plan)

            def start(self, plan):
                _single_threaded(plan)
                self.plan, self.acc = plan, plan.empty()
                self.verifier, self.cache = Verifier(plan), {}

            def add(self, units: list[int]) -> tuple[int, int]:
                self.check()
                before = self.acc.read
                docs = count_units(self.plan, units, self.acc, self.verifier, self.cache)
                return docs, self.acc.read - before

            def result(self):
                self.check()
                return self.acc

            def node(self) -> str:
                return ray.get_runtime_context().get_node_id()

        plan_ref = ray.put(plan)
        actors += [Scanner.remote(plan_ref) for _ in range(n)]
        _dispatch(ray, (actors[k % n].add.remote(chunk) for k, chunk in enumerate(chunks(todo, n))), n, progress,
                  lambda ref: _get(ray, ref))
        acc = plan.empty()
        nodes = _get(ray, [a.node.remote() for a in actors])
        for part in _results(ray, actors):
            acc.merge(part)
        acc.nodes = sorted(set(nodes))
        return acc
    finally:
        _end(ray, actors, started)


def _end(ray, actors: list, started: bool) -> None:
    """End the run's actors whatever happened (on a cluster this run did not start they would
    otherwise keep their CPUs), then the local instance this run started."""
    for a in actors:
        try:
            ray.kill(a)
        except Exception:  # noqa: BLE001 - an actor already gone
            pass
    if started:
        ray.shutdown()


def _results(ray, actors) -> list:
    """Each actor's accumulated result (in actor order)."""
    return _get(ray, [a.result.remote() for a in actors])


def _dispatch(ray, calls, n: int, progress, get) -> None:
    """Submit ``calls`` (an iterator of object refs, each returning ``(segments, bytes)`` done), at
    most ``2n`` in flight at once (the driver never holds more), advancing ``progress`` as they end;
    ``get`` fetches one result."""
    inflight: list = []
    for ref in calls:
        inflight.append(ref)
        if len(inflight) >= 2 * n:
            ready, inflight = ray.wait(inflight, num_returns=1)
            got = get(ready[0])
            if progress:
                progress.advance(*got)
    for ref in inflight:
        got = get(ref)
        if progress:
            progress.advance(*got)


def _get(ray, ref):
    """``ray.get``, with a task's own error (a TokstatError, the fast path's divergence) raised as
    itself, and an actor that died (killed, ``os._exit``, out of memory) as one error."""
    try:
        return ray.get(ref)
    except ray.exceptions.RayTaskError as e:
        cause = e.cause if hasattr(e, "cause") else None
        if cause is not None:
            raise cause from None
        raise
    except ray.exceptions.RayActorError as e:
        first = str(e).strip().splitlines()[0][:160] if str(e).strip() else type(e).__name__
        raise TokstatError(f"a Ray actor died before it sent its result ({first})",
                           fix="rerun with --engine local --workers 1 to see the error, or check the cluster's "
                               "logs (ray logs)") from None


def run_ray(job: Job, corpus: Iterable[Segment], *, workers: int | None = None, address: str | None = None,
            batch_size: int = 256, shards: list[Corpus] | None = None, progress=None) -> Stats:
    """The same counting as Ray actors: each actor accumulates the batches (or shards) it is given and
    returns its statistics once; the driver merges them. ``address``: a running cluster
    (``ray://host:10001`` or ``auto``); without it a local instance with ``workers`` CPUs is started."""
    import ray

    started = _connect(workers, address)
    actors: list = []
    try:
        n = workers or int(ray.cluster_resources().get("CPU", 1))

        @ray.remote(num_cpus=1)
        class Counter(_Kept):
            def __init__(self, job: Job):
                self.keep(self.start, job)

            def start(self, job: Job):
                _single_threaded(job)
                self.job, self.acc = job, job.empty()

            def add(self, seq: int, batch: Columns) -> tuple[int, int]:
                self.check()
                count_segments(self.job, batch, seq, into=self.acc)
                return len(batch), text_size(batch)

            def add_shard(self, seq: int, shard: Corpus) -> tuple[int, int]:
                self.check()
                self.acc = merge(self.acc, count_stream(self.job, shard, batch_size, seq0=seq << 32))
                return 0, 0

            def result(self) -> Stats:
                self.check()
                return self.acc

        job_ref = ray.put(job)
        actors += [Counter.remote(job_ref) for _ in range(n)]
        items = shards if shards else (Columns.of(b, job.langs, job.gold, job.monolingual) for b in batches(corpus, batch_size))
        _dispatch(ray, ((actors[k % n].add_shard if shards else actors[k % n].add).remote(k, payload)
                        for k, payload in enumerate(items)), n, progress, lambda ref: _get(ray, ref))
        acc = job.empty()
        for part in _results(ray, actors):
            acc = merge(acc, part)
        return acc
    finally:
        _end(ray, actors, started)
