"""Writes tokstat/data/unsettled.json: per normalisation form, the RE2 pattern that finds every
text ``unicodedata.normalize`` would change (tokstat.corpus.unsettled), for this Python's Unicode
version. tests/test_normalization_prefilter.py checks the file against the derivation.

    python analysis/make_unsettled_table.py
"""

from __future__ import annotations

import json
import sys
import unicodedata
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tokstat.corpus import derive_unsettled  # noqa: E402
from tokstat.io import write_bytes  # noqa: E402

if __name__ == "__main__":
    table = {"unidata_version": unicodedata.unidata_version,
             **{f.lower(): derive_unsettled(f) for f in ("NFC", "NFKC")}}
    out = ROOT / "tokstat" / "data" / "unsettled.json"
    out.unlink(missing_ok=True)
    write_bytes(out, (json.dumps(table, separators=(",", ":")) + "\n").encode("utf-8"))
    print(f"wrote {out}: NFC {len(table['nfc']):,} and NFKC {len(table['nfkc']):,} characters of pattern "
          f"(Unicode {table['unidata_version']})")
