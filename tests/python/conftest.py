"""Shared fixtures of the Python module's tests (run by ctest with PYTHONPATH=build/python)."""

import os
import pathlib

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture
def hlo_dir():
    return REPO / "examples" / "hlo"


@pytest.fixture
def cli():
    """The tpusim executable of the same build."""
    build = pathlib.Path(os.environ.get("TPUSIM_BUILD_DIR", REPO / "build"))
    return build / "tools" / "tpusim" / "tpusim"
