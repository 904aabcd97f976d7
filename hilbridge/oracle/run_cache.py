"""A disk cache of MAME runs, for the tests (and anyone who sets $HILBRIDGE_MAME_CACHE).

A traced MAME run takes 10-50 s and is deterministic: the same MAME build, the same files in its
scratch folder (BIOS, character ROM, cartridge, software list), the same command line, Lua scripts
and script environment give the same output files. The cache key is a hash of exactly those, so any
change to one of them is a miss; the outputs are stored compressed, each entry written into a
temporary folder and renamed into place, so a reader sees a whole entry or none. While one process
runs MAME for a key it holds that key's lock, and another process that wants the same run waits and
then reads the entry instead of running MAME again. How to use and clear it: docs/oracle.md.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import shutil
import subprocess
import tempfile
import time
import zlib
from collections.abc import Collection, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from hilbridge.errors import HilbridgeError
from hilbridge.files import write_atomic

try:
    import fcntl
except ImportError:  # not on Windows: two processes may then both run MAME for one key
    fcntl = None  # type: ignore[assignment]

CACHE_VARIABLE = "HILBRIDGE_MAME_CACHE"
FORMAT = 1
"""Version of the stored layout (run.json and the compressed outputs); part of every key."""
MAX_BYTES = 4 << 30
"""Entries not used for the longest time are removed when the cache grows past this size."""


def use_default_folder() -> None:
    """Set $HILBRIDGE_MAME_CACHE to the user's cache (`mame-runs` in hilbridge's cache folder) unless
    it is set already (empty: no caching): what the tests and the benchmarks run with."""
    from hilbridge.firmware.bootrom import default_cache

    os.environ.setdefault(CACHE_VARIABLE, str(default_cache() / "mame-runs"))


def cache_folder() -> Path | None:
    """$HILBRIDGE_MAME_CACHE, or None (no caching) when it is unset or empty."""
    value = os.environ.get(CACHE_VARIABLE, "")
    return Path(value) if value else None


def mame_identity(executable: str) -> str:
    """What names a MAME build: its executable's path, size and modification time, and its version."""
    path = Path(executable).resolve()
    info = path.stat()
    return _identity(str(path), info.st_size, info.st_mtime_ns)


@functools.cache
def _identity(path: str, size: int, modified: int) -> str:
    """Asks MAME for its version once per build (a replaced executable has another size or time)."""
    version = subprocess.run([path, "-version"], capture_output=True, text=True, timeout=120).stdout
    return f"{path} {size} {modified} {version.strip()}"


