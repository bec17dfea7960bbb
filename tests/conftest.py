"""Session-wide fixtures shared by every test package."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def shared_dir() -> Path:
    """The workplace's shared/ folder (beside the repository), overridable by env."""
    return Path(os.environ.get("GREENLOOP_SHARED", REPO.parent / "shared"))


@pytest.fixture(scope="session")
def corpus_dir() -> Path:
    path = shared_dir() / "corpus"
    if not path.is_dir():
        pytest.fail(f"the shared corpus is missing at {path} (set GREENLOOP_SHARED)")
    return path
