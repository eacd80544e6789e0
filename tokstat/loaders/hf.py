"""Hugging Face ``datasets``: a ``save_to_disk`` folder, or a hub id / local data folder via ``load_dataset``.

Columns are named per language (``{"en": "sentence_eng_Latn"}``); a dotted name reaches into a
struct (``translation.zh``). FLORES+-style datasets, with one config per language, are aligned by
row with ``configs={"en": "eng_Latn", "zh": "cmn_Hans"}`` and one text column.
Never runs remote code (``trust_remote_code`` is not passed).
"""

from __future__ import annotations

from pathlib import Path

from ..corpus import Corpus, Segment, nfc
from ..errors import TokstatError


def _get(row: dict, dotted: str):
    val = row
    for part in dotted.split("."):
        if not isinstance(val, dict) or part not in val:
            return None
        val = val[part]
    return val


def _open(path: str, config: str | None, split: str):
    import datasets

    p = Path(path)
    try:
        if p.is_dir() and ((p / "dataset_info.json").exists() or (p / "state.json").exists()
                           or (p / "dataset_dict.json").exists()):
            ds = datasets.load_from_disk(str(p))
            if isinstance(ds, datasets.DatasetDict):
                if split not in ds:
                    raise TokstatError(f"split {split!r} not in {sorted(ds)}", path=p,
                                       fix="pass --split with one of these")
                ds = ds[split]
            return ds
        return datasets.load_dataset(path, config, split=split, streaming=True)
    except TokstatError:
        raise
    except Exception as e:  # network, missing dataset, bad config: one line that names the fix
        first = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise TokstatError(f"cannot load Hugging Face dataset {path!r}"
                           f"{f' config {config!r}' if config else ''}: {first}",
                           fix="check the id/config, run once with network so it is cached, "
                               "or set HF_DATASETS_OFFLINE=1 with a filled cache") from None


def load_hf(path: str, *, config: str | None = None, split: str = "train",
            columns: dict[str, str] | None = None, configs: dict[str, str] | None = None,
            text_column: str = "text", id_column: str | None = None, name: str | None = None) -> Corpus:
    """Stream rows as segments; see module docstring for ``columns`` and ``configs``."""
    if not columns and not configs:
        raise TokstatError(f"say which column holds which language for {path}",
                           fix="pass --columns en=COL,zh=COL (or a manifest with configs)")
    langs = list(configs or columns)

    def gen():
        if configs:
            streams = {lang: iter(_open(path, cfg, split)) for lang, cfg in configs.items()}
            n = 0
            while True:
                rows = {lang: next(it, None) for lang, it in streams.items()}
                if all(r is None for r in rows.values()):
                    return
                if any(r is None for r in rows.values()):
                    raise TokstatError("per-language configs have different row counts", path=path,
                                       fix="use configs from one aligned release")
                n += 1
                first = next(iter(rows.values()))
                sid = str(first.get(id_column)) if id_column else str(n)
                yield Segment(sid, {lang: nfc(str(r.get(text_column) or "")) for lang, r in rows.items()})
        else:
            for n, row in enumerate(_open(path, config, split), 1):
                sid = str(row.get(id_column)) if id_column and id_column in row else str(n)
                yield Segment(sid, {lang: nfc(str(_get(row, col) or "")) for lang, col in columns.items()})

    p = Path(path)
    sources = sorted(f for f in p.rglob("*") if f.is_file()) if p.is_dir() else []
    return Corpus(name or p.name or path, langs, gen, sources, {"loader": "hf", "path": path, "config": config,
                                                           "split": split, "columns": columns,
                                                           "configs": configs})
