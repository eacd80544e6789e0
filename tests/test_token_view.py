"""The token view as a playground (issue 44): a background stable per token id, the id and bytes on
hover, characters cut across tokens and byte fallback marked, tokenizers side by side; in
``show --html`` (a page of its own, UTF-8 declared) and in the report's "look inside"."""

from __future__ import annotations

import json
import re
import subprocess
from html.parser import HTMLParser

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokstat import load_tokenizer
from tokstat.cli import main
from tokstat.show import PALETTE, TERMINAL, html_fragment, html_page, pieces, rich_lines, show, summary

CL = "tiktoken:cl100k_base"
TEXT = "語言模型 tokenizers 👍🏽 é 你好"


class Tokens(HTMLParser):
    """The view's token spans, per tokenizer column: (classes, data-tip, shown text)."""

    def __init__(self):
        super().__init__()
        self.cols: list[tuple[str, list[list]]] = []
        self._in, self._head = None, False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        cls = (a.get("class") or "").split()
        if "tv-col" in cls:
            self.cols.append(("", []))
        elif "tv-head" in cls:
            self._head = True
        elif tag == "b" and self._head:
            self._head = "name"
        elif tag == "span" and "tv" in cls:
            self._in = [cls, a.get("data-tip"), ""]
            self.cols[-1][1].append(self._in)

    def handle_endtag(self, tag):
        if tag == "span":
            self._in = None
        if tag == "b" and self._head == "name":
            self._head = False

    def handle_data(self, data):
        if self._in is not None:
            self._in[2] += data
        elif self._head == "name":
            self.cols[-1] = (self.cols[-1][0] + data, self.cols[-1][1])


def _parse(page: str) -> dict[str, list[list]]:
    p = Tokens()
    p.feed(page)
    return dict(p.cols)


def _cut_reference(text: str, spans: list[tuple[int, int]]) -> int:
    """Characters whose bytes more than one token covers (the obvious way: count overlaps)."""
    out, pos = 0, 0
    for c in text:
        n = len(c.encode("utf-8"))
        out += sum(1 for a, b in spans if a < pos + n and b > pos and b > a) > 1
        pos += n
    return out


@settings(max_examples=60, deadline=None)
@given(text=st.text(st.characters(exclude_categories=("Cs",)), min_size=1, max_size=25)
       | st.sampled_from([TEXT, "語", "👩‍👩‍👧", "e\u0301", "Straße"]))
def test_summary_counts_what_the_pieces_say(text):
    a = load_tokenizer(CL)
    ps = pieces(a, text)
    s = summary(ps)
    assert s.tokens == len(a.enc.encode_ordinary(text))                  # the library's own count
    assert s.chars == len(text)
    assert s.cut_chars == _cut_reference(text, [(p.start, p.end) for p in ps])
    assert s.byte_tokens == 0 and s.unk_tokens == 0                      # a byte-level BPE has neither


def test_byte_fallback_and_unknown_are_counted(shared):
    llama = load_tokenizer(f"spm:{shared}/tokenizers/llama2/tokenizer.model")
    t5 = load_tokenizer(f"spm:{shared}/tokenizers/t5/spiece.model")
    s = summary(pieces(llama, "👍🏽"))
    assert s.byte_tokens == 8 and s.cut_chars == 2 and "8 byte-fallback" in s.line()
    u = summary(pieces(t5, "你好 ok"))
    assert u.unk_tokens >= 1 and "unknown" in u.line() and u.chars == 5


def test_the_html_view_colours_each_id_the_same_and_tips_its_id_and_bytes(shared):
    specs = [CL, f"tiktoken:{shared}/tokenizers/o200k_base/o200k_base.tiktoken",
             f"spm:{shared}/tokenizers/llama2/tokenizer.model"]
    res = show(TEXT, specs)
    cols = _parse(str(html_fragment(TEXT, res)))
    assert list(cols) == list(res)                                       # side by side, one column each
    colour_of: dict[int, str] = {}
    for name, spans in cols.items():
        ps = res[name]
        assert len(spans) == len(ps)
        raw = b""
        for (cls, tip, shown), p in zip(spans, ps):
            m = re.fullmatch(r"id (\d+) · (?:bytes ([0-9a-f ]+)|no bytes)(?: · (.+))?", tip)
            assert m and int(m[1]) == p.id, tip
            raw += bytes.fromhex(m[2] or "")
            k = next(c for c in cls if re.fullmatch(r"k\d", c))
            assert colour_of.setdefault(p.id, k) == k                  # one id, one colour, in every column
            assert k == f"k{p.id % len(PALETTE)}"
            assert (p.kind in cls) == (p.kind != "text") and shown == p.shown
            assert (m[3] is not None) == (p.kind != "text")
        assert raw == TEXT.encode("utf-8")                               # the tips' bytes tile the text
    ids = [p.id for p in res["tiktoken/cl100k_base"]]
    assert ids == load_tokenizer(CL).enc.encode_ordinary(TEXT)


