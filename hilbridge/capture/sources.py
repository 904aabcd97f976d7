"""Capture sources for every device, and `open_capture`, which maps a device name to one.

| device | source |
|---|---|
| `sim`, `sim?...` | `AdapterSource` on the simulated adapter (its console: our emulator) |
| `usb`, `usb:SERIAL`, `/dev/ttyACM0`, `socket://...`, `rfc2217://...` | `AdapterSource` on a real adapter |
| `mame` | `MameSource`: MAME 0.251 runs the cartridge, its Lua tracer writes the capture items |
| `run.hbcap` (a path) | `CaptureReader` |

Every source ends its items with a `Gap` when it knows records are missing (chunks lost on the link,
records dropped by the adapter, a device that stopped streaming), so a consumer never takes missing
data for agreement.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from hilbridge.capture.file import SUFFIX, CaptureReader
from hilbridge.capture.stream import (
    BatchItem,
    BatchStream,
    CaptureHeader,
    CaptureItem,
    CaptureSource,
    FrameSync,
    Gap,
    RecordBatch,
    ResetDetected,
    source_batches,
)
from hilbridge.errors import HilbridgeError
from hilbridge.link.adapter import Adapter
from hilbridge.link.errors import LinkError
from hilbridge.link.protocol import CAPTURE_KINDS, MESSAGES
from hilbridge.machine.bios import default_bios
from hilbridge.machine.bus import FETCH, READ, WRITE, BusAccess
from hilbridge.machine.cartridge import CART_P1_MASK, Cartridge, load_cartridge, read_cartridge
from hilbridge.machine.console import Console
from hilbridge.machine.inputs import NO_INPUT, InputMovie, read_input_movie
from hilbridge.machine.timing import REGIONS

ALL_KINDS = ("FETCH", "MOVX_READ", "MOVX_WRITE", "P1")
KIND_NAMES = {value: name for name, value in CAPTURE_KINDS.items()}
POLL_SECONDS = 0.05
STATUS_SECONDS = 1.0  # how often a live capture asks the adapter for its dropped-record counter
IDLE_SECONDS = 3.0  # a device silent for this long has stopped streaming
RESET_ADDRESS, VSYNC_HOOK = 0x400, 0x406
CartLike = Cartridge | bytes | str | os.PathLike[str]
MovieLike = InputMovie | str | os.PathLike[str]


class CycleUnwrapper:
    """Full cycle counts from the protocol's u32 stamps, which wrap at 2³² (stamps come in bus order)."""

    def __init__(self) -> None:
        self.high = 0
        self.last = 0

    def __call__(self, low: int) -> int:
        full = self.high | low
        if full < self.last and self.last - full > 1 << 31:
            self.high += 1 << 32
            full = self.high | low
        self.last = full
        return full


@dataclass(slots=True)
class _Progress:
    next_chunk: int = 0
    dropped_seen: int = 0
    stopped_streaming: bool = False


