import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"

# The shared corpora and tokenizers of this development setup are found the way a user's own would
# be: through $TOKSTAT_DATA and $TOKSTAT_TOKENIZERS (shipped code never names ../shared).
# Tests never reach the network: the hub libraries read these when they are first imported.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")

if SHARED.is_dir():
    os.environ.setdefault("TOKSTAT_DATA", str(SHARED / "corpora"))
    os.environ.setdefault("TOKSTAT_TOKENIZERS", str(SHARED / "tokenizers"))


@pytest.fixture
def shared() -> Path:
    if not SHARED.is_dir():
        pytest.skip("../shared is absent")
    return SHARED


@pytest.fixture(scope="session")
def tiktoken_encoding():
    """``get(NAME)``: tiktoken's own registry encoding (the oracle), offline on a fresh machine: its
    cache is first seeded from $TOKSTAT_TOKENIZERS the way ``tiktoken:NAME`` seeds it, so the oracle
    does not depend on a tokstat call having run before it."""
    import tiktoken

    from tokstat.adapters.tiktoken_ import seed_cache

    def get(name: str):
        seed_cache(name)
        return tiktoken.get_encoding(name)
    return get


@pytest.fixture(scope="module")
def shared_module() -> Path:
    """``shared`` for module-scoped fixtures."""
    if not SHARED.is_dir():
        pytest.skip("../shared is absent")
    return SHARED


def pytest_collection_modifyitems(config, items):
    """``shared``: the test reads ../shared (it skips where that folder is absent)."""
    for item in items:
        if {"shared", "shared_module"} & set(getattr(item, "fixturenames", ())) or getattr(getattr(item, "module", None), "USES_SHARED", False):
            item.add_marker(pytest.mark.shared)


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    """Say loudly when the report was not checked in a browser (Chromium absent): a skipped browser
    test is not a passed one."""
    skipped = [r for r in terminalreporter.stats.get("skipped", []) if "browser" in getattr(r, "keywords", {})]
    if skipped:
        terminalreporter.write_sep("!", f"THE REPORT WAS NOT CHECKED IN A BROWSER: {len(skipped)} browser test(s) "
                                        "skipped (install Chromium: apt-get install chromium)", red=True, bold=True)
    gpu = [r for r in terminalreporter.stats.get("skipped", []) if "gpu_check" in getattr(r, "nodeid", "")]
    if gpu:
        terminalreporter.write_sep("-", "analysis/gpu_check.py's CPU self-test was skipped: torch and transformers are "
                                        "not installed (TORCH_PYTHON=... names an interpreter that has them)")


# Hypothesis: the same examples on every CI run (derandomize), so that the suite is deterministic;
# locally it explores (and remembers failures in .hypothesis/).
from hypothesis import HealthCheck, settings  # noqa: E402

settings.register_profile("ci", derandomize=True, print_blob=True, suppress_health_check=[HealthCheck.too_slow])
if os.environ.get("CI"):
    settings.load_profile("ci")


def pytest_configure(config):
    """The quick loop (``-m "not slow"``) runs the property tests on fewer examples; CI and a full run
    keep theirs (ROUNDTRIP_EXAMPLES, the ``ci`` profile)."""
    if "not slow" in (config.getoption("markexpr") or "") and not os.environ.get("CI"):
        os.environ.setdefault("ROUNDTRIP_EXAMPLES", "8")
        settings.register_profile("quick", max_examples=10, deadline=None)
        settings.load_profile("quick")
