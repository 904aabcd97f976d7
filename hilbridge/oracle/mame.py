"""Run Debian's MAME 0.251 headless on a cartridge and collect its bus trace (the emulator oracle).

MAME is started with our own BIOS and character ROM (it refuses to start without the character
ROM; a BIOS with the wrong checksum only warns), `trace.lua` records every MOVX access keyed on the
CPU cycle, and the run ends from inside the script after the requested number of frames. The
command line and the pitfalls behind it are in docs/oracle.md.
"""

from __future__ import annotations

import functools
import hashlib
import io
import os
import shutil
import subprocess
import tempfile
import time
from contextlib import AbstractContextManager
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import BinaryIO

import numpy as np

from hilbridge.errors import HilbridgeError
from hilbridge.machine.bios import default_bios
from hilbridge.machine.charset import charset_rom
from hilbridge.machine.inputs import NO_INPUT, InputMovie
from hilbridge.machine.mappers import DEFAULT_REGISTRY, registry
from hilbridge.machine.palette import RF_PALETTE
from hilbridge.machine.timing import CLOCKS_PER_MACHINE_CYCLE, REGIONS
from hilbridge.oracle import trace as trace_module
from hilbridge.oracle.run_cache import CacheEntry, Invocation, cache_entry, cache_folder
from hilbridge.oracle.trace import Trace, parse_trace, parsed_trace_bytes, trace_from_parsed

SYSTEMS = {"ntsc": "odyssey2", "pal": "videopac"}  # MAME machine per region
SCREEN_WIDTH, SCREEN_HEIGHT = 360, 243  # what screen:pixels() returns, ARGB32 little-endian
AUDIO_RATE = 48_000  # -wavwrite: 16-bit stereo at MAME's default sample rate
SLOTS = DEFAULT_REGISTRY.mame_slots  # cartridge types we can ask MAME for (mappers.tsv `mame_slot`)
INSTALL_HINT = "install MAME 0.251 with `apt-get install mame` (Debian puts it in /usr/games)"
ROM_SIZE = 1024
CHARSET_SIZE = 512


def find_mame() -> str:
    """Path of the MAME executable: $MAME, then PATH, then /usr/games (root's PATH lacks it)."""
    candidates = [os.environ["MAME"]] if os.environ.get("MAME") else ["mame"]
    search = os.pathsep.join([os.environ.get("PATH", ""), "/usr/games"])
    for candidate in candidates:
        found = shutil.which(candidate, path=search)
        if found:
            return found
    raise HilbridgeError(f"MAME executable not found ({candidates[0]})", hint=INSTALL_HINT)


def inputs_lua() -> AbstractContextManager[Path]:
    """The path of inputs.lua, the input-movie code that trace.lua and capture.lua both load (their
    environment's HILBRIDGE_INPUTS_LUA), for as long as the context lasts."""
    return resources.as_file(resources.files(__package__).joinpath("inputs.lua"))