class AdapterSource(BatchStream):
    """A live capture from an adapter (real or simulated): sniffing the slot, or serving `serve`.

    Serving uploads the image and switches emulation on before the capture, and off again at the
    end. The capture stops after `frames` frames (`FrameLimit` says how they are counted) or
    `seconds` seconds, or when the device falls silent.
    """

    def __init__(
        self,
        adapter: Adapter,
        *,
        frames: int | None = None,
        seconds: float | None = None,
        kinds: tuple[str, ...] = ALL_KINDS,
        serve: Cartridge | None = None,
        header: CaptureHeader | None = None,
        idle_seconds: float = IDLE_SECONDS,
        close_adapter: bool = True,
    ):
        self.adapter = adapter
        self.frames = frames
        self.seconds = seconds
        self.kinds = kinds
        self.serving = serve
        self.idle_seconds = idle_seconds
        self.close_adapter = close_adapter
        self.end_message = ""
        self.totals: dict[str, int] = {}
        info = adapter.info
        described = (
            f"{adapter.name} (board {info.board_id:#06x}, firmware {info.firmware} "
            f"[{adapter.firmware_info()}], serial {info.serial})"
        )
        base = header or CaptureHeader(source="adapter")
        if serve is not None:
            base = replace(base, cart_sha1=hashlib.sha1(serve.image).hexdigest(), mapper=serve.mapper)
        self._header = replace(base, adapter=described, kinds=tuple(kinds))
        self._running = False
        self._emulating = False

    def _start(self) -> None:
        if self.serving is not None:
            self.adapter.upload(self.serving.image, self.serving.mapper)
            self.adapter.emulation(True)
            self._emulating = True
        self.adapter.capture_start(self.kinds)
        self._running = True

    def _stop(self) -> dict[str, int]:
        """Stop the capture (if running) and switch emulation off (if this source switched it on)."""
        running, self._running = self._running, False
        try:
            return self.adapter.capture_stop() if running else {}
        finally:
            if self._emulating:
                self._emulating = False
                self.adapter.emulation(False)

    def batches(self) -> Iterator[BatchItem]:
        self._start()
        progress = _Progress()
        yield from self._stream(progress)
        try:
            self.totals = self._stop()
        except LinkError as error:
            if not progress.stopped_streaming:
                raise
            self.end_message += f"; stopping the capture failed too ({error.message})"
            return
        yield from self._final_gaps(progress.dropped_seen)

    def _stream(self, progress: _Progress) -> Iterator[BatchItem]:
        unwrap = CycleUnwrapper()
        limit = FrameLimit(self._header, self.frames) if self.frames is not None else None
        started = last_event = last_status = time.monotonic()
        while True:
            try:
                events = self.adapter.capture_events(POLL_SECONDS)
            except LinkError as error:
                yield self._stopped(progress, f"the link failed ({error.message})")
                return
            now = time.monotonic()
            if events:
                last_event = now
            for item in self._decode(events, progress, unwrap):
                if limit is not None and not limit.before_end(item):
                    self.end_message = f"captured {self.frames} frames"
                    return
                if limit is not None and type(item) is RecordBatch:
                    kept = limit.trimmed(item)
                    if len(kept) < len(item):
                        if len(kept):
                            yield kept
                        self.end_message = f"captured {self.frames} frames"
                        return
                yield item
                if limit is not None and limit.ends_with(item):
                    self.end_message = f"captured {self.frames} frames"
                    return
            if self.seconds is not None and now - started >= self.seconds:
                self.end_message = f"captured {self.seconds:g} s"
                return
            if now - last_event >= self.idle_seconds:
                yield self._stopped(progress, f"nothing for {self.idle_seconds:g} s")
                return
            if now - last_status >= STATUS_SECONDS:
                last_status = now
                try:
                    dropped = self.adapter.status()["capture_dropped"]
                except LinkError as error:
                    yield self._stopped(progress, f"the adapter does not answer ({error.message})")
                    return
                if dropped > progress.dropped_seen:
                    yield _dropped_gap(dropped - progress.dropped_seen)
                    progress.dropped_seen = dropped

    def _stopped(self, progress: _Progress, why: str) -> Gap:
        self.end_message = f"{self.adapter.name}: the device stopped streaming ({why}); the capture ends here"
        progress.stopped_streaming = True
        return Gap(f"the device stopped streaming: {why}")

    @staticmethod
    def _decode(
        events: list[tuple[str, dict[str, Any]]], progress: _Progress, unwrap: CycleUnwrapper
    ) -> Iterator[BatchItem]:
        for name, fields in events:
            if name == "CAPTURE_CHUNK":
                lost = fields["chunk_seq"] - progress.next_chunk
                if lost > 0:
                    yield Gap(f"{lost} capture chunk(s) lost on the link", chunks=lost)
                progress.next_chunk = fields["chunk_seq"] + 1
                batch = _unwrapped_batch(fields, unwrap)
                if len(batch):
                    yield batch
            elif name == "RESET_DETECTED":
                yield ResetDetected(unwrap(fields["cycle"]))
            elif name == "FRAME_SYNC":
                yield FrameSync(fields["frame"], unwrap(fields["cycle"]))

    def _final_gaps(self, dropped_seen: int) -> Iterator[Gap]:
        """Records the stop reply says the adapter dropped since the last status (their place is
        unknown, so the gap stands at the end; chunks sent after the stop point are not missing)."""
        if self.totals and self.totals["dropped"] > dropped_seen:
            yield _dropped_gap(self.totals["dropped"] - dropped_seen)

    def close(self) -> None:
        try:
            self._stop()
        except LinkError:
            pass  # the device is gone; closing must not hide the error that ended the capture
        finally:
            if self.close_adapter:
                self.adapter.close()


