"""CoNLL-U treebanks (Universal Dependencies), aligned across languages by ``sent_id``.

Gold words are the surface tokens: a multiword token (``1-2  zum``) counts as one word ``zum`` and
its syntactic words (``zu``, ``dem``) are skipped; empty nodes (``8.1``) are skipped. When a sentence
has no ``# text`` comment its text is rebuilt from the tokens, honouring ``SpaceAfter=No``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from ..corpus import Corpus, Segment
from ..errors import TokstatError
from ..io import regular_file
from ..langs import normalize_lang
from .textio import read_lines


def parse_conllu(path: Path) -> Iterator[tuple[str, str, list[str]]]:
    """Yield ``(sent_id, text, words)`` per sentence.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "x.conllu"
    >>> _ = p.write_text("# sent_id = s1\\n1-2\\tzum\\t_\\t_\\t_\\t_\\t_\\t_\\t_\\tSpaceAfter=No\\n"
    ...     "1\\tzu\\t_\\t_\\t_\\t_\\t_\\t_\\t_\\t_\\n2\\tdem\\t_\\t_\\t_\\t_\\t_\\t_\\t_\\t_\\n3\\t.\\t_\\t_\\t_\\t_\\t_\\t_\\t_\\t_\\n\\n")
    >>> list(parse_conllu(p))
    [('s1', 'zum.', ['zum', '.'])]
    """
    sent_id, text, words, spaces, skip_to, start = None, None, [], [], 0, None
    n = 0
    for no, line in read_lines(path):
        if not line.strip():
            if words or sent_id is not None:
                n += 1
                if text is None:
                    text = "".join(w + (" " if sp else "") for w, sp in zip(words, spaces)).rstrip()
                yield sent_id or f"{path.stem}:{n}", text, words
            sent_id, text, words, spaces, skip_to, start = None, None, [], [], 0, None
            continue
        if start is None:
            start = no
        if line.startswith("#"):
            key, _, val = line[1:].partition("=")
            key = key.strip()
            if key == "sent_id":
                sent_id = val.strip()
            elif key == "text":
                text = val.strip()
            continue
        cols = line.split("\t")
        if len(cols) != 10:
            raise TokstatError(f"expected 10 tab-separated columns, found {len(cols)}", path=path, line=no,
                               fix="check that the file is CoNLL-U (tabs, not spaces)")
        tid = cols[0]
        space = "SpaceAfter=No" not in cols[9].split("|")
        if "-" in tid:
            try:
                a, b = (int(x) for x in tid.split("-"))
            except ValueError:
                raise TokstatError(f"bad token id {tid!r}", path=path, line=no, fix="ids are N, N-M or N.M") from None
            words.append(cols[1])
            spaces.append(space)
            skip_to = b
            continue
        if "." in tid:
            continue
        if not tid.isdigit():
            raise TokstatError(f"bad token id {tid!r}", path=path, line=no, fix="ids are N, N-M or N.M")
        if int(tid) <= skip_to:
            continue
        words.append(cols[1])
        spaces.append(space)
    if words:
        n += 1
        if text is None:
            text = "".join(w + (" " if sp else "") for w, sp in zip(words, spaces)).rstrip()
        yield sent_id or f"{path.stem}:{n}", text, words


def conllu_language(path: Path) -> str:
    """``zh_pud-ud-test.conllu`` -> ``zh`` (the UD file-name convention: language code first)."""
    return normalize_lang(path.name.split("_")[0].split(".")[0].split("-")[0], source=path)


def load_conllu(paths: list[Path]) -> Corpus:
    """Align files (one per language) by ``sent_id``; a sentence missing from a language gets an empty
    text there (counted as empty, not dropped).
    """
    by_lang: dict[str, Path] = {}
    for p in sorted(paths):
        regular_file(p, "treebank file")
        lang = conllu_language(p)
        if lang in by_lang:
            raise TokstatError(f"two treebanks for language {lang}: {by_lang[lang].name} and {p.name}", path=p,
                               fix="pass one file per language")
        by_lang[lang] = p
    if not by_lang:
        raise TokstatError("no .conllu files found", fix="point at a treebank file or a folder of them")
    langs = list(by_lang)

    def gen():
        first, rest = langs[0], langs[1:]
        # Treebanks are small (PUD: 1000 sentences); the other languages are indexed by sent_id.
        index = {lang: _unique(by_lang[lang]) for lang in rest}
        seen = set()

        def segment(sid, text, words):
            texts, gold = {first: text}, {first: list(words)}
            for lang in rest:
                t, w = index[lang].get(sid, ("", []))
                texts[lang], gold[lang] = t, list(w)
            return Segment(sid, texts, gold)

        for sid, text, words in parse_conllu(by_lang[first]):
            if sid in seen:
                raise _duplicate(sid, by_lang[first])
            seen.add(sid)
            yield segment(sid, text, words)
        for lang in rest:  # sentences absent from the first file: empty there (counted, not dropped)
            for sid in index[lang]:
                if sid not in seen:
                    seen.add(sid)
                    yield segment(sid, "", [])

    name = "-".join(sorted({p.parent.name for p in by_lang.values()})) if len(by_lang) < 3 else \
        (next(iter(by_lang.values())).parent.parent.name or "conllu")
    return Corpus(name, langs, gen, list(by_lang.values()), {"loader": "conllu"}, frozenset(langs),
                  narrow=lambda keep: _ordered(load_conllu([by_lang[lang] for lang in keep]), keep))


def _duplicate(sid: str, path: Path) -> TokstatError:
    return TokstatError(f"sent_id {sid!r} appears twice: sentences could not be aligned", path=path,
                        fix="give every sentence of the treebank its own sent_id")


def _unique(path: Path) -> dict[str, tuple[str, list[str]]]:
    out: dict[str, tuple[str, list[str]]] = {}
    for sid, t, w in parse_conllu(path):
        if sid in out:
            raise _duplicate(sid, path)
        out[sid] = (t, w)
    return out


def _ordered(c: Corpus, keep: list[str]) -> Corpus:
    c.languages = list(keep)
    return c
