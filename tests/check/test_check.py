"""The check end to end on the simulated console: equal runs, the device path, and bad input that must
end in a clear error or a marked gap, never in a false "equal"."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

import numpy as np
import pytest
from check_support import SimulatedCapture, fixture_cart

from hilbridge.capture.sources import open_capture
from hilbridge.capture.stream import CaptureHeader, CaptureItem, Gap
from hilbridge.check import check
from hilbridge.errors import HilbridgeError
from hilbridge.link.adapter import CaptureRecord
from hilbridge.machine.cartridge import load_cartridge
from hilbridge.machine.inputs import parse_input_movie


class Items:
    """A capture source over given items (a stand-in for a device that misbehaves)."""

    def __init__(self, items: list[CaptureItem], header: CaptureHeader) -> None:
        self._items = items
        self.header = header

    def items(self) -> Iterator[CaptureItem]:
        return iter(self._items)

    def close(self) -> None:
        pass


def recorded(cart_name: str, frames: int, **options) -> tuple[list[CaptureItem], CaptureHeader]:
    source = SimulatedCapture(fixture_cart(cart_name), frames=frames, **options)
    return list(source.items()), source.header


def test_a_plain_simulated_console_is_equal_frame_by_frame_with_pictures() -> None:
    cart = fixture_cart("video_objects")
    result = check(cart, SimulatedCapture(cart, frames=20), frames=8, pictures="always")
    assert result.verdict == "equal", result.summary()
    assert (result.first_frame, result.last_frame, result.frames_compared) == (0, 7, 8)
    assert result.pictures_compared >= 7
    assert result.summary().startswith("frames 0–7 equal")


@pytest.mark.slow
@pytest.mark.parametrize(("region", "frames"), [("ntsc", 3600), ("pal", 600)])
def test_no_deviation_is_equal_for_a_long_run(region: str, frames: int) -> None:
    """A minute of NTSC console time (3,600 frames); PAL shorter, to keep CI's time."""
    cart = fixture_cart("sound")
    source = SimulatedCapture(cart, frames=frames + 20, region=region)
    result = check(cart, source, frames=frames, region=region)
    assert result.verdict == "equal", result.summary()
    assert result.frames_compared == frames


def test_the_sim_device_with_a_deviation_through_open_capture() -> None:
    cart = fixture_cart("cpu_alu")
    source = open_capture("sim?deviation=write_dropped&frame=3&seed=0", cart, serve=True)
    deviation = source.adapter.link.transport.endpoint.console_factory.deviation
    result = check(cart, source, frames=6)
    assert result.verdict == "diverged"
    assert (result.divergence.cycle, result.divergence.kind) == (deviation.injected[1], "missing write")


def test_without_fetches_the_check_still_compares_movx_and_says_what_it_left_out() -> None:
    cart = fixture_cart("cpu_alu")
    kinds = ("MOVX_WRITE", "MOVX_READ", "P1")
    assert check(cart, SimulatedCapture(cart, frames=12, kinds=kinds), frames=6).verdict == "equal"
    from hilbridge.sim.deviations import Deviation

    deviation = Deviation("write_dropped", 3, 0)
    source = SimulatedCapture(cart, frames=12, kinds=kinds, deviation=deviation)
    result = check(cart, source, frames=6)
    assert result.divergence.cycle == deviation.injected[1]
    assert any("fetches are not captured" in note for note in result.notes)


def test_a_capture_of_another_cartridge_is_refused() -> None:
    items, header = recorded("cpu_alu", 3)
    other = fixture_cart("sound")
    import hashlib
    from dataclasses import replace

    header = replace(header, cart_sha1=hashlib.sha1(fixture_cart("cpu_alu").image).hexdigest())
    with pytest.raises(HilbridgeError, match="another cartridge"):
        check(other, Items(items, header), frames=2)


def test_a_capture_of_the_other_region_is_refused() -> None:
    items, header = recorded("cpu_alu", 3, region="pal")
    with pytest.raises(HilbridgeError, match="pal console"):
        check(fixture_cart("cpu_alu"), Items(items, header), frames=2, region="ntsc")


