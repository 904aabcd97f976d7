"""Seeded fault injection between a device's byte endpoint and its transport, in both directions.

The device is the simulated adapter, or anything with the same byte interface (the tests put the
firmware's host build and the emulated firmware's port behind it).

A plan is written as `drop=0.01,corrupt=0.01,dup=0.01,delay=0.002,stall=0.01,disconnect=20000,
unstable=3,seed=7`:

| key | meaning |
|---|---|
| drop, corrupt, dup | probability per byte that it is lost, has random bits flipped, or arrives twice |
| delay | seconds every reply byte is held back (order is kept) |
| stall | probability per host write that the adapter then goes silent for `stall_time` s (default 0.2) |
| disconnect | the link dies after this many bytes from the adapter |
| unstable | this many cartridge addresses get one bit that reads back at random |
| seed | seed of the fault generator (default 0) |
"""

from __future__ import annotations

import math
import random
import time
from collections import deque
from dataclasses import dataclass, fields
from typing import Protocol

from hilbridge.errors import HilbridgeError
from hilbridge.link.errors import LinkDisconnected
from hilbridge.link.transport import Endpoint


@dataclass(slots=True)
class FaultPlan:
    drop: float = 0.0
    corrupt: float = 0.0
    dup: float = 0.0
    delay: float = 0.0
    stall: float = 0.0
    stall_time: float = 0.2
    disconnect: int = 0
    unstable: int = 0
    seed: int = 0

    @classmethod
    def parse(cls, text: str) -> FaultPlan:
        """A plan from `key=value,...`; unknown keys or bad numbers are a HilbridgeError."""
        plan = cls()
        known = {f.name: f.type for f in fields(cls)}
        for item in filter(None, (part.strip() for part in text.split(","))):
            key, _, value = item.partition("=")
            if key not in known or not value:
                raise HilbridgeError(
                    f"bad fault {item!r}", hint="use key=value with keys " + ", ".join(known)
                )
            try:
                number = int(value) if known[key] == "int" else float(value)
            except ValueError:
                raise HilbridgeError(f"fault {key} needs a number, not {value!r}") from None
            if number < 0 or (key in ("drop", "corrupt", "dup", "stall") and number > 0.5):
                raise HilbridgeError(f"fault {key}={value} is out of range")
            setattr(plan, key, number)
        total = plan.drop + plan.corrupt + plan.dup
        if total >= 1:
            raise HilbridgeError(
                f"faults drop + corrupt + dup add up to {total:g}; they are probabilities per byte of one "
                "outcome each, so they must add up to less than 1",
                hint="for example drop=0.01,corrupt=0.01,dup=0.01",
            )
        return plan

    @property
    def active(self) -> bool:
        return any(getattr(self, f.name) for f in fields(self) if f.name not in ("seed", "stall_time"))

    def unstable_bits(self) -> dict[int, int]:
        """CPU address → mask of the bit that reads at random, `unstable` of them, from the seed."""
        chooser = random.Random(self.seed ^ 0x5EED)
        return {chooser.randrange(0x400, 0xC00): 1 << chooser.randrange(8) for _ in range(self.unstable)}


class ByteMangler:
    """Applies drop/corrupt/dup to a byte stream with one seeded generator."""

    def __init__(self, plan: FaultPlan, rng: random.Random):
        self.plan = plan
        self.rng = rng
        self.total = plan.drop + plan.corrupt + plan.dup
        self._log_clean = math.log(1.0 - self.total) if self.total else 0.0

    def __call__(self, data: bytes) -> bytes:
        if not self.total or not data:
            return data
        plan, rng = self.plan, self.rng
        out = bytearray()
        position, size = 0, len(data)
        while position < size:
            clean = int(math.log(1.0 - rng.random()) / self._log_clean)
            if position + clean >= size:
                out += data[position:]
                break
            out += data[position : position + clean]
            position += clean
            byte = data[position]
            choice = rng.random() * self.total
            if choice < plan.drop:
                pass
            elif choice < plan.drop + plan.corrupt:
                out.append(byte ^ rng.randint(1, 255))
            else:
                out += bytes((byte, byte))
            position += 1
        return bytes(out)


class ByteDevice(Endpoint, Protocol):
    """The device end a fault plan sits in front of: an in-process `Endpoint` that also says whether
    it is busy and sends at most `limit` bytes at a time (`SimulatedAdapter`'s byte interface)."""

    @property
    def busy(self) -> bool:
        """Whether the device is still working on what it received (replies may follow)."""

    def transmit(self, limit: int | None = None) -> bytes: ...


class FaultyEndpoint:
    """Wraps a byte device so its traffic suffers the faults of a plan (same byte interface)."""

    def __init__(self, device: ByteDevice, plan: FaultPlan):
        self.device = device
        self.plan = plan
        rng = random.Random(plan.seed)
        self._to_device = ByteMangler(plan, random.Random(rng.getrandbits(32)))
        self._to_host = ByteMangler(plan, random.Random(rng.getrandbits(32)))
        self._rng = rng
        self._held: deque[tuple[float, bytes]] = deque()
        self._stalled_until = 0.0
        self.sent = 0
        self.disconnected = False

    @property
    def busy(self) -> bool:
        return self.device.busy or bool(self._held) or time.monotonic() < self._stalled_until

    @property
    def silent_until_written(self) -> bool:
        """Nothing held back, no stall, and a device that sends nothing until written to."""
        return not self.busy and self.device.silent_until_written

    def _check(self) -> None:
        if self.disconnected:
            raise LinkDisconnected("simulated adapter: disconnected (fault injection)")

    def receive(self, data: bytes) -> None:
        self._check()
        if self.plan.stall and self._rng.random() < self.plan.stall:
            self._stalled_until = time.monotonic() + self.plan.stall_time
        self.device.receive(self._to_device(data))

    def transmit(self, limit: int | None = None) -> bytes:
        self._check()
        now = time.monotonic()
        data = self.device.transmit(limit)
        if data:
            self._held.append((now + self.plan.delay, self._to_host(data)))
        if now < self._stalled_until:
            return b""
        out = bytearray()
        while self._held and self._held[0][0] <= now:
            out += self._held.popleft()[1]
        if self.plan.disconnect and self.sent + len(out) >= self.plan.disconnect:
            out = out[: self.plan.disconnect - self.sent]
            self.disconnected = True
        self.sent += len(out)
        return bytes(out)