def _file_hash(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@dataclass(frozen=True, slots=True)
class Invocation:
    """One MAME run as the cache sees it.

    `work` is the run's scratch folder: every file in it before the run is an input, and the run
    writes `outputs` (names in `work`) there. `scripts` are the files outside `work` that the
    command line or environment name (the Lua scripts): their contents count, not their paths.
    `environment` is what the run sets on top of the inherited environment.
    """

    executable: str
    command: Sequence[str]
    environment: Mapping[str, str]
    work: Path
    outputs: Sequence[str]
    scripts: Sequence[Path]

    def key(self) -> str:
        """sha256 of everything that decides the outputs; the folder paths are replaced by names."""
        replacements = [(str(self.work), "<work>")]
        replacements += [(str(script), f"<script {_file_hash(script)}>") for script in self.scripts]

        def neutral(text: str) -> str:
            for path, name in replacements:
                text = text.replace(path, name)
            return text

        names = {
            path.relative_to(self.work).as_posix(): path for path in self.work.rglob("*") if path.is_file()
        }
        inputs = sorted((name, _file_hash(path)) for name, path in names.items() if name not in self.outputs)
        material = {
            "format": FORMAT,
            "mame": mame_identity(self.executable),
            "command": [neutral(word) for word in self.command[1:]],
            "environment": {name: neutral(value) for name, value in sorted(self.environment.items())},
            "inputs": inputs,
            "outputs": sorted(self.outputs),
        }
        return hashlib.sha256(json.dumps(material, sort_keys=True).encode()).hexdigest()


RESTORE_PIECE = 4 << 20
"""Bytes decompressed at a time when an entry is restored: a pixel file is up to 100 MB, and
whole it would cost more in fresh memory pages than in decompressing."""


class CacheEntry:
    """One key's place in the cache (or nowhere, with `folder` None): restore, or store after a run."""

    def __init__(self, folder: Path | None, invocation: Invocation):
        self.folder = folder
        self.invocation = invocation
        self.restored = False
        self.wall_seconds = 0.0
        self._derived: dict[str, bytes] = {}

    def restore(self, streamed: Collection[str] = ()) -> bool:
        """Write the stored outputs into the run's folder; False when there is no whole entry. The
        `streamed` outputs are not written: the caller reads them with `blocks`."""
        if self.folder is None or not (self.folder / "run.json").is_file():
            return False
        try:
            record = json.loads((self.folder / "run.json").read_text())
            for name in self.invocation.outputs:
                if name in streamed:
                    (self.folder / f"{name}.z").stat()
                else:
                    _decompress_file(self.folder / f"{name}.z", self.invocation.work / name)
        except (OSError, ValueError, zlib.error):
            shutil.rmtree(self.folder, ignore_errors=True)  # damaged: run MAME again
            return False
        os.utime(self.folder / "run.json")  # the pruning keeps what was used last
        self.restored = True
        self.wall_seconds = float(record["wall_seconds"])
        return True

    def blocks(self, name: str, piece: int = RESTORE_PIECE) -> Iterator[bytes]:
        """The stored output `name`, decompressed `piece` bytes at a time (a restored capture is read
        once, so writing it to a file first would only add a write and a read). A damaged entry is
        removed, so that the next run makes it again, and is an error."""
        assert self.folder is not None and self.restored
        try:
            yield from _decompressed(self.folder / f"{name}.z", piece)
        except (OSError, zlib.error) as error:
            shutil.rmtree(self.folder, ignore_errors=True)
            raise HilbridgeError(
                f"the MAME-run cache entry {self.folder} is damaged ({error}); removed it", hint="run again"
            ) from None

    def derived(self, name: str) -> bytes | None:
        """The file `name` kept beside the outputs by `keep_derived`, or None."""
        if self.folder is None:
            return None
        try:
            return (self.folder / name).read_bytes()
        except OSError:
            return None

    def keep_derived(self, name: str, data: bytes) -> None:
        """Keep `data`, made from the outputs (their parsed form, say), beside them: written with the
        entry by `store`, or at once into an entry that is stored already (one older than the file).
        The reader must check that it belongs to the outputs: the outputs stay what counts."""
        if self.folder is None:
            return
        if not self.restored:
            self._derived[name] = data
            return
        with contextlib.suppress(OSError):  # the entry was pruned meanwhile
            write_atomic(self.folder / name, data)

    def store(self, wall_seconds: float) -> None:
        """Keep the run's outputs (after the caller has checked them); a restored entry stays as it is."""
        if self.folder is None or self.restored:
            return
        temporary = Path(tempfile.mkdtemp(prefix=".new-", dir=self.folder.parent))
        try:
            for name in self.invocation.outputs:
                data = (self.invocation.work / name).read_bytes()
                (temporary / f"{name}.z").write_bytes(zlib.compress(data, 1))
            for name, derived in self._derived.items():
                (temporary / name).write_bytes(derived)
            record = {"wall_seconds": wall_seconds, "command": list(self.invocation.command)}
            (temporary / "run.json").write_text(json.dumps(record, indent=1))
            os.rename(temporary, self.folder)
        except OSError:  # another process stored the same run first (possible without fcntl)
            shutil.rmtree(temporary, ignore_errors=True)
        _prune(self.folder.parent)


def _decompressed(source: Path, piece: int = RESTORE_PIECE) -> Iterator[bytes]:
    """The zlib-decompressed contents of `source`, `piece` bytes at a time."""
    decompressor = zlib.decompressobj()
    pending = source.read_bytes()
    while pending:
        yield decompressor.decompress(pending, piece)
        pending = decompressor.unconsumed_tail
    yield decompressor.flush()
    if not decompressor.eof:
        raise zlib.error(f"{source} ends before its compressed data")


def _decompress_file(source: Path, target: Path) -> None:
    """Write the zlib-decompressed contents of `source` to `target`."""
    with target.open("wb") as out:
        for piece in _decompressed(source):
            out.write(piece)


@contextmanager
def cache_entry(cache: Path | None, invocation: Invocation) -> Iterator[CacheEntry]:
    """The invocation's entry in `cache` (None: a no-op entry), locked against other processes."""
    if cache is None:
        yield CacheEntry(None, invocation)
        return
    cache.mkdir(parents=True, exist_ok=True)
    key = invocation.key()
    locks = cache / "locks"
    locks.mkdir(exist_ok=True)
    with (locks / key).open("a") as lock:
        if fcntl is not None:
            fcntl.flock(lock, fcntl.LOCK_EX)
        yield CacheEntry(cache / key, invocation)


STALE_SECONDS = 3600
"""A half-written entry (`.new-*`) or file (`.NAME.XXXXXXXX.tmp`) this old was left by a killed process."""


def _remove_stale_temporaries(entry: Path) -> None:
    """Remove the temporary files (`.NAME.XXXXXXXX.tmp`) of a `write_atomic` into an entry that a
    killed process left: the entry may never be read again, which would remove them (its next write)."""
    for path in entry.iterdir():
        try:
            if path.name.startswith(".") and time.time() - path.stat().st_mtime > STALE_SECONDS:
                path.unlink()
        except FileNotFoundError:
            continue


def _prune(cache: Path, limit: int = MAX_BYTES) -> None:
    """Remove the entries used longest ago until the cache holds at most `limit` bytes, and the
    half-written entries of killed processes. Other processes rename and remove entries meanwhile:
    one that is gone by the time it is looked at is passed over."""
    entries = []
    for folder in cache.iterdir():
        record = folder / "run.json"
        try:
            if folder.name.startswith(".new-"):
                if time.time() - folder.stat().st_mtime > STALE_SECONDS:
                    shutil.rmtree(folder, ignore_errors=True)
            elif folder.name != "locks" and record.is_file():
                _remove_stale_temporaries(folder)
                size = sum(path.stat().st_size for path in folder.iterdir())
                entries.append((record.stat().st_mtime, size, folder))
        except FileNotFoundError:
            continue
    total = sum(size for _, size, _ in entries)
    for _, size, folder in sorted(entries):
        if total <= limit:
            break
        shutil.rmtree(folder, ignore_errors=True)
        total -= size
