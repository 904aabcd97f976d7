"""`hilbridge firmware build`: run `make -C firmware` of this checkout with this Python.

The firmware sources ship with the repository, not inside the installed package, so building needs a
clone (`pip install -e .` from it, or run from it).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from hilbridge.errors import HilbridgeError

COMPILER = "arm-none-eabi-gcc"
TARGET_NAME = "hilbridge-adapter"


@dataclass(frozen=True, slots=True)
class BuildResult:
    elf: Path
    bin: Path
    uf2: Path


def firmware_dir() -> Path:
    """`firmware/` of the checkout this package was imported from."""
    candidate = Path(__file__).resolve().parents[2] / "firmware"
    if not (candidate / "Makefile").is_file():
        raise HilbridgeError(
            "the firmware sources are not here (hilbridge was installed without its repository)",
            hint="clone the repository and run `hilbridge firmware build` from an editable install",
        )
    return candidate


def default_uf2() -> Path:
    return firmware_dir() / "build" / f"{TARGET_NAME}.uf2"


def build(directory: Path | None = None, jobs: int = 1, build_dir: Path | None = None) -> BuildResult:
    """Build ELF, BIN and UF2 (into `build_dir`, default firmware/build); HilbridgeError with make's
    last lines when it fails."""
    directory = directory or firmware_dir()
    out_dir = (build_dir or directory / "build").resolve()
    if shutil.which(COMPILER) is None:
        raise HilbridgeError(
            f"{COMPILER} is not installed",
            hint="apt-get install --no-install-recommends gcc-arm-none-eabi",
        )
    result = subprocess.run(
        ["make", "-C", str(directory), f"-j{jobs}", f"PYTHON={sys.executable}", f"BUILD_DIR={out_dir}"],
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode:
        tail = "\n".join((result.stdout + result.stderr).strip().splitlines()[-15:])
        raise HilbridgeError(f"the firmware build failed:\n{tail}")
    out = out_dir / TARGET_NAME
    return BuildResult(out.with_suffix(".elf"), out.with_suffix(".bin"), out.with_suffix(".uf2"))