def test_neighbours_with_one_colour_are_still_separated():
    """Two neighbouring tokens may share a background (ids equal modulo the palette): every token
    has its own 2 px white edge, so the boundary shows (rendered: tests/test_inspect.py's Chromium
    check measures the border of every token)."""
    from tokstat.show import VIEW_CSS

    assert re.search(r"\.tv\{[^}]*border-right:2px solid #fff", VIEW_CSS)
    assert len(set(PALETTE)) == len(PALETTE) == len(TERMINAL)


def test_show_html_is_a_utf8_page_and_the_terminal_colours_by_id(tmp_path, capsys):
    out = tmp_path / "v.html"
    assert main(["show", TEXT, "-t", CL, "--html", str(out)]) == 0
    raw = out.read_bytes()
    assert raw.startswith(b"<!doctype html>") and b'<meta charset="utf-8">' in raw[:1024]   # read as UTF-8
    page = raw.decode("utf-8")
    assert "<script" not in page and len(_parse(page)["tiktoken/cl100k_base"]) == len(show(TEXT, [CL])[CL.replace(":", "/")])
    res = show(TEXT, [CL])
    line = rich_lines(TEXT, res)[1]
    ps = res["tiktoken/cl100k_base"]
    styles = [str(sp.style) for sp in line.spans]
    assert len(styles) == len(ps)
    for st_, p in zip(styles, ps):
        assert TERMINAL[p.id % len(TERMINAL)] in st_
        assert ("red" in st_) == (p.kind == "partial")


def test_html_page_of_equal_inputs_is_byte_identical():
    res = show(TEXT, [CL])
    assert html_page(TEXT, res) == html_page(TEXT, show(TEXT, [CL]))


@pytest.mark.slow
def test_the_reports_look_inside_has_every_tokenizer_side_by_side_in_the_pages_colours(tmp_path):
    out = tmp_path / "r.html"
    assert main(["report", "--corpus", "sample", "-t", CL, "-t", "train:bpe:1500", "--out", str(out), "--quiet"]) == 0
    page = out.read_text(encoding="utf-8")
    view = page[page.index('id="view"') if 'id="view"' in page else page.index("A look inside"):]
    cols = _parse(view)
    assert len(cols) == 2 and "tiktoken/cl100k_base" in cols, list(cols)
    swatches = re.findall(r'class="tv-sw" style="background:(#[0-9a-fA-F]{6})"', view)
    assert len(set(swatches)) == 2 and len(swatches) == 2 * view.count('class="view"')
    head = page[:page.index('id="view"')]
    assert all(c.lower() in head.lower() for c in swatches)           # the colours the charts give them
    assert page.count(".tv:hover::after") == 1                          # the view's style, once in the page


PROBE = """<script>
window.addEventListener('load', () => {
  const cols = [...document.querySelectorAll('.tv-col')].map(e => { const r = e.getBoundingClientRect();
    return [r.left, r.top, r.right]; });
  const pre = document.createElement('pre'); pre.id = 'probe';
  pre.textContent = JSON.stringify({cols, scrollWidth: document.documentElement.scrollWidth, inner: innerWidth});
  document.body.appendChild(pre); });
</script>"""


@pytest.mark.slow
@pytest.mark.browser
@pytest.mark.parametrize("width", [800, 1440])
def test_show_page_in_chromium(tmp_path, shared, width):
    from test_report import FLAGS, chromium

    exe = chromium()
    specs = [CL, f"spm:{shared}/tokenizers/llama2/tokenizer.model", f"spm:{shared}/tokenizers/t5/spiece.model"]
    page = html_page(TEXT * 3, show(TEXT * 3, specs)).decode("utf-8")
    f = tmp_path / "v.html"
    f.write_text(page.replace("</body>", PROBE + "</body>"), encoding="utf-8")
    dom = subprocess.run([exe, *FLAGS, f"--user-data-dir={tmp_path / 'profile'}", f"--window-size={width},900",
                          "--virtual-time-budget=3000", "--dump-dom", f.as_uri()], capture_output=True, text=True,
                         timeout=180)
    m = re.search(r'<pre id="probe">(.*?)</pre>', dom.stdout, re.S)
    assert m, dom.stderr[-2000:]
    probe = json.loads(m.group(1).replace("&quot;", '"'))
    assert probe["scrollWidth"] <= probe["inner"]                        # no horizontal overflow
    cols = probe["cols"]
    assert len(cols) == 3 and all(right <= width for _, _, right in cols)
    if width >= 1440:
        assert len({round(top) for _, top, _ in cols}) == 1              # side by side on a wide screen
