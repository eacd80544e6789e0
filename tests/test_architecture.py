"""The shape of the package: imports run one way (the stage table of docs/architecture.md), the
top-level import stays light, shipped files never point at this repository's ../shared."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PKG = ROOT / "tokstat"


def stages() -> dict[str, int]:
    """module prefix -> rank, read from the table in docs/architecture.md (the doc is the rule)."""
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    table = text.split("## Stages", 1)[1].split("\n## ", 1)[0]
    out = {}
    for line in table.splitlines():
        m = re.match(r"\|\s*(\d+)\s*\|[^|]*\|(.*)\|\s*$", line)
        if m:
            for mod in re.findall(r"`([\w.]+)`", m.group(2)):
                out[mod] = int(m.group(1))
    return out


def module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def imports(path: Path) -> list[tuple[int, str]]:
    """(line, absolute module) of every import in the file, including those inside functions."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    me = module_name(path)
    pkg = me if path.name == "__init__.py" else me.rsplit(".", 1)[0]
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = pkg.split(".")
                base = base[: len(base) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            # "from . import x" may import a submodule x
            out += [(node.lineno, f"{mod}.{a.name}") for a in node.names] if not node.module else [(node.lineno, mod)]
    return [(ln, m) for ln, m in out if m == "tokstat" or m.startswith("tokstat.")]


def rank(mod: str, table: dict[str, int]) -> int | None:
    best = None
    for prefix, r in table.items():
        if (mod == prefix or mod.startswith(prefix + ".")) and (best is None or len(prefix) > len(best[0])):
            best = (prefix, r)
    return None if best is None else best[1]


def test_every_module_has_a_stage():
    table = stages()
    assert len(table) >= 20, "the stage table of docs/architecture.md was not found"
    missing = [module_name(p) for p in PKG.rglob("*.py")
               if p.name != "__init__.py" or p.parent != PKG
               if rank(module_name(p), table) is None]
    assert not missing, f"modules without a stage in docs/architecture.md: {missing}"


def test_imports_run_one_way():
    table = stages()
    bad = []
    for p in PKG.rglob("*.py"):
        me = module_name(p)
        if me == "tokstat":          # the lazy public face re-exports from every stage
            continue
        r = rank(me, table)
        for line, mod in imports(p):
            if mod.split(".")[:2] == ["tokstat", "_version"] or mod == "tokstat":
                continue
            target = rank(mod, table)
            if target is not None and target > r:
                bad.append(f"{p.relative_to(ROOT)}:{line} ({me}, stage {r}) imports {mod} (stage {target})")
    assert not bad, "imports from a lower stage to a higher one:\n" + "\n".join(bad)


def test_the_checker_sees_a_wrong_arrow(tmp_path):
    """The rule can fail: a module that imports a higher stage inside a function is caught."""
    table = stages()
    f = PKG / "counts.py"
    src = f.read_text(encoding="utf-8") + "\n\ndef _x():\n    from .report import report\n"
    probe = tmp_path / "tokstat" / "counts.py"
    probe.parent.mkdir()
    probe.write_text(src, encoding="utf-8")
    got = [m for _, m in imports_as(probe, "tokstat.counts")]
    assert "tokstat.report" in got and rank("tokstat.report", table) > rank("tokstat.counts", table)


def imports_as(path: Path, name: str):
    global ROOT
    saved = ROOT
    ROOT = path.parent.parent
    try:
        assert module_name(path) == name
        return imports(path)
    finally:
        ROOT = saved


@pytest.mark.parametrize("code,absent", [
    ("import tokstat", ["numpy", "polars", "tokenizers", "tiktoken", "sentencepiece", "rich", "datasets"]),
    ("import tokstat.cli", ["numpy", "polars", "tokenizers", "tiktoken", "sentencepiece", "rich", "datasets"]),
])
def test_top_level_import_is_light(code, absent):
    out = subprocess.run([sys.executable, "-c", f"{code}; import sys; print(sorted(m for m in {absent!r} if m in sys.modules))"],
                         capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == "[]", f"{code} loads {out.stdout.strip()}"


def test_public_names_resolve_to_functions_even_after_their_modules_load():
    out = subprocess.run([sys.executable, "-c",
                          "import tokstat, tokstat.compare, tokstat.sweep, tokstat.train, tokstat.report, tokstat.study\n"
                          "import inspect\n"
                          "print(all(inspect.isfunction(getattr(tokstat, n)) for n in "
                          "('compare', 'sweep', 'train', 'report', 'study', 'load_corpus', 'load_tokenizer')))"],
                         capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == "True"


def test_a_sibling_shared_folder_is_never_searched(tmp_path, monkeypatch):
    """A user's machine has no ../shared: data next to the working directory is found only through
    $TOKSTAT_DATA / $TOKSTAT_TOKENIZERS (or inside the working directory), never by that name."""
    from tokstat import TokstatError, load_corpus
    from tokstat.adapters.tiktoken_ import search_dirs

    work, data = tmp_path / "work", tmp_path / "shared" / "corpora" / "ud-pud"
    work.mkdir()
    data.mkdir(parents=True)
    (data / "en_pud-ud-test.conllu").write_text("# sent_id = s1\n# text = Hi\n1\tHi\t_\t_\t_\t_\t_\t_\t_\t_\n\n",
                                                encoding="utf-8")
    (tmp_path / "shared" / "tokenizers").mkdir()
    monkeypatch.chdir(work)
    monkeypatch.delenv("TOKSTAT_DATA", raising=False)
    monkeypatch.delenv("TOKSTAT_TOKENIZERS", raising=False)
    with pytest.raises(TokstatError, match="not on this machine"):
        load_corpus("ud-pud")
    assert all("shared" not in d.parts for d in search_dirs())
    monkeypatch.setenv("TOKSTAT_DATA", str(data.parent))
    assert load_corpus("ud-pud").languages == ["en"]
    monkeypatch.setenv("TOKSTAT_TOKENIZERS", str(tmp_path / "shared" / "tokenizers"))
    assert search_dirs()[0] == tmp_path / "shared" / "tokenizers"


def test_the_command_line_is_one_module_per_job():
    """Every command belongs to exactly one job module, ``tokstat --help`` lists it under that job,
    and no job module imports another (they share only ``options`` and ``terminal``)."""
    from click.testing import CliRunner

    from tokstat.cli import JOBS, cli

    owned = [c.name for job in JOBS for c in job.COMMANDS]
    assert sorted(owned) == sorted(cli.commands) and len(owned) == len(set(owned))
    out = CliRunner().invoke(cli, ["--help"], terminal_width=100).output
    heads = [out.index(f"\n{job.JOB}:\n") for job in JOBS]
    assert heads == sorted(heads)
    for k, job in enumerate(JOBS):
        block = out[heads[k]:heads[k + 1] if k + 1 < len(JOBS) else len(out)]
        assert {line.split()[0] for line in block.splitlines()[1:] if line.startswith("  ")} == {c.name for c in job.COMMANDS}
    jobs = {job.__name__ for job in JOBS}
    for job in JOBS:
        crossed = {m for _, m in imports(Path(job.__file__)) if m in jobs and m != job.__name__}
        assert not crossed, f"{job.__name__} imports {crossed}"
