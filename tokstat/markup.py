"""HTML built by construction: every fragment of the page is a :class:`markupsafe.Markup`, and
every value put into one goes through :func:`h` (``Markup(template).format``), which escapes it
unless it is itself Markup. Joining with :func:`join` escapes plain strings too, so a data-derived
string that reaches the page without passing through a template is shown as text, never run.

>>> h("<td>{}</td>", "<script>x</script>")
Markup('<td>&lt;script&gt;x&lt;/script&gt;</td>')
>>> join("", ["<b>", h("<i>{}</i>", "&")])
Markup('&lt;b&gt;<i>&amp;</i>')
>>> h("<p>{}</p>", "a\\x1b]0;t\\x07\\tb")
Markup('<p>a\\\\x1b]0;t\\\\x07\\tb</p>')
"""

from __future__ import annotations

from collections.abc import Iterable

from markupsafe import Markup, escape

from .fmt import CONTROL

_HTML_CONTROL = {c: e for c, e in CONTROL.items() if c not in (0x09, 0x0A)}

__all__ = ["Markup", "escape", "h", "join", "trusted"]


def _text(value):
    """A plain string's control characters (ESC, BEL, C1, bidi overrides) as visible escapes; tab and
    line feed stay (white space in HTML). Markup and non-strings pass unchanged."""
    if isinstance(value, Markup) or not isinstance(value, str):
        return value
    return value.translate(_HTML_CONTROL)


def h(template: str, *args, **kwargs) -> Markup:
    """``template`` (written by tokstat, never data) with every argument escaped unless it is Markup."""
    return Markup(template).format(*map(_text, args), **{k: _text(v) for k, v in kwargs.items()})


def join(sep: str, parts: Iterable) -> Markup:
    """``sep.join(parts)`` where each plain string part is escaped."""
    return Markup(sep).join(map(_text, parts))


def trusted(fragment: str) -> Markup:
    """Markup from a producer that escapes its own text: Matplotlib's SVG writer (text and attributes
    escaped by its backend; control characters in its text are shown as escapes here). Never for
    a string that holds data."""
    return Markup(fragment.translate(_HTML_CONTROL))
