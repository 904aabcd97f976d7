"""The simulated console with each seeded deviation: the check reports the first divergence at
exactly the frame and cycle where the deviating console first differs on the slot.

Visible deviations change one slot event: its cycle is where the deviation struck. Internal ones
(the timer, DA A, the interrupt) show on the slot later, or not at all within the run; their
expected cycle comes from comparing the raw item streams of a plain and a deviating console in
order, which knows nothing of frames. The matrix of every deviation on every cart in both
regions is slow (a few CPU-minutes).
"""

from __future__ import annotations

import pytest
from check_support import SimulatedCapture, first_raw_difference, fixture_cart
from fixture_runs import SPECS

from hilbridge.check import check
from hilbridge.machine.timing import REGIONS
from hilbridge.machine.vdc import Vdc
from hilbridge.sim.deviations import DEVIATIONS, Deviation

FRAME = 3  # the deviation's first frame: after the boot
CHECKED = 6  # frames checked


def video_frame_of(cycle: int, region: str) -> int:
    """The video frame (the check's frame with the time marker) a cycle falls in."""
    vdc = Vdc(REGIONS[region])
    frame = 0
    while vdc.frame_end_cycle(frame) <= cycle:
        frame += 1
    return frame


def run_deviation(cart_name: str, name: str, region: str, seed: int = 1) -> None:
    cart = fixture_cart(cart_name)
    deviation = Deviation(name, FRAME, seed)
    source = SimulatedCapture(cart, frames=CHECKED + 12, region=region, deviation=deviation)
    result = check(cart, source, frames=CHECKED, region=region)
    # up to what the check read (past the end of its last frame): a difference further on is in a
    # frame after the checked ones, which must be equal, as they must without any difference
    raw = first_raw_difference(source, len(source.made.made))
    if DEVIATIONS[name].visible and raw is not None:
        assert deviation.injected is not None and raw.cycle == deviation.injected[1]
    frame = None
    if raw is not None:
        frame = {
            "time": video_frame_of(raw.cycle, region),
            "vsync": raw.frame_syncs,
            "irq": raw.irq_entries,
        }[result.marker]
    if frame is None or frame >= result.first_frame + CHECKED:
        assert result.verdict == "equal", result.summary()  # no effect within the frames checked
        return
    assert result.verdict == "diverged", (deviation, result.summary())
    assert (result.divergence.frame, result.divergence.cycle) == (frame, raw.cycle), result.summary()


REPRESENTATIVE = [
    ("video_objects", "vdc_bit_flip", "ntsc"),
    ("cpu_alu", "write_dropped", "pal"),
    ("xram", "ram_bit_flip", "ntsc"),
    ("cpu_alu", "daa_rule", "ntsc"),
    ("timer_counter", "timer_late", "ntsc"),
    ("interrupts", "irq_late", "pal"),
]


@pytest.mark.parametrize(("cart_name", "name", "region"), REPRESENTATIVE)
def test_the_check_finds_a_deviation_at_its_frame_and_cycle(cart_name: str, name: str, region: str) -> None:
    run_deviation(cart_name, name, region)


def test_every_deviation_in_the_table_is_exercised() -> None:
    assert {name for _, name, _ in REPRESENTATIVE} == set(DEVIATIONS)


def matrix() -> list:
    """Every seeded deviation on every fixture cart in both regions (about a second each); the tests
    of one cart and region share a worker, which runs the plain console once for them."""
    regions = ("ntsc", "pal")
    return [
        pytest.param(cart, name, region, marks=pytest.mark.xdist_group(f"deviations-{cart}-{region}"))
        for cart in sorted(SPECS)
        for name in sorted(DEVIATIONS)
        for region in regions
    ]


@pytest.mark.slow
@pytest.mark.parametrize(("cart_name", "name", "region"), matrix())
def test_deviations_across_the_carts_and_regions(cart_name: str, name: str, region: str) -> None:
    run_deviation(cart_name, name, region, seed=2)


def test_the_deviations_do_strike_where_they_say() -> None:
    """Not a vacuous matrix: on these carts each visible deviation happens within the checked frames."""
    for cart_name, name in (
        ("video_objects", "vdc_bit_flip"),
        ("cpu_alu", "write_dropped"),
        ("xram", "ram_bit_flip"),
    ):
        deviation = Deviation(name, FRAME, 1)
        source = SimulatedCapture(fixture_cart(cart_name), frames=CHECKED, deviation=deviation)
        for _ in source.items():
            pass
        assert deviation.injected is not None and deviation.injected[0] >= FRAME, (cart_name, name)


def test_an_internal_deviation_strikes_in_code_already_compiled_into_blocks() -> None:
    """By frame 10 cpu_alu's DA A runs inside compiled blocks, which inline the instruction's own
    statements: the deviating DA A must still be the one that runs (it never struck there)."""
    cart = fixture_cart("cpu_alu")
    deviation = Deviation("daa_rule", 10, 1)
    source = SimulatedCapture(cart, frames=20, deviation=deviation)
    result = check(cart, source, frames=16)
    assert deviation.injected is not None and deviation.injected[0] >= 10
    assert result.verdict == "diverged", result.summary()
    assert result.divergence.cycle == first_raw_difference(source).cycle
