"""Dumping a cartridge: detection, at least two verified passes, re-reads, identification, resume.

Every byte is read `passes` times (at least two). Chunks whose passes disagree are re-read; a byte
whose re-reads agree with each other and with one of the passes is *recovered* (a one-off glitch), any
other disagreement makes the address *unstable*. A dump with unstable addresses is not written unless
the user asks for it (`keep_unverified`), and the report says so.

Progress is kept in `OUT.partial` (the raw passes) and `OUT.partial.json` (what is done), both written
atomically, so an interrupted dump (cable pulled, Ctrl-C) resumes where it stopped when run again with
the same output; the survey fingerprint makes sure it is still the same cartridge.
"""

from __future__ import annotations

import json
import time
import zlib
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hilbridge import cartdb
from hilbridge.dumper.detect import Detection, Region, detect
from hilbridge.errors import HilbridgeError
from hilbridge.files import write_atomic
from hilbridge.link.adapter import Adapter
from hilbridge.link.errors import LinkError

STATE_FORMAT = 1
CHUNK_SIZE = 1024
SAVE_INTERVAL = 0.5  # seconds between progress saves
DEFAULT_REREADS = 8


@dataclass(frozen=True, slots=True)
class Chunk:
    region: Region
    start: int  # within the region
    length: int

    @property
    def offset(self) -> int:
        return self.region.offset + self.start


@dataclass(slots=True)
class DumpResult:
    detection: Detection
    image: bytes
    output: Path | None
    verified: bool
    written: bool
    resumed: bool
    unstable: dict[int, list[int]] = field(default_factory=dict)  # image offset → values seen
    recovered: list[int] = field(default_factory=list)
    matches: list[cartdb.Match] = field(default_factory=list)
    reads: int = 0
    seconds: float = 0.0
    link: dict[str, int] = field(default_factory=dict)  # retransmits, damaged frames, timeouts of the link

    @property
    def crc32(self) -> str:
        return f"{zlib.crc32(self.image):08x}"

    def report(self) -> dict[str, Any]:
        """The result as JSON-ready data (`hilbridge dump --json`)."""
        sums = cartdb.checksums(self.image)
        return {
            "mapper": self.detection.mapper,
            "size": len(self.image),
            "reasons": self.detection.reasons,
            "crc32": sums.crc32,
            "sha1": sums.sha1,
            "identified": [
                {"name": m.cartridge.name, "description": m.cartridge.description, "exact": m.exact}
                for m in self.matches
            ],
            "verified": self.verified,
            "written": self.written,
            "output": str(self.output) if self.output else None,
            "resumed": self.resumed,
            "unstable": {f"0x{offset:04x}": values for offset, values in sorted(self.unstable.items())},
            "recovered": [f"0x{offset:04x}" for offset in self.recovered],
            "link": self.link,
            "seconds": round(self.seconds, 3),
        }


def chunks_of(detection: Detection, size: int = CHUNK_SIZE) -> list[Chunk]:
    return [
        Chunk(region, start, min(size, region.length - start))
        for region in detection.regions
        for start in range(0, region.length, size)
    ]


class _Reader:
    """Reads chunks, writing a region's bank latch first when it needs one that is not set."""

    def __init__(self, adapter: Adapter):
        self.adapter = adapter
        self.latch: int | None = None
        self.reads = 0

    def read(self, chunk: Chunk) -> bytes:
        region = chunk.region
        self._select(region)
        self.reads += 1
        return self.adapter.read(
            region.address + chunk.start, chunk.length, p1=region.p1, p2=region.p2, strobe=region.strobe
        )

    def read_repeated(self, chunk: Chunk, count: int) -> list[bytes]:
        """`count` fresh reads of one chunk, several per request where the link allows."""
        region = chunk.region
        self._select(region)
        self.reads += count
        return self.adapter.read_repeated(
            region.address + chunk.start,
            chunk.length,
            count,
            p1=region.p1,
            p2=region.p2,
            strobe=region.strobe,
        )

    def _select(self, region: Region) -> None:
        """Write the region's bank latch first when it needs one that is not set."""
        if region.latch is not None and region.latch != self.latch:
            from hilbridge.dumper.detect import LATCH_ADDRESS, LATCH_WRITE_P1

            self.adapter.write(LATCH_ADDRESS, region.latch, p1=LATCH_WRITE_P1)
            self.latch = region.latch


