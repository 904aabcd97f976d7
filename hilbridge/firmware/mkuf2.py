"""`python -m hilbridge.firmware.mkuf2 IMAGE.bin OUT.uf2`: the UF2 of a flash image, checked on the way
out with the same validator `hilbridge firmware flash` uses."""

from __future__ import annotations

import sys
from pathlib import Path

from hilbridge.errors import HilbridgeError
from hilbridge.firmware.uf2 import read_uf2, write_uf2


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: python -m hilbridge.firmware.mkuf2 IMAGE.bin OUT.uf2", file=sys.stderr)
        return 2
    image, out = Path(argv[0]), Path(argv[1])
    data = write_uf2(image.read_bytes())
    try:
        read_uf2(data, str(out))
    except HilbridgeError as error:
        print(error, file=sys.stderr)
        return 2
    out.write_bytes(data)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