def _unwrapped_batch(chunk: dict[str, Any], unwrap: CycleUnwrapper) -> RecordBatch:
    """The records of a CAPTURE_CHUNK's fields with full cycles; one unwrap per chunk unless the u32
    wraps inside it (a chunk spans far less than 2³¹ cycles, so comparing its first and last stamp
    tells)."""
    batch = RecordBatch.from_wire(chunk["records"], chunk["cycle"], chunk["p1"])
    if not len(batch):
        return batch
    cycles = batch.rows["cycle"]
    first, last = int(cycles[0]), int(cycles[-1])
    high = unwrap(first) - first
    before_last = unwrap.high, unwrap.last
    if unwrap(last) - last != high:  # wrapped inside this chunk: go record by record
        unwrap.high, unwrap.last = before_last
        cycles[:] = [high | first] + [unwrap(low) for low in cycles[1:].tolist()]
    elif high:
        cycles += high
    return batch


class ConsoleSource(BatchStream):
    """Our emulator's bus as a capture, straight from its bus listener: the items the simulated
    adapter's capture gives (`sim`), without the protocol in between (for a caller's own console).

    `console` may be given (a console set up by the caller, e.g. with a deviation built in); it must
    be at power-on. Without `frames` it runs until the consumer stops.
    """

    def __init__(
        self,
        cart: Cartridge,
        *,
        frames: int | None = None,
        region: str = "ntsc",
        movie: InputMovie = NO_INPUT,
        kinds: tuple[str, ...] = ALL_KINDS,
        console: Console | None = None,
    ):
        self.console = console or Console(
            load_cartridge(cart.image, cart.mapper, name=cart.name), region=region
        )
        self.frames = frames
        self.movie = movie
        self.kinds = frozenset(kinds)
        self._header = CaptureHeader(
            source="emulator",
            cart_sha1=hashlib.sha1(cart.image).hexdigest(),
            mapper=cart.mapper,
            region=self.console.region.name,
            bios=self.console.bios.name,
            kinds=tuple(kinds),
            inputs=movie.text,
            ends_on_frame=True,
        )

    def batches(self) -> Iterator[BatchItem]:
        console = self.console
        wanted = {CAPTURE_KINDS[name] for name in self.kinds}
        watch_p1 = CAPTURE_KINDS["P1"] in wanted
        pending = FramePending()
        record = pending.records.append
        p1_bits = console.p1 & CART_P1_MASK
        syncs = 0
        codes = {
            FETCH: CAPTURE_KINDS["FETCH"],
            READ: CAPTURE_KINDS["MOVX_READ"],
            WRITE: CAPTURE_KINDS["MOVX_WRITE"],
        }

        def listen(access: BusAccess) -> None:
            nonlocal p1_bits, syncs
            cycle, kind, address, value, p1 = access
            if p1 & CART_P1_MASK != p1_bits:
                p1_bits = p1 & CART_P1_MASK
                if watch_p1:
                    record((cycle, CAPTURE_KINDS["P1"], 0, p1_bits, p1))
            code = codes[kind]
            if code in wanted:
                record((cycle, code, address, value, p1))
            if kind == FETCH and address == RESET_ADDRESS:
                pending.marker(ResetDetected(cycle))
            elif kind == FETCH and address == VSYNC_HOOK:
                pending.marker(FrameSync(syncs, cycle))
                syncs += 1

        console.add_bus_listener(listen, fetches=True)
        end = console.frame_end_cycle(self.frames - 1) if self.frames is not None else None
        try:
            while self.frames is None or console.frame < self.frames:
                self.movie.apply(console, console.frame)
                console.run_frames(1)
                done = pending.take()
                if end is not None and done and pending.last_cycle >= end:
                    yield from before(done, end)
                    return
                yield from done
        finally:
            console.remove_bus_listener(listen)

    def close(self) -> None:
        pass


