"""Shared by the oracle tests: the fixture carts' runs (tests/fixture_runs.py), MAME required, and
the sound of the runs that record it."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
from conftest import require_tool
from fixture_runs import AUDIO_CARTS, emulator_run, mame_run


@pytest.fixture(scope="session", autouse=True)
def mame_installed() -> Iterator[None]:
    """Import into each MAME test module: skips (fails in CI) without MAME."""
    require_tool("mame")
    yield


def mame_audio(name: str, region: str) -> np.ndarray:
    """The sound of the cart's traced MAME run (no second MAME run for it)."""
    assert name in AUDIO_CARTS, f"add {name} to AUDIO_CARTS"
    audio = mame_run(name, region).audio
    assert audio is not None
    return audio


def emulator_audio(name: str, region: str) -> np.ndarray:
    assert name in AUDIO_CARTS, f"add {name} to AUDIO_CARTS"
    audio = emulator_run(name, region).audio
    assert audio is not None
    return audio