class _Progress:
    """The partial-dump files: raw passes and a JSON record of which chunks are done."""

    def __init__(self, base: Path, detection: Detection, passes: int, chunk_count: int):
        self.data_path = base.with_name(base.name + ".partial")
        self.state_path = base.with_name(base.name + ".partial.json")
        self.identity = {
            "format": STATE_FORMAT,
            "mapper": detection.mapper,
            "size": detection.size,
            "fingerprint": detection.fingerprint,
            "passes": passes,
            "chunk_size": CHUNK_SIZE,
        }
        self.buffers = [bytearray(detection.size) for _ in range(passes)]
        self.done: list[set[int]] = [set() for _ in range(passes)]
        self.chunk_count = chunk_count
        self.resumed = False
        self._saved_at = time.monotonic()

    def load(self) -> str | None:
        """Resume from the files if they belong to this dump; returns why they were ignored, if so."""
        if not self.state_path.exists():
            return None
        try:
            state = json.loads(self.state_path.read_text(encoding="utf-8"))
            data = self.data_path.read_bytes()
        except (OSError, ValueError):
            return "the partial dump files are unreadable; starting over"
        if {key: state.get(key) for key in self.identity} != self.identity:
            return "the partial dump belongs to another cartridge or other settings; starting over"
        size = self.identity["size"]
        if len(data) != size * len(self.buffers):
            return "the partial dump data has the wrong size; starting over"
        for number, buffer in enumerate(self.buffers):
            buffer[:] = data[number * size : (number + 1) * size]
            self.done[number] = {int(index) for index in state["done"][number]}
        self.resumed = True
        return None

    def save(self, force: bool = False) -> None:
        if not force and time.monotonic() - self._saved_at < SAVE_INTERVAL:
            return
        write_atomic(self.data_path, b"".join(self.buffers))
        state = {**self.identity, "done": [sorted(done) for done in self.done]}
        write_atomic(self.state_path, json.dumps(state).encode("utf-8"))
        self._saved_at = time.monotonic()

    def remove(self) -> None:
        self.data_path.unlink(missing_ok=True)
        self.state_path.unlink(missing_ok=True)

    @property
    def remaining_bytes(self) -> int:
        return sum(self.chunk_count - len(done) for done in self.done)


def output_name(matches: list[cartdb.Match], image: bytes) -> str:
    """The list's file name for an identified cartridge (e.g. vp_41.bin), `unknown-<crc32>.bin` otherwise."""
    exact = [match for match in matches if match.exact]
    if exact:
        return exact[0].cartridge.file_name
    return f"unknown-{zlib.crc32(image):08x}.bin"


def _free_name(target: Path, image: bytes, replace: bool) -> Path:
    """`target`, or `stem-2.bin`, `stem-3.bin`... when it holds other bytes and may not be replaced."""
    candidate, number = target, 1
    while not replace and candidate.exists() and candidate.read_bytes() != image:
        number += 1
        candidate = target.with_name(f"{target.stem}-{number}{target.suffix}")
    return candidate


