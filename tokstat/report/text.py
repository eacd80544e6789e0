"""The report's answers as text a lead pastes into a decision document: Markdown (``--format md``)
or JSON (``--format json``) — each answer's question, its first-screen sentence, its details, its
numbers (intervals included) and the id of its evidence in the HTML page; the tokenizer answer also
as data (each question's winner, runner-up and paired interval:
:meth:`tokstat.cost.choice.Decision.record`).

>>> from tokstat.markup import Markup
>>> plain(Markup("<b>o200k</b>: 0.41 &lt; 0.42"))
'o200k: 0.41 < 0.42'
"""

from __future__ import annotations

import datetime as _dt
import html
import json
import os
import re

from .answers import Answer

__all__ = ["plain", "context", "answers_md", "answers_json"]


def plain(m) -> str:
    """Markup as the words a reader sees: tags dropped, entities decoded, spaces collapsed."""
    m = re.sub(r"<li>", " • ", str(m))
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", m)).split()).replace(" .", ".").replace(" ,", ",") \
        .replace("( ", "(").replace(" )", ")").replace(" :", ":").replace(" ;", ";")


def today() -> str:
    """The report's date: ``$SOURCE_DATE_EPOCH`` when set (reproducible builds), else today (UTC)."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    when = (_dt.datetime.fromtimestamp(int(epoch), _dt.timezone.utc) if epoch and epoch.isdigit()
            else _dt.datetime.now(_dt.timezone.utc))
    return when.date().isoformat()


def context(tables: dict, extras: dict) -> dict[str, str]:
    """What the answers are about: the corpus (or corpora), the mix, the model, the date."""
    from .read import corpus_of

    corpora = []
    for df in tables.values():
        if hasattr(df, "columns") and "signature" in df.columns:
            corpora += [c for c in map(corpus_of, df["signature"].drop_nulls().to_list()) if c]
    from ..cost.choice import mix_of_costs

    mix = extras.get("mix") or mix_of_costs(tables.get("cost"))
    out = {"corpus": ", ".join(dict.fromkeys(corpora)) or "?",
           "mix": mix.describe() if mix is not None else "equal content of every language"}
    if tables.get("cost") is not None or tables.get("sweep") is not None or extras.get("plan") is not None:
        out["model"] = str(extras.get("model") or "?")
    out["date"] = today()
    return out


def _section(a: Answer) -> str | None:
    m = re.match(r"(s\d+)-", a.evidence)
    return m.group(1) if m else None


def answers_md(answers: list[Answer], title: str, extras: dict, tables: dict) -> str:
    """The answers as Markdown: a heading naming corpus, mix, model and date, then per answer its
    question, the first-screen sentence in bold, the details and the numbers."""
    ctx = context(tables, extras)
    lines = [f"# {title}", "", " · ".join(f"{k}: {v}" for k, v in ctx.items()), ""]
    for a in answers:
        sec = _section(a)
        lines += [f"## {plain(a.question)}{f' ({sec})' if sec else ''}", "", f"**{plain(a.lead or a.html)}**", ""]
        if a.lead is not None:
            lines += [plain(a.html), ""]
        if a.numbers:
            lines += ["| number | value |", "|---|---|"]
            lines += [f"| {k} | {_num(v)} |" for k, v in a.numbers.items()]
            lines.append("")
        lines += [f"Evidence: the HTML report's section `#{a.evidence}`.", ""]
    return "\n".join(lines).rstrip() + "\n"


def answers_json(answers: list[Answer], title: str, extras: dict, tables: dict) -> str:
    """The answers as one JSON object: ``title``, ``context`` and ``answers`` (``key``, ``question``,
    ``lead``, ``details``, ``numbers``, ``evidence``, ``section`` and, for the tokenizer,
    ``decision``)."""
    out = {"title": title, "context": context(tables, extras), "answers": []}
    for a in answers:
        rec = {"key": a.key, "question": plain(a.question), "lead": plain(a.lead or a.html), "details": plain(a.html),
               "numbers": {k: _json_num(v) for k, v in a.numbers.items()}, "evidence": a.evidence,
               "section": _section(a)}
        if a.record is not None:
            rec["decision"] = a.record
        out["answers"].append(rec)
    return json.dumps(out, indent=1, ensure_ascii=False, allow_nan=False, default=str) + "\n"


def _num(v) -> str:
    if isinstance(v, float):
        return f"{v:.6g}"
    return str(v)


def _json_num(v):
    import math

    return None if isinstance(v, float) and not math.isfinite(v) else v