def test_the_wrong_region_without_a_header_diverges_rather_than_passing() -> None:
    from dataclasses import replace

    items, header = recorded("video_objects", 12, region="pal")
    result = check(
        fixture_cart("video_objects"), Items(items, replace(header, region="")), frames=8, region="ntsc"
    )
    assert result.verdict == "diverged"


def test_a_device_that_stops_streaming_is_a_marked_gap() -> None:
    items, header = recorded("cpu_alu", 6)
    end = next(i for i, item in enumerate(items) if isinstance(item, CaptureRecord) and item.cycle > 3 * 6000)
    stopped = [*items[:end], Gap("the device stopped streaming: nothing for 3 s")]
    result = check(fixture_cart("cpu_alu"), Items(stopped, header), frames=5)
    assert result.verdict == "gap"
    assert result.exit_code == 1
    assert any("stopped streaming" in reason for _, _, reason in result.gaps.ranges)
    assert "NOT all equal" in result.summary()


def test_dropped_chunks_mark_their_frame_and_the_check_goes_on() -> None:
    items, header = recorded("cpu_alu", 12)
    at = next(i for i, item in enumerate(items) if isinstance(item, CaptureRecord) and item.cycle > 4 * 6000)
    lost = [*items[:at], Gap("2 capture chunk(s) lost on the link", chunks=2), *items[at + 300 :]]
    result = check(fixture_cart("cpu_alu"), Items(lost, header), frames=8)
    assert result.verdict == "gap"
    (gap,) = result.gaps.ranges
    assert gap[0] == gap[1] and "lost on the link" in gap[2]
    assert result.frames_compared == 7  # the frames before and after the gap were compared


def test_dropped_chunks_from_a_faulty_link_are_never_equal() -> None:
    cart = fixture_cart("cpu_alu")
    source = open_capture("sim?faults=drop=0.00005,seed=5", cart, serve=True)
    result = check(cart, source, frames=4)
    assert result.verdict == "gap", result.summary()
    assert any("lost on the link" in reason for _, _, reason in result.gaps.ranges)


def test_a_capture_without_a_reset_is_an_error() -> None:
    items, header = recorded("cpu_alu", 3)
    without = [item for item in items if type(item).__name__ != "ResetDetected"]
    with pytest.raises(HilbridgeError, match="no reset fetch"):
        check(fixture_cart("cpu_alu"), Items(without, header), frames=2)


def test_a_movie_with_unknown_keys_is_refused_with_its_line() -> None:
    with pytest.raises(HilbridgeError, match="unknown key") as error:
        parse_input_movie("10 press A\n20 press NOSUCHKEY\n", "movie.txt")
    assert error.value.location.line == 2


def test_a_cartridge_the_emulator_cannot_map_is_refused() -> None:
    with pytest.raises(HilbridgeError):
        load_cartridge(bytes(1000))


def test_an_input_movie_reaches_both_sides_and_input_free_frames_are_reported() -> None:
    cart = fixture_cart("input_read")
    movie = parse_input_movie("2 press A\n4 release A\n")
    result = check(cart, open_capture("sim", cart, inputs=movie, serve=True), frames=6, inputs=movie)
    assert result.verdict == "equal", result.summary()
    assert result.input_free.ranges == [
        [0, 1, "no key or joystick input held"],
        [4, 5, "no key or joystick input held"],
    ]


def test_a_movie_on_one_side_only_diverges() -> None:
    cart = fixture_cart("input_read")
    movie = parse_input_movie("2 press A\n")
    result = check(cart, open_capture("sim", cart, inputs=movie, serve=True), frames=6)
    assert result.verdict == "diverged"