def mame_cycles_per_second(region: str) -> int:
    """8048 machine cycles per second in MAME: its CPU core rounds clock / 15 up to an integer.

    NTSC: 5 369 317 Hz / 15 = 357 954.47 → 357 955 (MAME's time for cycle N is exactly N / 357 955 s,
    seen in the trace), so MAME's CPU runs 1.5 ppm fast against the VDC's pixel clock.
    """
    return -(-REGIONS[region].cpu_clock_hz // CLOCKS_PER_MACHINE_CYCLE)


def _palette() -> dict[int, int]:
    """ARGB32 value of each palette index as MAME's RF palette draws it in screen:pixels()."""
    return {
        0xFF000000 | (int(r) << 16) | (int(g) << 8) | int(b): index
        for index, (r, g, b) in enumerate(RF_PALETTE)
    }


MAME_PALETTE: dict[int, int] = _palette()


def wav_samples(raw: bytes) -> np.ndarray:
    """Left channel of a 16-bit stereo WAV from -wavwrite, as floats in -1…1.

    The script ends MAME with os.exit, so the RIFF and data sizes in the header are never filled
    in: everything after the "data" chunk header is taken as samples.
    """
    start = raw.find(b"data")
    if raw[:4] != b"RIFF" or start < 0:
        raise HilbridgeError("MAME's audio file is not a WAV file")
    body = raw[start + 8 :]
    samples = np.frombuffer(body[: len(body) // 4 * 4], dtype="<i2").reshape(-1, 2)
    return samples[:, 0].astype(np.float32) / 32768


FRAME_BYTES = SCREEN_WIDTH * SCREEN_HEIGHT * 4
PIXEL_CHUNK_FRAMES = 8
"""Frames converted at a time: a few MB of buffers, used again for every chunk. A whole run's
temporaries at once (several 100 MB arrays) cost far more in the kernel's page faults than in
the arithmetic."""


def _palette_hash() -> tuple[np.uint32, np.ndarray, np.ndarray]:
    """A multiplier under which the palette's ARGB values have 16 different top bytes (of the
    32-bit product), the palette index of each top byte, and the ARGB value of each index.

    A pixel's top byte names the only palette colour it can be; comparing the pixel with that
    colour then finds every pixel outside the palette (another RGB value or alpha)."""
    colours = np.zeros(len(MAME_PALETTE), dtype=np.uint32)
    for argb, index in MAME_PALETTE.items():
        colours[index] = argb
    for multiplier in range(1, 1 << 16, 2):
        slots = (colours * np.uint32(multiplier)) >> np.uint32(24)
        if len(np.unique(slots)) == len(colours):
            table = np.zeros(256, dtype=np.uint8)
            table[slots] = np.arange(len(colours))
            return np.uint32(multiplier), table, colours
    raise AssertionError("no multiplier separates the palette's colours")


PALETTE_MULTIPLIER, PALETTE_SLOTS, PALETTE_COLOURS = _palette_hash()


def pixels_to_indices(raw: bytes) -> np.ndarray:
    """Raw screen:pixels() frames → array (frames, 243, 360) of palette indices 0–15 (the bytes of
    a pixel file, as `pixel_file_indices` reads one)."""
    return _read_indices(io.BytesIO(raw), len(raw), "pixel data")


def pixel_file_indices(path: Path) -> np.ndarray:
    """`pixels_to_indices` of a pixel file (a run's is up to 100 MB), read without holding it whole."""
    with path.open("rb") as file:
        return _read_indices(file, path.stat().st_size, str(path))


def _read_indices(file: BinaryIO, size: int, name: str) -> np.ndarray:
    """Palette indices of `size` bytes of ARGB frames, read a few frames at a time into buffers used
    again for every chunk (whole, a run's temporaries cost more in fresh memory pages than the
    arithmetic); a pixel with an unknown RGB value or alpha other than FFh is an error naming the
    first such pixel."""
    if size % FRAME_BYTES:
        raise HilbridgeError(f"pixel file is not a whole number of {FRAME_BYTES}-byte frames")
    frames = size // FRAME_BYTES
    indices = np.empty((frames, SCREEN_HEIGHT, SCREEN_WIDTH), dtype=np.uint8)
    buffers = np.empty((3, PIXEL_CHUNK_FRAMES, SCREEN_HEIGHT, SCREEN_WIDTH), dtype=np.uint32)
    for done in range(0, frames, PIXEL_CHUNK_FRAMES):
        count = min(PIXEL_CHUNK_FRAMES, frames - done)
        argb, slots, back = buffers[:, :count]
        chunk_indices = indices[done : done + count]
        if file.readinto(memoryview(argb).cast("B")) != argb.nbytes:
            raise HilbridgeError(f"{name} changed while it was read")
        np.multiply(argb, PALETTE_MULTIPLIER, out=slots)
        slots >>= np.uint32(24)
        np.take(PALETTE_SLOTS, slots, out=chunk_indices)
        np.take(PALETTE_COLOURS, chunk_indices, out=back)
        if not np.array_equal(back, argb):
            frame, line, x = (int(v) for v in np.argwhere(back != argb)[0])
            colour = int(argb[frame, line, x])
            raise HilbridgeError(
                f"pixel {x},{line} of stored frame {done + frame} has colour {colour:08X}, "
                "which is not in MAME's RF palette"
            )
    return indices


@dataclass(slots=True)
class MameRun:
    trace: Trace
    pixels: np.ndarray | None  # (stored frames, 243, 360) palette indices; trace.pixel_frames index it
    wall_seconds: float
    audio: np.ndarray | None = None  # left channel of -wavwrite, float -1…1 at AUDIO_RATE
    from_cache: bool = False  # read from $HILBRIDGE_MAME_CACHE, not run now

    def frame_pixels(self, frame: int) -> np.ndarray:
        if self.pixels is None:
            raise HilbridgeError("this run did not record pixels")
        return self.pixels[self.trace.pixel_frames[frame]]


_SOFTWARE_LIST = """<?xml version="1.0"?>
<!DOCTYPE softwarelist SYSTEM "softwarelist.dtd">
<softwarelist name="videopac" description="hilbridge test cartridges">
  <software name="hilbridge">
    <description>hilbridge test cartridge</description>
    <year>2026</year>
    <publisher>hilbridge</publisher>
    <part name="cart" interface="odyssey_cart">
      <feature name="slot" value="{slot}"/>
      <dataarea name="rom" size="{size}">
        <rom name="cart.bin" size="{size}" offset="0"/>
      </dataarea>
    </part>
  </software>
</softwarelist>
"""


def _layout(work: Path, system: str, bios: bytes, charset: bytes, cart: bytes, slot: str | None) -> list[str]:
    """Write the rompath (and a private software list for `slot`); return the cartridge options."""
    roms = work / "roms"
    for folder in (system, "videopac", "i8244"):
        (roms / folder).mkdir(parents=True, exist_ok=True)
    (roms / system / "o2bios.rom").write_bytes(bios)
    (roms / "i8244" / "charset_i8244.bin").write_bytes(charset)
    if slot is None:
        (work / "cart.bin").write_bytes(cart)
        return ["-rompath", str(roms), "-cart", str(work / "cart.bin")]
    # MAME picks the mapper from the file size alone; any other mapper needs a software list entry.
    (roms / "videopac" / "hilbridge").mkdir(parents=True)
    (roms / "videopac" / "hilbridge" / "cart.bin").write_bytes(cart)
    (work / "hash").mkdir()
    (work / "hash" / "videopac.xml").write_text(_SOFTWARE_LIST.format(slot=slot, size=len(cart)))
    return ["-hashpath", str(work / "hash"), "-rompath", str(roms), "-cart", "hilbridge"]


def mame_slot_for_size(size: int) -> str:
    """The slot type MAME 0.251 gives a plain cartridge file of `size` bytes (mappers.tsv `size_rule`).

    Our mapper names are MAME's slot type names, so the mapper the size rule picks names the slot.
    """
    return registry().for_size(size).name


def run_mame(
    cart: bytes,
    *,
    frames: int,
    region: str = "ntsc",
    charset: bytes | None = None,
    bios: bytes | None = None,
    slot: str | None = None,
    reads: bool = False,
    state: bool = False,
    pixels: bool = False,
    audio: bool = False,
    inputs: InputMovie = NO_INPUT,
    keep_dir: Path | None = None,
    timeout: float = 600.0,
    cache: bool = True,
) -> MameRun:
    """Run `cart` for `frames` frames on MAME and return its parsed trace (and pixel frames).

    `bios` and `charset` default to the project's open BIOS (docs/bios.md; reset and both interrupts
    handed to the cartridge at 400h/402h/404h) and character ROM, the same ones our emulator uses.
    `slot` selects a MAME cartridge type through a private software list; None lets MAME choose
    from the size (the registry's `size_rule`: `mame_slot_for_size`). `keep_dir` keeps trace.txt and
    pixels.argb there; otherwise everything lives in a temporary directory. With `cache` and
    $HILBRIDGE_MAME_CACHE set, a run MAME has made before with the same inputs is read from that
    folder (`hilbridge.oracle.run_cache`; its `wall_seconds` are those of the real run).
    """
    if region not in SYSTEMS:
        raise HilbridgeError(f"unknown region {region!r}; choose one of {', '.join(SYSTEMS)}")
    if frames < 1:
        raise HilbridgeError("frames must be at least 1")
    slots = registry().mame_slots
    if slot is not None and slot not in slots:
        raise HilbridgeError(f"unknown cartridge type {slot!r}; choose one of {', '.join(slots)}")
    bios = default_bios().image if bios is None else bios
    charset = charset_rom() if charset is None else charset
    if len(bios) != ROM_SIZE:
        raise HilbridgeError(f"BIOS must be {ROM_SIZE} bytes, not {len(bios)}")
    if len(charset) != CHARSET_SIZE:
        raise HilbridgeError(f"character ROM must be {CHARSET_SIZE} bytes, not {len(charset)}")
    if not cart:
        raise HilbridgeError("cartridge image is empty")
    mame = find_mame()
    system = SYSTEMS[region]
    # At frame end k, screen:pixels() still holds the picture of frame k - 1: run one more frame
    # and take each frame's picture from the next frame end.
    frames_to_run = frames + 1 if pixels else frames
    outputs = ["trace.txt", *(["pixels.argb"] if pixels else []), *(["audio.wav"] if audio else [])]
    with tempfile.TemporaryDirectory(prefix="hilbridge-mame-") as scratch:
        work = Path(scratch)
        trace_path, pixel_path, wav_path = work / "trace.txt", work / "pixels.argb", work / "audio.wav"
        cart_options = _layout(work, system, bios, charset, cart, slot)
        lua = resources.files(__package__).joinpath("trace.lua")
        with resources.as_file(lua) as lua_path, inputs_lua() as inputs_path:
            command = [
                mame, system, "-noreadconfig", *cart_options,
                "-video", "none", "-sound", "none", "-nothrottle", "-skip_gameinfo", "-nomouse",
                "-cfg_directory", str(work / "cfg"), "-nvram_directory", str(work / "nvram"),
                "-snapshot_directory", str(work / "snap"), "-homepath", str(work),
                "-autoboot_script", str(lua_path), "-autoboot_delay", "0",
                # a safety stop only: the script exits after `frames` frames (PAL runs at 49.7 Hz)
                "-seconds_to_run", str(frames_to_run // 49 + 30),
                *(["-wavwrite", str(wav_path)] if audio else []),
            ]  # fmt: skip
            script_environment = {
                "TRACE_OUT": str(trace_path),
                "TRACE_FRAMES": str(frames_to_run),
                "TRACE_CYCLES_PER_SECOND": str(mame_cycles_per_second(region)),
                "TRACE_READS": "1" if reads else "0",
                "TRACE_STATE": "1" if state else "0",
                "TRACE_PIXELS": str(pixel_path) if pixels else "",
                "TRACE_INPUTS": inputs.mame_changes(),
                "HILBRIDGE_INPUTS_LUA": str(inputs_path),
                "SDL_VIDEODRIVER": "dummy",
            }
            invocation = Invocation(mame, command, script_environment, work, outputs, (lua_path, inputs_path))
            with cache_entry(cache_folder() if cache else None, invocation) as entry:
                if entry.restore():
                    wall = entry.wall_seconds
                else:
                    wall = _run_process(command, work, script_environment, frames, timeout)
                run = _read_outputs(work, frames, pixels, audio, entry)
                entry.store(wall)
        if keep_dir is not None:
            keep_dir.mkdir(parents=True, exist_ok=True)
            for name in outputs:
                shutil.copyfile(work / name, keep_dir / name)
    run.wall_seconds = wall
    run.from_cache = entry.restored
    return run


def _run_process(
    command: list[str], work: Path, environment: dict[str, str], frames: int, timeout: float
) -> float:
    """Run MAME; its wall-clock seconds. A failed run or one that wrote no trace is an error."""
    started = time.perf_counter()
    try:
        finished = subprocess.run(
            command,
            cwd=work,
            env={**os.environ, **environment},
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        raise HilbridgeError(f"MAME did not finish {frames} frames within {timeout:.0f} s") from None
    wall = time.perf_counter() - started
    if finished.returncode != 0 or not (work / "trace.txt").exists():
        detail = " ".join(finished.stderr.split()[-40:])
        raise HilbridgeError(f"MAME exited with status {finished.returncode}: {detail}")
    return wall


PARSED_TRACE = "trace.parsed.npz"
"""The parsed trace kept in a run's cache entry beside its text (`trace.parsed_trace_bytes`)."""


def _read_outputs(work: Path, frames: int, pixels: bool, audio: bool, entry: CacheEntry) -> MameRun:
    """The run from the files MAME wrote in `work` (a short trace is an error, so it is never cached)."""
    trace = read_trace(work / "trace.txt", entry)
    if not trace.complete:
        raise HilbridgeError(f"MAME stopped before {frames} frames (trace has {len(trace.frames)})")
    if pixels:
        trace.pixel_frames = trace.pixel_frames[1:]
        trace.truncate(frames)
    indices = pixel_file_indices(work / "pixels.argb") if pixels else None
    sound = wav_samples((work / "audio.wav").read_bytes()) if audio else None
    return MameRun(trace, indices, 0.0, sound)


@functools.cache
def _parser_identity() -> str:
    """sha256 of the parser's module: a parsed form made by another parser (one since changed) is
    not used, so a change to the parser needs no new runs and no emptied cache."""
    return hashlib.sha256(Path(trace_module.__file__).read_bytes()).hexdigest()


def read_trace(path: Path, entry: CacheEntry) -> Trace:
    """The trace in `path`, taken from the parsed form in the cache `entry` when that was made from
    the same text (its sha256) by the same parser, else parsed and the parsed form kept in `entry`
    for next time: a large trace takes 1-2 s to parse and a fraction of that to load."""
    text = path.read_bytes()
    source = f"{hashlib.sha256(text).hexdigest()} {_parser_identity()}"
    stored = entry.derived(PARSED_TRACE)
    trace = trace_from_parsed(stored, source) if stored is not None else None
    if trace is None:
        trace = parse_trace(text.decode(), str(path))
        if entry.folder is not None:
            parsed = parsed_trace_bytes(trace, source)
            if parsed is not None:
                entry.keep_derived(PARSED_TRACE, parsed)
    return trace


def measure_speed(cart: bytes, *, region: str = "ntsc", frames: int = 3000, slot: str | None = None) -> float:
    """Emulated frames per wall-clock second of MAME tracing writes on `cart` (process start included)."""
    run = run_mame(cart, frames=frames, region=region, slot=slot, cache=False)
    return frames / run.wall_seconds
