"""tiktoken encodings: registry names (offline from ``TIKTOKEN_CACHE_DIR``), ranks files, tekken JSON."""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import os
from concurrent.futures import ThreadPoolExecutor
from itertools import chain
from pathlib import Path

import numpy as np
import tiktoken

from ..errors import TokstatError
from ..integrity import check_published
from ..io import read_input
from .base import Adapter, flatten, native_errors, spans_from_lengths

#: split patterns by name, for ranks files that do not carry one
PATTERNS = {
    "r50k_base": r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s""",
    "cl100k_base": r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s""",
    "o200k_base": "|".join([
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""", r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""", r"""\s*[\r\n]+""", r"""\s+(?!\S)""", r"""\s+"""]),
    "llama3": r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+",
}
PATTERNS["p50k_base"] = PATTERNS["gpt2"] = PATTERNS["r50k_base"]
PATTERNS["llama4"] = PATTERNS["o200k_base"]


class TiktokenAdapter(Adapter):
    family = "tiktoken"
    algorithm = "byte-level BPE"
    ranks_bytes: bytes | None = None   # the ranks as a ``.tiktoken`` file, where tokstat read or hashed one

    def __init__(self, enc: tiktoken.Encoding, ident: str, file_hash: str, id_offset: int = 0,
                 n_regular: int | None = None):
        self.enc, self.id, self.file_hash, self.id_offset = enc, ident, file_hash, id_offset
        self.library_version = f"tiktoken-{tiktoken.__version__}"
        n = enc.max_token_value + 1
        lens = np.zeros(n, dtype=np.int64)     # specials and holes in the id space stay 0
        ranks = enc._mergeable_ranks
        lens[np.fromiter(ranks.values(), dtype=np.int64, count=len(ranks))] = np.fromiter(
            map(len, ranks), dtype=np.int64, count=len(ranks))
        specials = set(enc._special_tokens.values())
        self._lens = lens
        self.vocab_size = n_regular or enc.n_vocab - len(specials)
        self.n_ids = n + id_offset
        self.byte_fallback = np.zeros(self.n_ids, dtype=bool)

    def decode(self, ids: list[int]) -> str:
        return self.enc.decode([i - self.id_offset for i in ids])

    def token_counts(self, texts: list[str], nbytes: np.ndarray | None = None) -> np.ndarray:
        """Tokens per text from tiktoken's own calls, lengths only (no ids kept, no spans)."""
        core = self.enc._core_bpe.encode_ordinary
        n = self.threads or min(8, os.cpu_count() or 1)
        with native_errors(self.id):
            if n == 1 or len(texts) < 64:
                return np.fromiter((len(core(t)) for t in texts), dtype=np.int64, count=len(texts))
            step = -(-len(texts) // n)
            with ThreadPoolExecutor(n) as ex:
                parts = list(ex.map(lambda i: [len(core(t)) for t in texts[i:i + step]], range(0, len(texts), step)))
        return np.fromiter(chain.from_iterable(parts), dtype=np.int64, count=len(texts))

    def _encode(self, texts):
        core = self.enc._core_bpe.encode_ordinary    # releases the GIL
        n = self.threads or min(8, os.cpu_count() or 1)
        if n > 1 and 1 < len(texts) < 64 and sum(map(len, texts)) > 1_000_000:
            with ThreadPoolExecutor(n) as ex:         # a few long texts (--join): one per thread
                out = list(ex.map(core, texts))
        elif n == 1 or len(texts) < 64:
            out = [core(t) for t in texts]
        else:                                        # one chunk per thread, not one future per text
            step = -(-len(texts) // n)
            with ThreadPoolExecutor(n) as ex:
                out = list(chain.from_iterable(ex.map(lambda i: [core(t) for t in texts[i:i + step]],
                                                      range(0, len(texts), step))))
        ids, counts = flatten(out)
        lens = self._lens[ids]
        starts, ends = spans_from_lengths(lens, counts)
        return ids + self.id_offset, counts, starts, ends


def search_dirs() -> list[Path]:
    """Where a missing registry file is looked for: the folders of ``$TOKSTAT_TOKENIZERS``
    (``os.pathsep``-separated), then ``./tokenizers`` (each may hold ``NAME.tiktoken`` or ``NAME/NAME.tiktoken``)."""
    dirs = [Path(d) for d in os.environ.get("TOKSTAT_TOKENIZERS", "").split(os.pathsep) if d]
    return dirs + [Path("tokenizers")]


def seed_cache(name: str) -> bool:
    """Copy the local files of registry encoding ``name`` into tiktoken's cache under the names
    tiktoken looks for (sha1 of each blob URL), atomically: ``NAME.tiktoken``, or for ``gpt2`` its
    ``vocab.bpe`` and ``encoder.json``, found as ``DIR/FILE`` or ``DIR/NAME/FILE`` in
    :func:`search_dirs`. tiktoken then checks each file's published sha256 as on a download."""
    import inspect
    import re
    import tempfile

    import tiktoken_ext.openai_public as op

    ctor = op.ENCODING_CONSTRUCTORS.get(name)
    if ctor is None:
        return False
    urls = re.findall(r'"(https://[^"]+)"', inspect.getsource(ctor))
    if not urls:
        return False
    found = {}
    for url in urls:
        base = url.rsplit("/", 1)[1]
        hit = next((c for d in search_dirs() for c in (d / base, d / name / base) if c.is_file()), None)
        if hit is None:
            return False
        found[url] = hit
    cache = Path(os.environ.get("TIKTOKEN_CACHE_DIR") or os.environ.get("DATA_GYM_CACHE_DIR")
                 or Path(tempfile.gettempdir()) / "data-gym-cache")
    from ..io import write_bytes

    published = set(re.findall(r'"([0-9a-f]{64})"', inspect.getsource(ctor)))
    try:
        cache.mkdir(parents=True, exist_ok=True)   # tiktoken's own cache folder (it creates it too)
    except OSError as e:
        raise TokstatError(f"cannot create tiktoken's cache folder: {e.strerror or e}", path=cache,
                           fix="set TIKTOKEN_CACHE_DIR to a folder you can write to") from None
    for url, path in found.items():
        data = read_input(path, "tokenizer file")
        if path.suffix == ".tiktoken":
            check_published(path, hashlib.sha256(data).hexdigest())
        if path.suffix == ".json" and hashlib.sha256(data).hexdigest() not in published:
            # a re-formatted copy of the same JSON (tiktoken-rs ships encoder.json pretty-printed):
            # tiktoken's published bytes are json.dumps of its content; tiktoken checks the hash
            try:
                canonical = json.dumps(json.loads(data)).encode()
            except ValueError:
                canonical = data
            if hashlib.sha256(canonical).hexdigest() in published:
                data = canonical
        write_bytes(cache / hashlib.sha1(url.encode()).hexdigest(), data)
    return True


def _registry(name: str) -> TiktokenAdapter:
    try:
        try:
            enc = tiktoken.get_encoding(name)
        except ValueError:
            raise
        except Exception:
            if not seed_cache(name):
                raise
            enc = tiktoken.get_encoding(name)
    except ValueError:
        raise TokstatError(f"unknown tiktoken encoding {name!r}",
                           fix=f"use one of {', '.join(tiktoken.list_encoding_names())} or tiktoken:PATH") from None
    except Exception as e:
        raise TokstatError(f"cannot load tiktoken encoding {name!r}: {str(e).splitlines()[0][:200]}",
                           fix="put NAME.tiktoken in a folder named by $TOKSTAT_TOKENIZERS (or ./tokenizers), "
                               "or pass tiktoken:PATH/NAME.tiktoken?pattern=" + name) from None
    ranks = enc._mergeable_ranks
    body = ranks_file(ranks)
    a = TiktokenAdapter(enc, f"tiktoken/{name}", hashlib.sha256(body).hexdigest(), n_regular=len(ranks))
    a.ranks_bytes = body
    return a


def ranks_file(ranks: dict[bytes, int]) -> bytes:
    """``ranks`` as a ``.tiktoken`` file in rank order (what the registry's encodings are hashed as,
    and what the fast path hands its library).

    >>> ranks_file({b"b": 1, b"a": 0})
    b'YQ== 0\\nYg== 1\\n'
    """
    b64 = binascii.b2a_base64
    return b"".join([b64(k, newline=False) + b" %d\n" % v for k, v in sorted(ranks.items(), key=lambda kv: kv[1])])


def _encoding(path: Path, pattern: str, ranks: dict[bytes, int]) -> tiktoken.Encoding:
    """A tiktoken Encoding, checked first for what would make its Rust core panic later: duplicate
    ranks, and missing single-byte tokens (byte-level BPE needs all 256 to encode any text)."""
    if len(set(ranks.values())) != len(ranks):
        seen: dict[int, bytes] = {}
        dup = next(r for t, r in ranks.items() if r in seen or seen.setdefault(r, t) is not t)
        raise TokstatError(f"rank {dup} is given to two tokens", path=path, fix="pass an unmodified ranks file")
    missing = [b for b in range(256) if bytes([b]) not in ranks]
    if missing:
        raise TokstatError(f"{len(missing)} of the 256 single-byte tokens are missing (e.g. 0x{missing[0]:02x}): "
                           "it cannot encode every text", path=path, fix="pass a complete byte-level BPE ranks file")
    import regex

    try:
        regex.compile(pattern)
    except regex.error as e:
        raise TokstatError(f"the split pattern is not a valid regex ({e})", path=path,
                           fix=f"use ?pattern=NAME with NAME in {', '.join(PATTERNS)}, or a valid regex") from None
    try:
        return tiktoken.Encoding(path.stem, pat_str=pattern, mergeable_ranks=ranks, special_tokens={})
    except BaseException as e:  # noqa: BLE001 - pyo3's PanicException derives from BaseException
        if isinstance(e, (KeyboardInterrupt, SystemExit)):
            raise
        raise TokstatError(f"tiktoken refuses the file ({type(e).__name__}: {str(e).splitlines()[0][:120]})",
                           path=path, fix="pass an unmodified ranks file and a valid ?pattern=") from None


def parse_ranks(data: bytes) -> dict[bytes, int]:
    """A ``.tiktoken`` ranks file, parsed as tiktoken's ``load_tiktoken_bpe`` does: one
    ``BASE64TOKEN RANK`` per non-empty line. Parsed from bytes tokstat read and hashed itself, never
    through tiktoken's file cache (keyed by the path string, it would serve a changed file's old ranks).

    >>> parse_ranks(b"YQ== 0\\nYg== 1\\n\\nYWI= 2\\n")
    {b'a': 0, b'b': 1, b'ab': 2}
    """
    return {base64.b64decode(token): int(rank)
            for token, rank in (line.split() for line in data.splitlines() if line)}


def _from_file(path: Path, pattern: str | None) -> TiktokenAdapter:
    data = read_input(path, "tokenizer file")   # read once: hashed, checked and parsed from these bytes
    fh = hashlib.sha256(data).hexdigest()
    check_published(path, fh)
    if path.suffix == ".json":  # Mistral tekken: config.pattern + vocab of {rank, token_bytes}
        try:
            d = json.loads(data.decode("utf-8"))
            c = d["config"]
            n_special = c["default_num_special_tokens"]
            ranks = {base64.b64decode(t["token_bytes"]): t["rank"]
                     for t in d["vocab"][: c["default_vocab_size"] - n_special]}
            enc = _encoding(path, pattern and PATTERNS.get(pattern, pattern) or c["pattern"], ranks)
        except (KeyError, ValueError, TypeError, binascii.Error) as e:
            raise TokstatError(f"not a tekken tokenizer JSON ({str(e)[:120]})", path=path,
                               fix="pass the tekken_*.json file unchanged") from None
        return TiktokenAdapter(enc, f"tiktoken/{path.stem}", fh, id_offset=n_special, n_regular=len(ranks))
    try:
        ranks = parse_ranks(data)
    except (ValueError, binascii.Error) as e:
        raise TokstatError(f"not a tiktoken ranks file ({type(e).__name__})", path=path,
                           fix="pass a file of 'base64token rank' lines") from None
    if pattern is None:
        stem = path.stem
        pattern = stem if stem in PATTERNS else None
    if pattern is None:
        raise TokstatError("a ranks file needs its split pattern", path=path,
                           fix=f"append ?pattern=NAME with NAME in {', '.join(PATTERNS)} (or a regex)")
    enc = _encoding(path, PATTERNS.get(pattern, pattern), ranks)
    label = path.parent.name if path.stem in ("tokenizer", "model") else path.stem
    a = TiktokenAdapter(enc, f"tiktoken/{label}", fh, n_regular=len(ranks))
    if len(ranks) == sum(1 for line in data.splitlines() if line):
        a.ranks_bytes = data  # the file as read, hashed and parsed (no token listed twice): the fast path's input
    return a


def load_tiktoken(target: str, options: dict[str, str]) -> TiktokenAdapter:
    p = Path(target)
    if p.suffix or "/" in target:
        return _from_file(p, options.get("pattern"))
    return _registry(target)