class FramePending:
    """What an emulator's bus listener collected in one frame: runs of record tuples, and markers."""

    def __init__(self) -> None:
        self.records: list[tuple[int, int, int, int, int]] = []
        self.items: list[BatchItem] = []
        self.last_cycle = -1

    def marker(self, item: ResetDetected | FrameSync) -> None:
        self._close_run()
        self.items.append(item)
        self.last_cycle = item.cycle

    def _close_run(self) -> None:
        if self.records:
            self.last_cycle = max(self.last_cycle, self.records[-1][0])
            self.items.append(RecordBatch.from_tuples(self.records))
            self.records.clear()

    def take(self) -> list[BatchItem]:
        self._close_run()
        done, self.items = self.items, []
        return done


def before(items: list[BatchItem], end: int) -> Iterator[BatchItem]:
    """The items (and records of batches) stamped before cycle `end`."""
    for item in items:
        if type(item) is RecordBatch:
            kept = item.until(end)
            if len(kept):
                yield kept
        elif isinstance(item, ResetDetected | FrameSync) and item.cycle < end:
            yield item


EVENT_CHUNK, EVENT_RESET, EVENT_SYNC = (
    MESSAGES[name].id for name in ("CAPTURE_CHUNK", "RESET_DETECTED", "FRAME_SYNC")
)


def event_batches(events: Iterable[tuple[int, bytes]]) -> Iterator[BatchItem]:
    """Adapter event frames (frame type, payload), as the simulated adapter's `CaptureStream` makes
    them, decoded into batches without the link (stamps stay u32: the check unwraps them)."""
    for frame_type, payload in events:
        if frame_type == EVENT_CHUNK:
            chunk = MESSAGES["CAPTURE_CHUNK"].response_layout.unpack(payload, "CAPTURE_CHUNK")
            if chunk["records"]:
                yield RecordBatch.from_wire(chunk["records"], chunk["cycle"], chunk["p1"])
        elif frame_type == EVENT_RESET:
            yield ResetDetected(int.from_bytes(payload[:4], "little"))
        elif frame_type == EVENT_SYNC:
            yield FrameSync(int.from_bytes(payload[:4], "little"), int.from_bytes(payload[4:8], "little"))


class EventFrameSource(BatchStream):
    """A capture source over adapter event frames (recorded, or produced live by a simulated console)."""

    def __init__(self, header: CaptureHeader, events: Iterable[tuple[int, bytes]]) -> None:
        self._header = header
        self.events = events

    def batches(self) -> Iterator[BatchItem]:
        return event_batches(self.events)

    def close(self) -> None:
        """Nothing to release: the events are in memory or produced on demand."""


def _dropped_gap(records: int) -> Gap:
    return Gap(f"the adapter dropped {records} record(s): the host did not keep up", records=records)


def cartridge_of(cart: CartLike) -> Cartridge:
    if isinstance(cart, Cartridge):
        return cart
    if isinstance(cart, bytes | bytearray):
        return load_cartridge(bytes(cart))
    return read_cartridge(cart)


def movie_of(inputs: MovieLike | None) -> InputMovie:
    if inputs is None:
        return NO_INPUT
    if isinstance(inputs, InputMovie):
        return inputs
    return read_input_movie(os.fspath(inputs))


def is_capture_path(device: str) -> bool:
    return device.endswith(SUFFIX) or Path(device).is_file()


