"""The frame-by-frame check: a console's bus capture against the reference emulator on the same cart.

    source = open_source("sim", cart)               # or a capture file, MAME, a real adapter
    result = check(cart, source, frames=600)
    print(result.summary())                        # "frames 0–599 equal" or the first divergence

`emulator` is the expected side, `frames` cuts both sides into frames, `engine` compares them,
`replay` draws what the captured VDC writes draw, `report` writes text, JSON, PNG and HTML;
docs/check.md.
"""

from __future__ import annotations

import hashlib

from hilbridge.capture.stream import CaptureSource
from hilbridge.check.emulator import KIND_BITS, EmulatorSide
from hilbridge.check.engine import Check, CheckResult, reports_full_p1
from hilbridge.errors import HilbridgeError
from hilbridge.machine.bios import Bios
from hilbridge.machine.cartridge import CART_P1_MASK, Cartridge
from hilbridge.machine.inputs import NO_INPUT, InputMovie


def expected_side(
    cart: Cartridge,
    source: CaptureSource,
    *,
    region: str | None = None,
    bios: Bios | None = None,
    inputs: InputMovie = NO_INPUT,
    pictures: bool = True,
) -> EmulatorSide:
    """The emulator set up to produce what `source` records: its kinds, its view of P1, its region.

    A capture of another cartridge or region is refused: comparing them would only show noise."""
    header = source.header
    sha1 = hashlib.sha1(cart.image).hexdigest()
    if header.cart_sha1 and header.cart_sha1 != sha1:
        raise HilbridgeError(
            f"the capture is of another cartridge (SHA-1 {header.cart_sha1}, this image {sha1})",
            hint="check the capture against the image that was in the slot",
        )
    chosen = region or header.region
    if header.region and chosen != header.region:
        raise HilbridgeError(f"the capture was made on a {header.region} console, not {chosen}")
    unknown = [kind for kind in header.kinds if kind not in KIND_BITS]
    if unknown:
        raise HilbridgeError(f"the capture records kinds this check does not know: {', '.join(unknown)}")
    full = reports_full_p1(header)
    return EmulatorSide(
        cart,
        region=chosen,
        bios=bios,
        inputs=inputs,
        kinds=header.kinds,
        pictures=pictures,
        p1_mask=0xFF if full else CART_P1_MASK,
        copies=full,
    )


def check(
    cart: Cartridge,
    source: CaptureSource,
    *,
    frames: int | None,
    region: str | None = None,
    bios: Bios | None = None,
    inputs: InputMovie = NO_INPUT,
    tolerance: int = 0,
    pictures: str = "auto",
    progress=None,
) -> CheckResult:
    """Check `frames` frames of `source` (None: all it has) against the emulator running `cart`;
    closes the source."""
    try:
        drawn = pictures != "never" and "MOVX_READ" in source.header.kinds  # no reads: nothing is drawn
        side = expected_side(cart, source, region=region, bios=bios, inputs=inputs, pictures=drawn)
        return Check(
            side, source, frames=frames, tolerance=tolerance, pictures=pictures, progress=progress
        ).run()
    finally:
        source.close()


__all__ = ["CheckResult", "EmulatorSide", "check", "expected_side"]
