"""Capture sources for the check: a device (real or simulated adapter) streaming its bus capture.

`AdapterCapture` turns an adapter's CAPTURE_CHUNK / RESET_DETECTED / FRAME_SYNC events into capture
items: lost chunks (a gap in `chunk_seq`, or chunks the adapter says it dropped) become a `Gap`, and
a device that goes quiet ends the stream with one, so missing data can never look like agreement.
The cartridge is served (uploaded and emulated by the adapter) so that the console runs exactly
the image the emulator runs.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterator

from hilbridge.capture.stream import CaptureHeader, CaptureItem, FrameSync, Gap, ResetDetected
from hilbridge.link.adapter import Adapter, capture_records
from hilbridge.link.discovery import open_adapter
from hilbridge.machine.cartridge import Cartridge

DEFAULT_KINDS = ("FETCH", "MOVX_WRITE", "MOVX_READ", "P1")
STALL_SECONDS = 3.0  # no capture event for this long: the device stopped streaming
POLL_SECONDS = 0.05
STATUS_SECONDS = 2.0  # how often the adapter's count of dropped records is read


class AdapterCapture:
    """An adapter's bus capture while it serves `cart` to the console, as a `CaptureSource`."""

    def __init__(
        self,
        device: str,
        cart: Cartridge,
        *,
        kinds: tuple[str, ...] = DEFAULT_KINDS,
        region: str = "ntsc",
        stall_seconds: float = STALL_SECONDS,
    ) -> None:
        self.device = device
        self.stall_seconds = stall_seconds
        self.adapter: Adapter = open_adapter(device)
        try:
            self.adapter.upload(cart.image, cart.mapper)
            self.adapter.emulation(True)
            self.adapter.capture_start(kinds)
        except BaseException:
            self.adapter.close()
            raise
        info = self.adapter.info
        simulated = device == "sim" or device.startswith("sim?")
        self._header = CaptureHeader(
            source="sim" if simulated else "adapter",
            adapter=f"{self.adapter.name} {info.serial} firmware {info.firmware}",
            cart_sha1=hashlib.sha1(cart.image).hexdigest(),
            mapper=cart.mapper,
            region=region,
            kinds=kinds,
        )
        self._open = True

    @property
    def header(self) -> CaptureHeader:
        return self._header

    def items(self) -> Iterator[CaptureItem]:
        expected_seq = 0
        dropped = 0
        quiet_since = status_at = time.monotonic()
        while self._open:
            if time.monotonic() - status_at > STATUS_SECONDS:
                status_at = time.monotonic()
                now_dropped = self.adapter.status()["capture_dropped"]
                if now_dropped > dropped:
                    yield Gap("the adapter dropped capture records", records=now_dropped - dropped)
                    dropped = now_dropped
            events = self.adapter.capture_events(POLL_SECONDS)
            if not events:
                if time.monotonic() - quiet_since > self.stall_seconds:
                    yield Gap(f"the device stopped streaming (nothing for {self.stall_seconds:g} s)")
                    return
                continue
            quiet_since = time.monotonic()
            for name, values in events:
                if name == "CAPTURE_CHUNK":
                    seq = values["chunk_seq"]
                    if seq != expected_seq:
                        yield Gap("capture chunks lost on the link", chunks=(seq - expected_seq) & 0xFFFFFFFF)
                    expected_seq = (seq + 1) & 0xFFFFFFFF
                    yield from capture_records(values["records"])
                elif name == "RESET_DETECTED":
                    yield ResetDetected(values["cycle"])
                elif name == "FRAME_SYNC":
                    yield FrameSync(values["frame"], values["cycle"])

    def close(self) -> None:
        if not self._open:
            return
        self._open = False
        try:
            self.adapter.capture_stop()
        finally:
            self.adapter.close()