def open_capture(
    device: str,
    cart: CartLike | None = None,
    *,
    frames: int | None = None,
    seconds: float | None = None,
    region: str = "ntsc",
    inputs: MovieLike | None = None,
    serve: bool = False,
    kinds: tuple[str, ...] = ALL_KINDS,
    warn: Callable[[str], None] | None = None,
) -> CaptureSource:
    """The capture source `device` names (module table), set up to run `cart` where it can.

    - `sim`: the simulated console runs `cart` (in its slot, or served with `serve`), in `region`,
      playing `inputs`;
    - `mame`: MAME runs `cart` in `region` with `inputs` (needs `frames` or `seconds`);
    - a `.hbcap` path: the file; given `cart`, a capture of another cartridge is refused;
    - a real adapter: sniffs the slot, or serves `cart` with `serve`; it cannot press keys, so
      `inputs` is refused and the header says the capture is input-free.
    """
    if region not in REGIONS:
        raise HilbridgeError(f"unknown region {region!r} (choose {', '.join(REGIONS)})")
    if frames is not None and frames < 1:
        raise HilbridgeError("--frames must be at least 1")
    if seconds is not None and seconds <= 0:
        raise HilbridgeError("--seconds must be positive")
    cartridge = cartridge_of(cart) if cart is not None else None
    movie = movie_of(inputs)
    if device == "mame" or device.startswith("mame?"):
        from hilbridge.capture.mame import MameSource

        if cartridge is None:
            raise HilbridgeError("the mame device needs a cartridge to run", hint="--serve CART")
        return MameSource(
            cartridge, frames=frames, seconds=seconds, region=region, movie=movie, kinds=kinds, options=device
        )
    if device == "sim" or device.startswith("sim?"):
        return _sim_source(device, cartridge, frames, seconds, region, movie, serve, kinds)
    if is_capture_path(device):
        expected = hashlib.sha1(cartridge.image).hexdigest() if cartridge is not None else None
        reader = CaptureReader(device, expected_sha1=expected, warn=warn)
        if frames is None:
            return reader
        return LimitedSource(reader, frames)
    if movie:
        raise HilbridgeError(
            f"{device}: a real console's keyboard and joysticks are not on the cartridge slot",
            hint="drop --input: a capture from an adapter is input-free",
        )
    if serve and cartridge is None:
        raise HilbridgeError("--serve needs a cartridge image")
    from hilbridge.link.discovery import open_adapter

    adapter = open_adapter(device)
    served = cartridge if serve else None
    header = CaptureHeader(
        source="adapter",
        region=region,
        notes=("input-free: the console's keyboard and joysticks are not on the slot",),
        fetches="compressed",  # the firmware's sniff decoder leaves sequential fetches out
    )
    return AdapterSource(adapter, frames=frames, seconds=seconds, kinds=kinds, serve=served, header=header)


def _sim_source(
    device: str,
    cartridge: Cartridge | None,
    frames: int | None,
    seconds: float | None,
    region: str,
    movie: InputMovie,
    serve: bool,
    kinds: tuple[str, ...],
) -> AdapterSource:
    """The simulated adapter with `cartridge` in its slot (or served), its console in `region`."""
    from hilbridge.link.transport import InProcessTransport
    from hilbridge.sim import build_device, deviation_factory, parse_options
    from hilbridge.sim.device import ConsoleSetup
    from hilbridge.sim.faults import FaultPlan, FaultyEndpoint

    options = parse_options(device.partition("?")[2])
    if "region" in options and options["region"] != region:
        region = options["region"]
        if region not in REGIONS:
            raise HilbridgeError(f"unknown simulator region {region!r}", hint=", ".join(REGIONS))
    if options.get("input"):
        if movie:
            raise HilbridgeError("two input movies: give either sim?input= or --input")
        movie = read_input_movie(options["input"])
    plan = FaultPlan.parse(options.get("faults", ""))
    setup = ConsoleSetup(region, movie)
    slot_cart = options.get("cart")
    simulated = build_device(
        slot_cart, options.get("type"), None, plan, options.get("serial", "SIM-0001"), setup
    )
    if cartridge is not None and not serve and slot_cart is None:
        simulated.cartridge = cartridge
    simulated.console_factory = deviation_factory(options)
    endpoint: Any = FaultyEndpoint(simulated, plan) if plan.active else simulated
    adapter = Adapter(InProcessTransport(endpoint, name="sim"))
    in_slot = simulated.cartridge
    shown = cartridge if serve else in_slot
    header = CaptureHeader(
        source="sim",
        cart_sha1=hashlib.sha1(shown.image).hexdigest() if shown is not None else "",
        mapper=shown.mapper if shown is not None else "",
        region=region,
        bios=default_bios().name,
        inputs=movie.text,
        ends_on_frame=frames is not None,  # --seconds and Ctrl-C stop on the wall clock, inside a frame
    )
    if serve and cartridge is None:
        raise HilbridgeError("--serve needs a cartridge image")
    served = cartridge if serve else None
    return AdapterSource(adapter, frames=frames, seconds=seconds, kinds=kinds, serve=served, header=header)


