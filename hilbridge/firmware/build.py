"""`hilbridge firmware build`: run `make -C firmware` of this checkout with this Python.

The firmware sources ship with the repository, not inside the installed package, so building needs a
clone (`pip install -e .` from it, or run from it).
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
import tempfile
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
    _make(directory, out_dir, f"-j{jobs}")
    out = out_dir / TARGET_NAME
    return BuildResult(out.with_suffix(".elf"), out.with_suffix(".bin"), out.with_suffix(".uf2"))


def _make(directory: Path, build_dir: Path, *arguments: str) -> None:
    """Run make in `directory` with our interpreter for its generators; HilbridgeError with make's last
    lines when it fails."""
    command = ["make", "-C", str(directory), *arguments, f"PYTHON={sys.executable}", f"BUILD_DIR={build_dir}"]
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    if result.returncode:
        tail = "\n".join((result.stdout + result.stderr).strip().splitlines()[-30:])
        targets = [argument for argument in arguments if not argument.startswith("-")]
        raise HilbridgeError(" ".join(["make -C firmware", *targets, "failed:"]) + f"\n{tail}")


# What a firmware build reads besides firmware/ itself (firmware/core.mk, rp2040.mk): the host's tables
# and the Python modules that generate headers, seal boot2 and write the UF2.
BUILD_INPUTS = (
    "hilbridge/__init__.py",
    "hilbridge/errors.py",
    "hilbridge/link",
    "hilbridge/firmware",
    "hilbridge/machine/cartridge.py",
    "hilbridge/machine/mappers.tsv",
    "hilbridge/machine/mappers.py",
)
# Never inputs: build output, the test harness (rp2040js and its packages), bytecode.
IGNORED_PARTS = frozenset({"build", "harness", "node_modules", "__pycache__"})


def source_hash(directory: Path | None = None) -> str:
    """SHA-256 over the names and contents of every file a firmware build reads."""
    firmware = directory or firmware_dir()
    root = firmware.parent
    files: list[Path] = []
    for top in (firmware, *(root / name for name in BUILD_INPUTS)):
        candidates = [top] if top.is_file() else sorted(top.rglob("*"))
        files += [
            path
            for path in candidates
            if path.is_file() and not IGNORED_PARTS.intersection(path.relative_to(root).parts)
        ]
    digest = hashlib.sha256()
    for path in sorted(files):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def cached_build(target: str, cache: Path, directory: Path | None = None) -> Path:
    """The build directory of `make -C firmware TARGET` for the current sources, built once per
    source hash under `cache` and reused afterwards. Built in a fresh temporary directory and moved
    into place with one rename, so processes building at once (pytest-xdist workers) never see a half
    build: the first rename wins, a later one finds the place taken and drops its own copy. The
    commit id in FIRMWARE_INFO is the one of the first build of these sources."""
    directory = directory or firmware_dir()
    final = cache / f"{target}-{source_hash(directory)[:20]}"
    if final.is_dir():
        return final
    cache.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target}-", dir=cache))
    try:
        _make(directory, staging, "-s", target)
        try:
            staging.rename(final)
        except OSError:
            if not final.is_dir():
                raise
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
    return final