@pytest.mark.parametrize(
    ("cart_name", "region"),
    [
        ("video_midframe", "ntsc"),
        pytest.param("video_collisions", "pal", marks=pytest.mark.slow),
        pytest.param("xram", "pal", marks=pytest.mark.slow),  # copy mode: RAM to VDC
        pytest.param("sound", "ntsc", marks=pytest.mark.slow),
    ],
)
def test_the_replayed_picture_is_the_emulators_pixel_for_pixel(cart_name: str, region: str) -> None:
    cart = fixture_cart(cart_name)
    source = SimulatedCapture(cart, frames=14, region=region)
    result = check(cart, source, frames=10, region=region, pictures="always")
    assert result.verdict == "equal", result.summary()
    assert result.pictures_compared == 10


def test_a_capture_stopped_inside_a_frame_is_not_a_divergence() -> None:
    """A simulated console's capture stopped on the wall clock (`--seconds`, Ctrl-C) ends anywhere in a
    frame: that frame is left uncompared (and said), never reported as missing events."""
    cart = fixture_cart("video_objects")
    items, header = recorded("video_objects", 6)
    middle = next(i for i, item in enumerate(items) if getattr(item, "cycle", 0) > 5 * 5980 + 2000)
    stopped = replace(header, ends_on_frame=False)
    result = check(cart, Items(items[:middle], stopped), frames=None)
    assert result.verdict == "equal", result.summary()
    assert result.frames_compared >= 4
    assert any("ends inside frame" in note for note in result.notes), result.notes
    asked = check(cart, Items(items[:middle], stopped), frames=6)  # the frames asked for are not all there
    assert asked.verdict == "gap", asked.summary()
    whole = check(
        cart, Items(items, header), frames=None
    )  # a frame-limited capture ends on a frame end: all compared
    assert whole.verdict == "equal" and whole.frames_compared == result.frames_compared + 1, whole.summary()


@pytest.mark.parametrize(("cart_name", "region"), [("video_objects", "ntsc"), ("xram", "pal")])
def test_a_vdc_state_run_again_is_the_one_taken_as_the_frame_starts(
    cart_name: str, region: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past STATES_TAKEN frames the emulator side takes no VDC state; `vdc_state_at` runs an
    identical side again to the frame: the state every frame took before STATES_TAKEN existed."""
    from hilbridge.check import emulator

    first = emulator.STATES_TAKEN  # the first frame without a state

    def frames(side: emulator.EmulatorSide) -> list[emulator.EmulatedFrame]:
        return [side.next_frame() for _ in range(first + 3)]

    kinds = ("FETCH", "MOVX_READ", "MOVX_WRITE", "P1")
    lazy = emulator.EmulatorSide(fixture_cart(cart_name), region=region, kinds=kinds)
    later = frames(lazy)[first:]
    assert [frame.vdc_state for frame in later] == [None] * 3
    with monkeypatch.context() as patch:
        patch.setattr(emulator, "STATES_TAKEN", 1 << 30)
        taken = frames(emulator.EmulatorSide(fixture_cart(cart_name), region=region, kinds=kinds))
    for frame in (later[0], later[2]):
        assert lazy.vdc_state_at(frame) == taken[frame.number].vdc_state is not None


def test_a_divergence_past_the_frames_with_states_draws_the_same_pictures(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from hilbridge.check import emulator
    from hilbridge.sim.deviations import Deviation

    cart = fixture_cart("video_objects")
    first = emulator.STATES_TAKEN  # the first frame without a state

    def diverged() -> object:
        source = SimulatedCapture(cart, frames=30, deviation=Deviation("vdc_bit_flip", 18, 3))
        result = check(cart, source, frames=24)
        assert result.verdict == "diverged" and result.divergence.picture_frame >= first
        return result.divergence

    lazy = diverged()
    monkeypatch.setattr(emulator, "STATES_TAKEN", 1 << 30)
    taken = diverged()
    assert (lazy.picture_frame, lazy.expected, lazy.actual) == (
        taken.picture_frame,
        taken.expected,
        taken.actual,
    )
    assert np.array_equal(lazy.actual_picture, taken.actual_picture)
    assert np.array_equal(lazy.expected_picture, taken.expected_picture)
    assert not np.array_equal(lazy.actual_picture, lazy.expected_picture)
