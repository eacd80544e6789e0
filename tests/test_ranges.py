"""Every numeric option of every command has a range (tokstat/ranges.py), checked before any work:
each bound, NaN and infinity are refused with one line naming the option, whatever the command."""

from __future__ import annotations

import math

import click
import pytest

from tokstat.cli import cli, main
from tokstat.ranges import RANGES, Range, check
from tokstat.errors import TokstatError


def numeric_options() -> list[tuple[str, click.Command, click.Parameter]]:
    out = []

    def walk(g, prefix=""):
        for name, c in g.commands.items():
            if isinstance(c, click.Group):
                walk(c, prefix + name + " ")
            else:
                out.extend((prefix + name, c, p) for p in c.params
                           if isinstance(p.type, (click.types.IntParamType, click.types.FloatParamType)))
    walk(cli)
    return out


def required_argv(name: str, cmd: click.Command, but: str | None = None) -> list[str]:
    """The command with placeholders for what click requires (the range check runs before they are
    read), but option ``but`` (the one under test: given twice, it is refused as such)."""
    argv = name.split()
    for p in cmd.params:
        if p.required and not (but and but in p.opts):
            value = (p.type.choices[0] if isinstance(p.type, click.Choice) else "100"
                     if isinstance(p.type, (click.types.IntParamType, click.types.FloatParamType)) else "placeholder")
            argv += ([p.opts[0]] if isinstance(p, click.Option) else []) + [value]
    return argv


def bad_values(r: Range, is_float: bool) -> list:
    vals = []
    if r.lo > -math.inf:
        vals.append(r.lo if r.open_lo else (r.lo - 1 if not is_float else r.lo - 0.5))
    if r.hi < math.inf:
        vals.append(r.hi if r.open_hi else (r.hi * 2 if r.hi > 1 else r.hi + 0.5))
    if is_float:
        vals += [math.nan, math.inf, -math.inf]
    return vals


def test_every_numeric_option_has_a_range():
    missing = sorted({p.opts[0] for _, _, p in numeric_options() if p.opts[0] not in RANGES})
    assert not missing, f"numeric options without a range in tokstat/ranges.py: {missing}"
    assert len(numeric_options()) >= 60


def test_every_default_lies_in_its_range():
    for name, _, p in numeric_options():
        if isinstance(p.default, (int, float)):
            check(p.opts[0], p.default)      # raises if a default were out of its own range


@pytest.mark.parametrize("name, cmd, param", numeric_options(), ids=lambda x: x if isinstance(x, str) else "")
def test_each_bound_nan_and_infinity_are_refused_before_any_work(name, cmd, param, capsys):
    opt = param.opts[0]
    r = RANGES[opt]
    is_float = isinstance(param.type, click.types.FloatParamType)
    for v in bad_values(r, is_float):
        if not is_float and not float(v).is_integer():
            continue
        shown = ("nan" if isinstance(v, float) and math.isnan(v) else repr(v) if is_float else str(int(v)))
        shown = {"inf": "inf", "-inf": "-inf"}.get(shown, shown)
        rc = main(required_argv(name, cmd, but=opt) + [opt, shown])
        err = capsys.readouterr().err.strip()
        assert rc == 2, (name, opt, v, err)
        assert err.startswith(f"tokstat: error: {opt} must be ") and "(fix: " in err and len(err.splitlines()) == 1, err


@pytest.mark.parametrize("opt, good", [("--mfu", 1.0), ("--mfu", 1e-9), ("--seed", 0), ("--seed", 2**32 - 1), ("--zero", 3),
                                       ("--max-unk", 0.0), ("--prompt-chars", 0.0), ("--heldout", 0.5)])
def test_values_on_the_closed_bounds_pass(opt, good):
    check(opt, good)


@pytest.mark.parametrize("opt, bad", [("--zero", 4), ("--heldout", 1.0), ("--heldout", 0.0), ("--seed", 2**32),
                                      ("--output-chars", 0.0), ("--price", -1.0), ("--price", math.inf), ("--gpus", 0),
                                      ("--batch", 0), ("--max-premium", 0.99)])
def test_values_past_the_bounds_fail(opt, bad):
    with pytest.raises(TokstatError, match=opt.replace("-", r"\-")):
        check(opt, bad)


def test_the_issue_cases(capsys):
    """The round-4 cases: budget --seed -1, extend --gpus 0 / --batch 0 / --price -1 / inf (before training)."""
    for argv, opt in [(["budget", "x", "-t", "y", "--seed", "-1"], "--seed"),
                      (["extend", "x", "--corpus", "y", "--add", "5", "--out", "o", "--gpus", "0"], "--gpus"),
                      (["extend", "x", "--corpus", "y", "--add", "5", "--out", "o", "--batch", "0"], "--batch"),
                      (["extend", "x", "--corpus", "y", "--add", "5", "--out", "o", "--price", "-1"], "--price"),
                      (["extend", "x", "--corpus", "y", "--add", "5", "--out", "o", "--price", "inf"], "--price")]:
        assert main(argv) == 2
        assert capsys.readouterr().err.startswith(f"tokstat: error: {opt} must be")