def dump_cartridge(
    adapter: Adapter,
    output: str | Path | None = None,
    *,
    mapper: str | None = None,
    passes: int = 2,
    rereads: int = DEFAULT_REREADS,
    keep_unverified: bool = False,
    replace: bool = False,
    directory: str | Path = ".",
    progress: Callable[[int, int], None] | None = None,
    notice: Callable[[str], None] | None = None,
) -> DumpResult:
    """Dump the cartridge in the adapter's slot; `progress(done_bytes, total_bytes)` is called as it goes.

    Without `output` the file is named after the identified cartridge in `directory`; a file of that
    name holding other bytes is kept (unless `replace`) and the dump goes to the first free NAME-N.
    """
    if passes < 2:
        raise HilbridgeError("a dump needs at least two passes to be verified", hint="use --passes 2 or more")
    started = time.monotonic()
    try:
        detection = detect(adapter, mapper)
    except LinkError as error:
        raise LinkError(
            f"dump interrupted while detecting the cartridge type: {error.message}",
            hint="nothing was read yet; check the connection and run the same command again",
        ) from None
    chunks = chunks_of(detection)
    folder = Path(directory)
    base = Path(output) if output else folder / f"hilbridge-dump-{detection.fingerprint}"
    state = _Progress(base, detection, passes, len(chunks))
    reason = state.load()
    reader = _Reader(adapter)
    if state.resumed:
        try:
            mismatch = _check_resumed(reader, chunks, state)
        except LinkError as error:
            raise LinkError(
                f"dump interrupted while checking the partial dump: {error.message}",
                hint=f"progress is kept in {state.data_path}; run the same command again to resume",
            ) from None
        if mismatch is not None:
            reason = (
                f"the partial dump does not match the cartridge in the slot at image offset "
                f"0x{mismatch:04x}; starting over"
            )
            state = _Progress(base, detection, passes, len(chunks))
    if reason and notice:
        notice(reason)
    total = sum(chunk.length for chunk in chunks) * passes
    done_bytes = sum(chunks[i].length for done in state.done for i in done)
    if progress:
        progress(done_bytes, total)
    try:
        for number in range(passes):
            for index, chunk in enumerate(chunks):
                if index in state.done[number]:
                    continue
                state.buffers[number][chunk.offset : chunk.offset + chunk.length] = reader.read(chunk)
                state.done[number].add(index)
                done_bytes += chunk.length
                if progress:
                    progress(done_bytes, total)
                state.save()
    except LinkError as error:
        state.save(force=True)
        raise LinkError(
            f"dump interrupted: {error.message}",
            hint=f"progress is saved in {state.data_path}; run the same command again to resume",
        ) from None
    except BaseException:
        state.save(force=True)
        raise
    image, unstable, recovered = _verify(reader, chunks, state.buffers, rereads)
    matches = cartdb.identify(image)
    target = Path(output) if output else _free_name(folder / output_name(matches, image), image, replace)
    verified = not unstable
    written = verified or keep_unverified
    if written:
        write_atomic(target, image)
    state.remove()
    return DumpResult(
        detection=detection,
        image=image,
        output=target if written else None,
        verified=verified,
        written=written,
        resumed=state.resumed,
        unstable=unstable,
        recovered=recovered,
        matches=matches,
        reads=reader.reads,
        seconds=time.monotonic() - started,
        link=_link_report(adapter),
    )


def _link_report(adapter: Adapter) -> dict[str, int]:
    """How hard the link had to work: requests sent again, damaged frames dropped, replies waited out."""
    stats = adapter.link.stats
    return {
        "requests": stats.requests,
        "retransmits": stats.retransmits,
        "bad_frames": stats.bad_frames,
        "timeouts": stats.timeouts,
    }


def _check_resumed(reader: _Reader, chunks: list[Chunk], state: _Progress) -> int | None:
    """Read every resumed chunk once from the slot; the image offset of the first mismatch, if any.

    The survey fingerprint only covers the banks P1 selects, so a cartridge that differs from the
    interrupted one in another bank would pass it; this check covers every bank and page. The fresh
    read counts as the chunk's next pass where one is missing, so it only costs a read for chunks
    whose passes were all done before the interruption.
    """
    for index, chunk in enumerate(chunks):
        stored = [number for number, done in enumerate(state.done) if index in done]
        if not stored:
            continue
        span = slice(chunk.offset, chunk.offset + chunk.length)
        fresh = reader.read(chunk)
        if all(bytes(state.buffers[number][span]) != fresh for number in stored):
            mismatch = next(
                position
                for position in range(chunk.length)
                if all(state.buffers[number][chunk.offset + position] != fresh[position] for number in stored)
            )
            return chunk.offset + mismatch
        missing = [number for number in range(len(state.done)) if index not in state.done[number]]
        if missing:
            state.buffers[missing[0]][span] = fresh
            state.done[missing[0]].add(index)
    return None


def _verify(
    reader: _Reader, chunks: list[Chunk], buffers: list[bytearray], rereads: int
) -> tuple[bytes, dict[int, list[int]], list[int]]:
    """Merge the passes: re-read chunks that disagree; classify bytes as recovered or unstable."""
    image = bytearray(buffers[0])
    unstable: dict[int, list[int]] = {}
    recovered: list[int] = []
    for chunk in chunks:
        span = slice(chunk.offset, chunk.offset + chunk.length)
        reads = [bytes(buffer[span]) for buffer in buffers]
        if all(read == reads[0] for read in reads[1:]):
            continue
        extra = reader.read_repeated(chunk, rereads)
        for position in range(chunk.length):
            first = [read[position] for read in reads]
            again = [read[position] for read in extra]
            offset = chunk.offset + position
            if len(set(first)) == 1 and len(set(again)) == 1 and again[0] == first[0]:
                continue
            if len(set(again)) == 1 and again[0] in first:
                recovered.append(offset)
                image[offset] = again[0]
            else:
                values = first + again
                unstable[offset] = sorted(set(values))
                image[offset] = Counter(values).most_common(1)[0][0]
    return bytes(image), unstable, recovered