CONSOLE_TIMED = ("sim", "mame", "emulator")  # consoles that start at power-on with known frame timing


class FrameLimit:
    """Where a capture of `frames` frames ends.

    For the simulated console and MAME (`CONSOLE_TIMED`) a frame is the console's own frame, ending
    where MAME's frame callback fires: items stamped at or after the end of frame `frames - 1` are left
    out. Any other source counts frame syncs (fetches of 0406h): the items end with the frame sync
    that starts frame `frames`. (The fixture carts never fetch 0406h: their captures need console
    timing or --seconds.)
    """

    def __init__(self, header: CaptureHeader, frames: int):
        self.frames = frames
        self.end_cycle: int | None = None
        if header.source in CONSOLE_TIMED:
            from hilbridge.machine.vdc import Vdc

            self.end_cycle = Vdc(REGIONS[header.region]).frame_end_cycle(frames - 1)
        self.syncs = 0

    def before_end(self, item: CaptureItem | BatchItem) -> bool:
        """False when `item` lies past the end (leave it out and stop); a batch is before the end
        when its first record is (`trimmed` cuts it)."""
        if self.end_cycle is None or isinstance(item, Gap):
            return True
        if type(item) is RecordBatch:
            return not len(item) or int(item.rows["cycle"][0]) < self.end_cycle
        return item.cycle < self.end_cycle

    def trimmed(self, batch: RecordBatch) -> RecordBatch:
        """The records of `batch` before the end (fewer than all of them: the end is inside it)."""
        return batch if self.end_cycle is None else batch.until(self.end_cycle)

    def ends_with(self, item: CaptureItem | BatchItem) -> bool:
        """True when `item` (already yielded) is the last one."""
        if self.end_cycle is None and isinstance(item, FrameSync):
            self.syncs += 1
            return self.syncs > self.frames
        return False


class LimitedSource(BatchStream):
    """The first `frames` frames of another source (see `FrameLimit`)."""

    def __init__(self, source: CaptureSource, frames: int):
        self.source = source
        self.frames = frames
        timed = source.header.source in CONSOLE_TIMED
        self._header = replace(source.header, ends_on_frame=timed or source.header.ends_on_frame)
        self.limit = FrameLimit(source.header, frames)

    def batches(self) -> Iterator[BatchItem]:
        for item in source_batches(self.source):
            if not self.limit.before_end(item):
                return
            if type(item) is RecordBatch:
                kept = self.limit.trimmed(item)
                if len(kept) < len(item):
                    if len(kept):
                        yield kept
                    return
            yield item
            if self.limit.ends_with(item):
                return
        if self._header.ends_on_frame and not self.source.header.ends_on_frame:
            # the limit would have ended on a frame end, but the capture stopped first, inside a frame
            yield Gap(f"the capture stopped before the end of frame {self.frames - 1}")

    def close(self) -> None:
        self.source.close()
