"""The firmware build cache (hilbridge.firmware.build.cached_build) with a stand-in firmware/ whose
Makefile only records who built it: reuse per source hash, and builds racing in threads."""

from __future__ import annotations

import re
import threading
from pathlib import Path

import pytest

from hilbridge.errors import HilbridgeError
from hilbridge.firmware.build import BUILD_INPUTS, cached_build, source_hash

# Each build writes a token unique to its make process into the output, slowly enough to overlap.
MAKEFILE = """host:
\tmkdir -p $(BUILD_DIR)/host
\techo $$$$ > $(BUILD_DIR)/host/built-by
\tsleep 0.3
broken:
\tfalse
"""


@pytest.fixture
def firmware(tmp_path) -> Path:
    directory = tmp_path / "checkout" / "firmware"
    (directory / "src").mkdir(parents=True)
    (directory / "Makefile").write_text(MAKEFILE)
    (directory / "src" / "main.c").write_text("int main(void) { return 0; }\n")
    return directory


def test_a_build_is_reused_until_a_source_changes(tmp_path, firmware):
    cache = tmp_path / "cache"
    first = cached_build("host", cache, firmware)
    token = (first / "host" / "built-by").read_text()
    (firmware / "build").mkdir()
    (firmware / "build" / "stale.o").write_text("output, not a source")
    assert cached_build("host", cache, firmware) == first
    assert (first / "host" / "built-by").read_text() == token
    (firmware / "src" / "main.c").write_text("int main(void) { return 1; }\n")
    second = cached_build("host", cache, firmware)
    assert second != first and (second / "host" / "built-by").read_text() != token


def test_builds_racing_for_one_hash_leave_one_complete_directory(tmp_path, firmware):
    cache = tmp_path / "cache"
    results: list[Path] = []
    threads = [
        threading.Thread(target=lambda: results.append(cached_build("host", cache, firmware)))
        for _ in range(3)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(results) == 3 and len(set(results)) == 1
    assert [path.name for path in cache.iterdir()] == [results[0].name]
    assert (results[0] / "host" / "built-by").read_text().strip().isdigit()


def test_a_failed_build_raises_and_leaves_nothing_behind(tmp_path, firmware):
    cache = tmp_path / "cache"
    with pytest.raises(HilbridgeError, match="make -C firmware broken failed"):
        cached_build("broken", cache, firmware)
    assert list(cache.iterdir()) == []


def test_the_hash_covers_the_hosts_tables(tmp_path, firmware):
    before = source_hash(firmware)
    (tmp_path / "checkout" / "hilbridge" / "link").mkdir(parents=True)
    (tmp_path / "checkout" / "hilbridge" / "link" / "messages.tsv").write_text("id\tname\n")
    assert source_hash(firmware) != before


def test_every_build_input_outside_firmware_exists_in_the_tree():
    """A renamed table must not fall out of the hash silently (a stale cached build would be served)."""
    root = Path(__file__).resolve().parents[2]
    missing = [name for name in BUILD_INPUTS if not (root / name).exists()]
    assert missing == []


def test_every_host_file_the_makefiles_read_is_hashed():
    root = Path(__file__).resolve().parents[2]
    read = {
        name
        for makefile in (root / "firmware").glob("*.mk")
        for name in re.findall(r"\$\(PROJECT_ROOT\)/(\S+)", makefile.read_text())
    }
    assert read
    unhashed = [name for name in read if not any(name == i or name.startswith(i + "/") for i in BUILD_INPUTS)]
    assert unhashed == []
