"""A delay loop (`DJNZ Rn,$`, or NOPs and a DJNZ back to the first) runs as one closed-form block
(`blocks.countdown_source`): all the passes the fast loop would start below its stop at once. It must
end where stepping ends: at the register's zero, the run's end, a timer overflow (flag or
interrupt), a /INT rise, the counter's overflow."""

from __future__ import annotations

import warnings

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from machine_doubles import RELOADING_VECTORS, ScriptedVdc, assemble_cart, step_all
from test_cpu_blocks import SETUPS as LOOPING_SETUPS

from hilbridge.machine.bios import UnknownBiosWarning
from hilbridge.machine.blocks import countdown_at
from hilbridge.machine.cartridge import load_cartridge
from hilbridge.machine.console import Console

COUNTDOWN = (
    RELOADING_VECTORS
    + """        mov a,#{timer}
        mov t,a
        {setup}
        {bank}
loop:   mov r3,#{count}
pause:  {nops}djnz r3,pause
        inc r4
        jmp loop
"""
)
SETUPS = (*LOOPING_SETUPS, "en tcnti\n        strt cnt")


def run(image: bytes, targets: list[int], stepped: bool, irq_at: tuple[int, ...], hot: int):
    """The state, RAM and bus records after runs to `targets`, through run_until or step()."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnknownBiosWarning)
        console = Console(load_cartridge(image, "o2_rom"), vdc=ScriptedVdc(irq_at=irq_at, t1_period=23))
    cpu = console.cpu
    cpu.block_hot = hot
    records: list[object] = []
    console.add_bus_listener(records.append)
    for target in targets:
        if stepped:
            step_all(cpu, target)
        else:
            cpu.run_until(target)
    return cpu.state(), records


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(
    count=st.integers(0, 255),
    setup=st.sampled_from(SETUPS),
    bank=st.sampled_from(["", "sel rb1"]),
    nops=st.integers(0, 3),
    timer=st.integers(0, 255),
    reload=st.integers(0xF0, 0xFF),
    hot=st.sampled_from([1, 64]),
    targets=st.lists(st.integers(1, 8000), max_size=4).map(sorted),
    irq_at=st.lists(st.integers(0, 8000), max_size=4).map(lambda cycles: tuple(sorted(cycles))),
)
def test_a_countdown_block_ends_where_stepping_does(
    count, setup, bank, nops, timer, reload, hot, targets, irq_at
):
    image = assemble_cart(
        COUNTDOWN.format(
            count=count, setup=setup, bank=bank, nops="nop\n        " * nops, timer=timer, reload=reload
        )
    )
    fast = run(image, [*targets, 8000], False, irq_at, hot)
    assert fast == run(image, [*targets, 8000], True, irq_at, hot)


def test_the_countdown_runs_as_a_block_not_by_idle_skipping():
    """The loop's PC holds its block (not the spin anchor mark) and runs its passes in few calls."""
    image = assemble_cart(
        COUNTDOWN.format(count=0, setup="", bank="", nops="nop\n        ", timer=0, reload=0xFF)
    )
    console = Console(load_cartridge(image, "o2_rom"), vdc=ScriptedVdc())
    cpu = console.cpu
    pause = next(pc for pc in range(0x400, 0x440) if countdown_at(cpu.prog, pc) is not None)
    cpu.run_until(20000)
    block = cpu.blocks[pause]
    assert block and block[1] == 3
    assert cpu.anchor_failures.get(pause) is None  # never tried as an idle loop


def traced_run(image: bytes, fast: bool) -> tuple[list, dict, list[str]]:
    """Bus records with fetches, merged by cycle as a board that takes whole blocks does, the CPU
    state, and the board's bulk calls: traced blocks (`fast`) or every instruction stepped."""
    console = Console(load_cartridge(image, "o2_rom"), vdc=ScriptedVdc())
    cpu = console.cpu
    cpu.trace_blocks = cpu.skip_traced = cpu.skip_idle = fast
    cpu.block_hot = 1
    records: list = []
    console.add_bus_listener(records.append, fetches=True)
    calls: list[str] = []
    program_fetches = console.program_fetches

    def one_pass(fetches, cycle: int, ran: int) -> None:
        calls.append("pass")
        program_fetches(fetches, cycle, ran)

    def passes(fetches, cycle: int, period: int, count: int) -> None:
        calls.append(f"{count} passes")
        for number in range(count):  # as Console.repeat_fetches, without counting each as a call
            program_fetches(fetches, cycle + number * period, period)

    console.program_fetches = one_pass  # type: ignore[method-assign]
    console.repeat_fetches = passes  # type: ignore[method-assign]
    if fast:
        cpu.run_until(6000)
    else:
        cpu.target = 6000
        while cpu.cycle < 6000:
            cpu.step()
    merged = sorted(records, key=lambda record: (record.cycle, record.kind == "F"))
    return merged, cpu.state(), calls


def test_a_traced_countdown_reports_its_passes_in_one_call_with_the_fetches_of_stepping():
    """Tracing fetches (the check's emulator, the simulated capture), the delay loop's passes still
    run at once and their fetches go to the board as one repeat, not one call per pass."""
    image = assemble_cart(COUNTDOWN.format(count=200, setup="", bank="", nops="", timer=0, reload=0xFF))
    records, state, calls = traced_run(image, fast=True)
    stepped_records, stepped_state, _ = traced_run(image, fast=False)
    assert (records, state) == (stepped_records, stepped_state)
    assert "200 passes" in calls
    assert calls.count("pass") < 50, "the passes went to the board one at a time"
