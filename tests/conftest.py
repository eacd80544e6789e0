from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"


@pytest.fixture
def shared() -> Path:
    if not SHARED.is_dir():
        pytest.skip("../shared is absent")
    return SHARED
