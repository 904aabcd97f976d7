"""The 16 colours of the VDC picture as MAME 0.251 shows them (docs/hardware.md, "Drawing").

Palette index = I*8 + B*4 + G*2 + R. `RF_PALETTE` is MAME's default (its "composite" setting,
calibrated to a real Videopac through RF); `RGB_PALETTE` is the RGB-output setting.
"""

from __future__ import annotations

import numpy as np

_RF_HEX = (
    "000000 790000 006D07 77670B 1A37BE 94309F 2AAABE CECECE "
    "676767 C75151 56C469 C6B86A 5C80F6 DC84E8 77E6EB FFFFFF"
)
_RGB_HEX = (
    "000000 B60000 00B600 B6B600 0000B6 B600B6 00B6B6 B6B6B6 "
    "494949 FF4949 49FF49 FFFF49 4949FF FF49FF 49FFFF FFFFFF"
)


def _table(hex_colours: str) -> np.ndarray:
    table = np.array(
        [[int(c[i : i + 2], 16) for i in (0, 2, 4)] for c in hex_colours.split()], dtype=np.uint8
    )
    table.setflags(write=False)
    return table


RF_PALETTE: np.ndarray = _table(_RF_HEX)
RGB_PALETTE: np.ndarray = _table(_RGB_HEX)


def to_rgb(frame: np.ndarray, palette: np.ndarray = RF_PALETTE) -> np.ndarray:
    """(H, W) palette indices -> (H, W, 3) uint8 RGB."""
    return palette[frame & 0x0F]
