"""A cached MAME run keeps its parsed trace beside the text (hilbridge.oracle.mame.read_trace): read
back it equals a parse of the text, and one that does not belong to the text, or is unreadable, is
ignored and made again; a cached capture is read straight from its compressed file."""

from __future__ import annotations

import zlib

import pytest
from conftest import require_tool
from fixture_runs import cart_image, compare_group, mame_run, traced_run_options
from test_oracle_run_cache import finish, invocation

from hilbridge.errors import HilbridgeError
from hilbridge.oracle import mame
from hilbridge.oracle.mame import PARSED_TRACE, read_trace, run_mame
from hilbridge.oracle.run_cache import cache_entry
from hilbridge.oracle.trace import parse_trace, parsed_trace_bytes, trace_from_parsed

SAMPLE = """# system=odyssey2 region=ntsc
W 1790 BF A0 10 0 12 55
R 1802 BF A1 FF 0 12 130
W 9000000000 FF 7F 00 -1 -1 0
F 0 5965 40A
S 0 {vdc} {xram} {iram} BF 7F
P 0 0
# done frames=1
""".format(vdc="01" * 256, xram="A5" * 128, iram="3C" * 64)


def unparsable(text: str, name: str = "") -> None:
    raise AssertionError("the trace was parsed, not read from its parsed form")


def test_the_parsed_form_reads_back_equal_and_only_for_its_own_text():
    trace = parse_trace(SAMPLE)
    data = parsed_trace_bytes(trace, "hash of the text")
    assert data is not None
    assert trace_from_parsed(data, "hash of the text") == trace
    assert trace_from_parsed(data, "hash of other text") is None
    assert trace_from_parsed(data[: len(data) // 2], "hash of the text") is None
    assert trace_from_parsed(b"not an npz file", "hash of the text") is None


def stored_run(tmp_path, text: str = SAMPLE):
    """A run stored in a cache under tmp_path whose trace was read (so its parsed form kept)."""
    run = invocation(tmp_path / "first")
    with cache_entry(tmp_path / "cache", run) as entry:
        finish(run, text)
        first = read_trace(run.work / "trace.txt", entry)
        entry.store(1.0)
    return run, first


def read_again(tmp_path, name: str):
    run = invocation(tmp_path / name)
    with cache_entry(tmp_path / "cache", run) as entry:
        assert entry.restore()
        return read_trace(run.work / "trace.txt", entry)


def test_a_stored_run_keeps_its_parsed_trace_and_reads_it_instead_of_parsing(tmp_path, monkeypatch):
    run, first = stored_run(tmp_path)
    assert (tmp_path / "cache" / run.key() / PARSED_TRACE).is_file()
    monkeypatch.setattr(mame, "parse_trace", unparsable)
    assert read_again(tmp_path, "again") == first == parse_trace(SAMPLE)


@pytest.mark.parametrize("damage", ["other text", "corrupt", "missing"])
def test_a_parsed_trace_that_is_stale_corrupt_or_missing_is_parsed_again_and_rewritten(
    tmp_path, monkeypatch, damage
):
    run, first = stored_run(tmp_path)
    parsed = tmp_path / "cache" / run.key() / PARSED_TRACE
    if damage == "other text":  # an older text's parsed form: all fields readable, another hash
        other = parse_trace(SAMPLE.replace("W 1790", "W 1791"))
        parsed.write_bytes(parsed_trace_bytes(other, "0" * 64) or b"")
    elif damage == "corrupt":
        parsed.write_bytes(parsed.read_bytes()[:100])
    else:  # an entry stored before parsed traces were kept
        parsed.unlink()
    assert read_again(tmp_path, "fallback") == first
    monkeypatch.setattr(mame, "parse_trace", unparsable)
    assert read_again(tmp_path, "rewritten") == first


def test_a_restored_capture_is_streamed_and_a_damaged_one_is_removed(tmp_path):
    run = invocation(tmp_path / "first")
    with cache_entry(tmp_path / "cache", run) as entry:
        finish(run, SAMPLE * 100)
        entry.store(1.0)
    folder = tmp_path / "cache" / run.key()
    again = invocation(tmp_path / "again")
    with cache_entry(tmp_path / "cache", again) as entry:
        assert entry.restore(streamed=("trace.txt",))
        assert not (again.work / "trace.txt").exists()
        assert b"".join(entry.blocks("trace.txt", 1000)) == (SAMPLE * 100).encode()
    compressed = (folder / "trace.txt.z").read_bytes()
    (folder / "trace.txt.z").write_bytes(compressed[: len(compressed) // 2])
    with cache_entry(tmp_path / "cache", invocation(tmp_path / "damaged")) as entry:
        assert entry.restore(streamed=("trace.txt",))
        with pytest.raises(HilbridgeError, match="damaged"):
            b"".join(entry.blocks("trace.txt"))
    assert not folder.exists()
    assert zlib.decompress(compressed) == (SAMPLE * 100).encode()


@pytest.mark.mame
@pytest.mark.parametrize(
    "name",
    [pytest.param(name, marks=compare_group(name, "ntsc")) for name in ("interrupts", "video_objects")],
)
def test_a_real_cached_runs_parsed_trace_equals_its_text_parsed(tmp_path, monkeypatch, name):
    """The fixture runs the tests use (read from the cache, run when it is cold): the first read
    (`mame_run`, the one the compare tests of its group keep) keeps the parsed form if the entry lacks
    it, the second must take it and equal a parse."""
    require_tool("mame")
    options = {"state": True, **traced_run_options(name)}
    mame_run(name, "ntsc")
    monkeypatch.setattr(mame, "parse_trace", unparsable)
    cached = run_mame(cart_image(name), **options, keep_dir=tmp_path)
    assert cached.from_cache
    expected = parse_trace((tmp_path / "trace.txt").read_text())
    if options["pixels"]:
        expected.pixel_frames = expected.pixel_frames[1:]
        expected.truncate(options["frames"])
    assert cached.trace == expected
    assert len(expected.accesses) > 10_000
