"""Tokenizer spec strings -> adapters (a registry of constructors, as in tiktoken).

``tiktoken:cl100k_base``, ``tiktoken:PATH?pattern=llama3``, ``hf:PATH/tokenizer.json``, ``hf:ORG/NAME``,
``wordpiece:PATH/vocab.txt?lowercase=true``, ``spm:PATH.model``, ``ids:TABLE?vocab=PATH`` (token ids
produced elsewhere, :mod:`tokstat.adapters.pretokenized`). Any spec may pin its files with
``?sha256=HEX`` (see :mod:`tokstat.integrity`). ``train:ALGO:SIZE`` specs need a corpus: the job layer
(:func:`tokstat.compare.resolve_tokenizers`) trains them; this registry only loads files.
"""

from __future__ import annotations

from collections.abc import Callable

from ..errors import TokstatError
from ..integrity import check_pin
from .base import Adapter, Encoded
from .hf import load_hf, load_wordpiece
from .pretokenized import load_ids
from .spm import load_spm
from .tiktoken_ import load_tiktoken

__all__ = ["Adapter", "Encoded", "load_tokenizer", "parse_spec", "CONSTRUCTORS"]

CONSTRUCTORS: dict[str, Callable[[str, dict[str, str]], Adapter]] = {
    "tiktoken": load_tiktoken,
    "hf": load_hf,
    "wordpiece": load_wordpiece,
    "spm": load_spm,
    "ids": load_ids,
}
#: the ``?key=value`` options each kind reads; any other is an error, never silently ignored
OPTIONS = {"tiktoken": {"pattern", "sha256"}, "hf": {"revision", "sha256"}, "wordpiece": {"lowercase", "sha256"},
           "spm": {"sha256"}, "ids": {"vocab", "spelling", "sha256"}}
FORMS = "tiktoken:NAME|PATH, hf:PATH/tokenizer.json|ORG/NAME, wordpiece:PATH/vocab.txt, spm:PATH.model, ids:TABLE?vocab=PATH, train:ALGO:SIZE"


def parse_spec(spec: str) -> tuple[str, str, dict[str, str]]:
    """``"wordpiece:v.txt?lowercase=true"`` -> ``("wordpiece", "v.txt", {"lowercase": "true"})``."""
    kind, sep, rest = spec.partition(":")
    if not sep or not rest:
        raise TokstatError(f"tokenizer spec {spec!r} has no kind", fix=f"write one of: {FORMS}")
    target, _, query = rest.partition("?")
    opts = {}
    for kv in filter(None, query.split("&")):
        k, eq, v = kv.partition("=")
        if not eq:
            raise TokstatError(f"option {kv!r} in {spec!r} is not key=value", fix="write ?key=value&key=value")
        if k in opts:
            raise TokstatError(f"option {k!r} given twice in {spec!r}", fix="give each option once")
        opts[k] = v
    return kind, target, opts


def locate(kind: str, target: str) -> str:
    """A relative tokenizer path that is not in the current folder is looked for in the folders of
    ``$TOKSTAT_TOKENIZERS``, then ``./tokenizers`` (where registry files are looked for too):
    ``spm:llama2/tokenizer.model`` finds ``$TOKSTAT_TOKENIZERS/llama2/tokenizer.model``. Registry
    names (``tiktoken:cl100k_base``) and anything found here are left as they are."""
    import os
    from pathlib import Path

    from .tiktoken_ import search_dirs

    p = Path(target)
    if p.is_absolute() or os.path.lexists(p) or (kind == "tiktoken" and not (p.suffix or "/" in target)):
        return target
    for d in search_dirs():
        if os.path.lexists(d / p):
            return str(d / p)
    return target


def _check_found(kind: str, given: str, target: str) -> None:
    """A relative tokenizer file found nowhere :func:`locate` looks: one error naming every folder
    looked in and ``$TOKSTAT_TOKENIZERS`` (hub ids and registry names are not files)."""
    import os
    from pathlib import Path

    from .tiktoken_ import search_dirs

    p = Path(given)
    is_file = p.suffix in (".json", ".model", ".txt", ".tiktoken", ".vocab", ".parquet", ".csv", ".jsonl") or \
        kind in ("spm", "wordpiece")
    if p.is_absolute() or os.path.lexists(target) or not is_file:
        return
    dirs = [str(d) if d.is_absolute() else f"./{d}" for d in search_dirs()]
    env = os.environ.get("TOKSTAT_TOKENIZERS")
    what = {"wordpiece": "vocabulary file", "spm": "SentencePiece model"}.get(kind, "tokenizer file")
    raise TokstatError(f"{what} not found in this folder" + (f" nor in {', '.join(dirs)}" if dirs else ""), path=given,
                       fix=("check the path, or set TOKSTAT_TOKENIZERS to the folder that holds it "
                            f"(now {'unset' if not env else repr(env)})"))


def load_tokenizer(spec: str | Adapter) -> Adapter:
    """Build the adapter for ``spec`` (an :class:`Adapter` is returned as it is)."""
    if isinstance(spec, Adapter):
        return spec
    kind, target, opts = parse_spec(spec)
    if kind == "train":
        raise TokstatError(f"{spec!r} is trained on a corpus, not loaded from a file",
                           fix="pass it to tokstat.compare(corpus, [...]) or train it with tokstat.train()")
    if kind not in CONSTRUCTORS:
        raise TokstatError(f"unknown tokenizer kind {kind!r} in {spec!r}", fix=f"write one of: {FORMS}")
    unknown = sorted(set(opts) - OPTIONS[kind])
    if unknown:
        raise TokstatError(f"{kind}: specs take no option {', '.join(unknown)} ({spec!r})",
                           fix=f"{kind}: specs take " + ", ".join(f"?{o}=" for o in sorted(OPTIONS[kind])))
    if kind == "tiktoken" and "pattern" in opts and not (target.endswith((".tiktoken", ".json")) or "/" in target
                                                         or "." in target):
        raise TokstatError(f"?pattern= is for ranks files; the encoding {target!r} has its own split pattern",
                           fix=f"drop ?pattern=, or pass a ranks file: tiktoken:PATH/{target}.tiktoken?pattern=NAME")
    given, target = target, locate(kind, target)
    _check_found(kind, given, target)
    adapter = CONSTRUCTORS[kind](target, opts)
    check_pin(spec, adapter.file_hash, opts.get("sha256"), path=target)
    return adapter
