"""hilbridge's own combat cartridge: `combat.a48` (source) and `combat.bin` (the built 2 KB image).

docs/bridge.md describes its controls, battle rule and RAM record; `profiles/combat.json` says where
it shows and stores them.
"""

from __future__ import annotations

import hashlib
from functools import cache
from importlib.resources import files

from hilbridge.toolchain import assemble_text

SOURCE = "combat.a48"
IMAGE = "combat.bin"


def combat_source() -> str:
    return files(__package__).joinpath(SOURCE).read_text(encoding="latin-1")


@cache
def combat_image() -> bytes:
    """The shipped image (tests rebuild it from the source and compare byte for byte)."""
    return files(__package__).joinpath(IMAGE).read_bytes()


def build_combat_image() -> bytes:
    """The image our assembler makes from the shipped source."""
    return assemble_text(combat_source(), SOURCE).image


def combat_sha1() -> str:
    return hashlib.sha1(combat_image()).hexdigest()
