"""Build the bus engine's plain-C parts for the host (gcc) so the tests drive the real C code
through ctypes, with the headers generated from the same tables as the firmware build."""

from __future__ import annotations

import ctypes
import os
import subprocess
from pathlib import Path

from pio_harness import PROJECT_ROOT, tool

BUS_SOURCES = PROJECT_ROOT / "firmware" / "src" / "bus"
C_FLAGS = ["-std=c11", "-O0", "-Wall", "-Wextra", "-Werror", "-fPIC", "-shared"]


def generate_headers(directory: Path) -> Path:
    """pins_gen.h and bus_timing_gen.h in `directory`, as the firmware build writes them."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "pins_gen.h").write_text(tool("gen_pins").c_header(tool("gen_pins").load_pins()))
    timing = tool("gen_timing")
    (directory / "bus_timing_gen.h").write_text(timing.c_header(timing.load_timing()))
    return directory


def shared_library(
    gcc: str, sources: list[Path], directory: Path, name: str, includes: tuple[Path, ...] = ()
) -> ctypes.CDLL:
    generated = generate_headers(directory / "gen")
    output = directory / f"{name}.so"
    flags = [f"-I{path}" for path in (generated, BUS_SOURCES, *includes)]
    command = [gcc, *C_FLAGS, *flags, *map(str, sources), "-o", str(output)]
    subprocess.run(command, check=True, capture_output=True, text=True)
    return ctypes.CDLL(str(output), mode=os.RTLD_LAZY)  # functions never called may stay unresolved
