"""A pure-Python reference for :func:`tokstat.counts.count_batch`: one segment at a time, one token at
a time, written for clarity rather than speed. Tests use it as the oracle for the vectorised counts;
``analysis/bench_compare.py`` uses it as the naive baseline.

>>> class A:  # one token per word, the unknown token 0 for "zz"
...     unk_ids, byte_fallback = frozenset({0}), None
>>> counts = reference_counts("ab zz", [1, 0], [(0, 2), (3, 5)], [(0, 2), (3, 5)], A())
>>> counts["tokens"], counts["unk_chars"], counts["continued_words"], counts["boundary_tp"]
(2, 2, 0, 1)
"""

from __future__ import annotations


WHITESPACE = {chr(c) for c in (9, 10, 11, 12, 13, 32, 0x85, 0xA0, 0x1680, *range(0x2000, 0x200B), 0x2028, 0x2029,
                               0x202F, 0x205F, 0x3000)}


def reference_counts(text: str, ids: list[int], spans: list[tuple[int, int]],
                     words: list[tuple[int, int]] | None, adapter) -> dict[str, int]:
    """Counts of one segment: ``spans`` are the tokens' UTF-8 byte spans, ``words`` character spans."""
    data = text.encode("utf-8")
    char_start = []                      # byte offset where each character starts
    pos = 0
    for ch in text:
        char_start.append(pos)
        pos += len(ch.encode("utf-8"))
    boundary = set(char_start) | {len(data)}
    ccum = [0]                           # ccum[p]: characters starting before byte p
    for p in range(len(data)):
        ccum.append(ccum[-1] + (p in boundary))

    def chars_before(p: int) -> int:
        return ccum[p]

    nonws_before = [0]                   # non-whitespace bytes before each byte position
    for ch in text:
        for _ in ch.encode("utf-8"):
            nonws_before.append(nonws_before[-1] + (ch not in WHITESPACE))
    total_nonws = nonws_before[-1]
    live = [(s, e) for s, e in spans if e > s]

    split = set()
    for s, e in live:
        for cut in (s, e):
            if cut not in boundary:
                split.add(chars_before(cut) - 1)
    unk = sum(chars_before(e) - chars_before(s) for i, (s, e) in zip(ids, spans) if i in adapter.unk_ids)
    fallback = 0 if adapter.byte_fallback is None else sum(bool(adapter.byte_fallback[i]) for i in ids)

    def cut_points(pairs) -> set[int]:
        out = set()
        for s, e in pairs:
            for p in (s, e):
                q = nonws_before[p]
                if 0 < q < total_nonws:
                    out.add(2 * q + (p not in boundary))
        return out

    token_cuts = cut_points(live)
    out = {"chars": len(text), "bytes": len(data), "tokens": len(ids), "split_chars": len(split),
           "unk_chars": unk, "byte_fallback_tokens": fallback, "token_boundaries": len(token_cuts)}
    if words is None:
        out.update(words=-1, continued_words=-1, word_boundaries=-1, boundary_tp=-1)
        return out
    to_byte = char_start + [len(data)]
    wb = [(to_byte[a], to_byte[b]) for a, b in words]
    out["words"] = len(wb)
    out["continued_words"] = sum(1 for ws, we in wb if sum(1 for s, e in live if s < we and e > ws) >= 2)
    word_cuts = cut_points(wb)
    out["word_boundaries"] = len(word_cuts)
    out["boundary_tp"] = len(token_cuts & word_cuts)
    return out
