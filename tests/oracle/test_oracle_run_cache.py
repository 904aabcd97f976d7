"""The disk cache of MAME runs: a key that changes with every input, whole entries only, one run for
processes that want the same one, and a real MAME run read back equal (hilbridge.oracle.run_cache)."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest
from conftest import require_tool
from fixture_runs import cart_image

from hilbridge.oracle import run_cache
from hilbridge.oracle.mame import run_mame
from hilbridge.oracle.run_cache import CACHE_VARIABLE, Invocation, cache_entry


def fake_mame(folder: Path, version: str) -> Path:
    """An executable that answers `-version` as MAME does: only its identity goes into a key."""
    program = folder / f"mame-{version}"
    if not program.exists():  # writing it again would make it another build
        program.write_text(f"#!/bin/sh\necho '{version} (test)'\n")
        program.chmod(0o755)
    return program


def invocation(root: Path, *, version: str = "0.251", cart: bytes = b"\x01\x02", option: str = "-nothrottle",
               frames: str = "600", script: str = "-- trace\n") -> Invocation:  # fmt: skip
    """A run set up in `root` as run_mame sets one up: inputs in a work folder, a script outside it."""
    root.mkdir(parents=True, exist_ok=True)
    work = root / "work"
    (work / "roms" / "odyssey2").mkdir(parents=True, exist_ok=True)
    (work / "roms" / "odyssey2" / "o2bios.rom").write_bytes(b"\xaa" * 1024)
    (work / "cart.bin").write_bytes(cart)
    lua = root / "trace.lua"
    lua.write_text(script)
    executable = fake_mame(root.parent, version)  # one MAME for all runs under the test's folder
    command = [
        str(executable),
        "odyssey2",
        "-cart",
        str(work / "cart.bin"),
        option,
        "-autoboot_script",
        str(lua),
    ]
    environment = {"TRACE_OUT": str(work / "trace.txt"), "TRACE_FRAMES": frames}
    return Invocation(str(executable), command, environment, work, ["trace.txt"], [lua])


def test_the_key_ignores_where_the_folders_are_but_not_what_they_hold(tmp_path):
    key = invocation(tmp_path / "a").key()
    assert invocation(tmp_path / "b").key() == key  # another scratch folder and script path
    changed = invocation(tmp_path / "c")
    (changed.work / "roms" / "odyssey2" / "o2bios.rom").write_bytes(b"\xab" + b"\xaa" * 1023)
    assert changed.key() != key  # one BIOS byte
    added = invocation(tmp_path / "d")
    (added.work / "roms" / "i8244").mkdir(parents=True)
    (added.work / "roms" / "i8244" / "charset_i8244.bin").write_bytes(b"\0" * 512)
    assert added.key() != key  # one more input file


@pytest.mark.parametrize(
    "change",
    [
        {"version": "0.252"},  # another MAME
        {"cart": b"\x01\x03"},  # another cartridge
        {"option": "-throttle"},  # another argument
        {"frames": "601"},  # another script setting
        {"script": "-- trace, changed\n"},  # another Lua script
    ],
)
def test_every_input_changes_the_key(tmp_path, change):
    assert invocation(tmp_path / "changed", **change).key() != invocation(tmp_path / "same").key()


def test_a_rebuilt_mame_with_the_same_version_is_another_mame(tmp_path):
    run = invocation(tmp_path / "run")
    key = run.key()
    program = Path(run.executable)
    program.write_text(program.read_text() + "# rebuilt\n")
    assert run.key() != key


def finish(run: Invocation, text: str) -> None:
    (run.work / "trace.txt").write_text(text)


def test_a_stored_run_is_restored_into_another_folder(tmp_path):
    first = invocation(tmp_path / "first")
    with cache_entry(tmp_path / "cache", first) as entry:
        assert not entry.restore()
        finish(first, "W 1 2 3 4 0 0 0\n")
        entry.store(12.5)
    second = invocation(tmp_path / "second")
    with cache_entry(tmp_path / "cache", second) as entry:
        assert entry.restore()
        assert entry.wall_seconds == 12.5
    assert (second.work / "trace.txt").read_text() == "W 1 2 3 4 0 0 0\n"


def test_no_cache_folder_stores_nothing(tmp_path):
    run = invocation(tmp_path / "run")
    with cache_entry(None, run) as entry:
        finish(run, "x")
        entry.store(1.0)
    with cache_entry(None, run) as entry:
        assert not entry.restore()


def test_a_damaged_entry_is_a_miss_and_is_replaced(tmp_path):
    run = invocation(tmp_path / "run")
    with cache_entry(tmp_path / "cache", run) as entry:
        finish(run, "good\n")
        entry.store(1.0)
    (tmp_path / "cache" / run.key() / "trace.txt.z").write_bytes(b"not zlib")
    with cache_entry(tmp_path / "cache", run) as entry:
        assert not entry.restore()
        finish(run, "again\n")
        entry.store(2.0)
    with cache_entry(tmp_path / "cache", invocation(tmp_path / "other")) as entry:
        assert entry.restore() and entry.wall_seconds == 2.0


def test_two_workers_wanting_one_run_run_it_once(tmp_path):
    runs: list[str] = []
    start = threading.Barrier(2)

    def worker(name: str) -> None:
        mine = invocation(tmp_path / name)
        start.wait()
        with cache_entry(tmp_path / "cache", mine) as entry:
            if not entry.restore():
                runs.append(name)
                time.sleep(0.3)  # MAME at work; the other worker waits for the lock
                finish(mine, "the one run\n")
                entry.store(0.3)
        assert (mine.work / "trace.txt").read_text() == "the one run\n"

    threads = [threading.Thread(target=worker, args=(name,)) for name in ("a", "b")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(runs) == 1


def test_pruning_removes_the_entries_used_longest_ago(tmp_path):
    cache = tmp_path / "cache"
    keys = []
    for number in range(3):
        run = invocation(tmp_path / str(number), cart=bytes([number]))
        with cache_entry(cache, run) as entry:
            finish(run, "x" * 1000)
            entry.store(1.0)
        keys.append(run.key())
        os.utime(cache / run.key() / "run.json", (number, number))
    with cache_entry(cache, invocation(tmp_path / "again", cart=b"\x00")) as entry:
        assert entry.restore()  # using entry 0 makes entry 1 the oldest
    run_cache._prune(cache, limit=2 * (cache / keys[0] / "trace.txt.z").stat().st_size + 1000)
    assert [(cache / key).exists() for key in keys] == [True, False, True]


@pytest.mark.mame
@pytest.mark.slow
def test_a_cached_mame_run_equals_the_run_and_any_change_runs_mame_again(tmp_path, monkeypatch):
    require_tool("mame")
    monkeypatch.setenv(CACHE_VARIABLE, str(tmp_path / "cache"))
    image = cart_image("cpu_alu")
    options = {"frames": 3, "reads": True, "state": True}
    first = run_mame(image, **options)
    again = run_mame(image, **options)
    assert not first.from_cache and again.from_cache
    assert again.trace == first.trace and again.wall_seconds == first.wall_seconds
    other_cart = bytearray(image)
    other_cart[-1] ^= 0xFF  # a byte the cart never reads: the same trace, but another cartridge
    assert not run_mame(bytes(other_cart), **options).from_cache
    assert not run_mame(image, **options, region="pal").from_cache
    assert not run_mame(image, **options, cache=False).from_cache
    monkeypatch.setenv(CACHE_VARIABLE, "")
    assert not run_mame(image, **options).from_cache


def test_pruning_passes_over_entries_another_worker_renames_or_removes_meanwhile(tmp_path, monkeypatch):
    """Another process renames its `.new-*` folder into place, or prunes an entry, between this
    one's listing of the cache and its look at the entry: no error (it failed an oracle test in CI)."""
    cache = tmp_path / "cache"
    for name in ("locks", "kept", "pruned"):
        (cache / name).mkdir(parents=True)
    for name in ("kept", "pruned"):
        (cache / name / "run.json").write_text("{}")
    listed = [cache / ".new-renamed", cache / "pruned", cache / "kept", cache / "locks"]
    original_iterdir, original_is_file = Path.iterdir, Path.is_file

    def is_file_then_vanish(path: Path) -> bool:
        answer = original_is_file(path)
        if path == cache / "pruned" / "run.json":  # removed after the check, before size and time
            path.unlink()
            path.parent.rmdir()
        return answer

    monkeypatch.setattr(
        Path, "iterdir", lambda path: iter(listed) if path == cache else original_iterdir(path)
    )
    monkeypatch.setattr(Path, "is_file", is_file_then_vanish)
    run_cache._prune(cache, limit=0)
    assert not (cache / "kept").exists()


def test_pruning_removes_a_killed_writers_temporary_file_inside_an_entry(tmp_path):
    """A file written into an entry after it was stored (a parsed trace) goes through a temporary
    `.NAME.XXXXXXXX.tmp` file (`write_atomic`); one a killed process left is removed once stale, a
    fresh one (a writer at work) is kept, and so are the entry's own files."""
    entry = tmp_path / "cache" / "entry"
    entry.mkdir(parents=True)
    (entry / "run.json").write_text("{}")
    (entry / "trace.txt.z").write_bytes(b"x")
    stale, fresh = entry / ".trace.parsed.npz.stale000.tmp", entry / ".trace.parsed.npz.fresh000.tmp"
    stale.write_bytes(b"half")
    fresh.write_bytes(b"half")
    old = time.time() - run_cache.STALE_SECONDS - 10
    os.utime(stale, (old, old))
    os.utime(entry / "trace.txt.z", (old, old))
    run_cache._prune(tmp_path / "cache")
    assert sorted(path.name for path in entry.iterdir()) == [fresh.name, "run.json", "trace.txt.z"]
