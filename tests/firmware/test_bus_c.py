"""The bus engines' C: the serve tables built by bus_table.c from fw-core's mapper logic equal the
ones the reference mapper logic gives (every mapper, every latch bank), and every file of
firmware/src/bus compiles for the RP2040 with the firmware's warnings as errors."""

from __future__ import annotations

import ctypes
import subprocess
import sys
from pathlib import Path

import pytest
from c_build import BUS_SOURCES, generate_headers, shared_library
from cart_fixtures import SERVED, image, serve_tables
from conftest import IN_CI, require_tool
from pio_harness import PROJECT_ROOT, require_module, tool

from hilbridge.machine.mappers import registry

FIRMWARE = PROJECT_ROOT / "firmware"
CORE = FIRMWARE / "src" / "core"
# bus_table.c with fw-core's mapper logic, and the rest of the core that protocol_gen.c refers to
# (crc32.c included: frame.c reads its tables, a data reference that lazy binding does not defer)
CART_SOURCES = [FIRMWARE / "src" / "cart" / "cart.c", BUS_SOURCES / "bus_table.c", *sorted(CORE.glob("*.c"))]
ARM_FLAGS = [
    "-std=c11",
    "-mcpu=cortex-m0plus",
    "-mthumb",
    "-Os",
    "-Wall",
    "-Wextra",
    "-Werror",
    "-ffreestanding",
]


def _protocol_headers(directory: Path) -> Path:
    """fw-core's generated protocol_gen.{h,c} (the same generator the firmware build runs)."""
    command = [sys.executable, str(FIRMWARE / "tools" / "gen_protocol.py"), str(PROJECT_ROOT), str(directory)]
    subprocess.run(command, check=True, capture_output=True, text=True)
    return directory


@pytest.fixture(scope="module")
def table_library(tmp_path_factory: pytest.TempPathFactory) -> ctypes.CDLL:
    gcc = require_tool("gcc")
    directory = tmp_path_factory.mktemp("bus_table")
    generated = _protocol_headers(generate_headers(directory / "gen"))
    sources = [*CART_SOURCES, generated / "protocol_gen.c"]
    includes = (FIRMWARE / "src" / "cart", FIRMWARE / "src" / "core", generated)
    library = shared_library(gcc, sources, directory, "bus_table", includes)
    library.cart_type_by_id.restype = ctypes.c_void_p
    return library


@pytest.mark.slow
@pytest.mark.parametrize(("name", "mapper"), SERVED)
def test_c_tables_equal_the_reference_mappers(table_library: ctypes.CDLL, name: str, mapper: str) -> None:
    data = image(name)
    cart = ctypes.create_string_buffer(64)
    kind = table_library.cart_type_by_id(registry().protocol_ids[mapper])
    assert kind
    table_library.cart_init(cart, ctypes.c_void_p(kind), data, len(data))
    count = table_library.bus_table_count(cart)
    bits = table_library.bus_table_index_bits(cart)
    tables = ctypes.create_string_buffer(count << bits)
    table_library.bus_table_build(tables, cart)
    expected = serve_tables(data, mapper)
    assert (count, 1 << bits) == (len(expected), len(expected[0]))
    assert tables.raw == b"".join(expected)


def test_bus_sources_compile_for_the_rp2040(tmp_path: Path) -> None:
    compiler = require_tool("arm-none-eabi-gcc")
    require_module("adafruit_pioasm", "adafruit-circuitpython-pioasm")
    regs = FIRMWARE / "rp2040" / "regs.h"
    if not regs.is_file():  # written by the platform part of the firmware (wave fw-platform)
        if IN_CI:
            pytest.fail("firmware/rp2040/regs.h is missing")
        pytest.skip("firmware/rp2040/regs.h (platform registers) is not in this checkout yet")
    generated = _protocol_headers(generate_headers(tmp_path / "gen"))
    gen_pio = tool("gen_pio")
    (generated / "pio_gen.h").write_text(gen_pio.c_header([gen_pio.assemble(n) for n in gen_pio.PROGRAMS]))
    includes = [
        FIRMWARE / "rp2040",
        BUS_SOURCES,
        FIRMWARE / "src" / "core",
        FIRMWARE / "src" / "cart",
        generated,
    ]
    for source in sorted(BUS_SOURCES.glob("*.c")):
        command = [compiler, *ARM_FLAGS, *(f"-I{path}" for path in includes), "-c", str(source), "-o",
                   str(tmp_path / f"{source.stem}.o")]  # fmt: skip
        result = subprocess.run(command, capture_output=True, text=True)
        assert result.returncode == 0, result.stderr
