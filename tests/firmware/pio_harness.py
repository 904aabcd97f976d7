"""Run the firmware's PIO programs in pioemu (rp2040-pio-emulator) against pin waveforms.

pioemu steps one state machine one instruction at a time, about 18 k steps/s. Two exact shortcuts
keep the tests short: a state machine stalled on WAIT or PULL with inputs that do not change stays
as it is, so the run jumps to the next input change; and a loop pass that comes back to the same
instruction with the same state except the clock and a decremented X repeats identically while the
inputs hold, so whole passes are skipped (X and the clock advanced by the pass count).

Also modelled here, because pioemu lacks them: optional side-set (pioemu would treat the enable
bit as a pin), the two DMA channels of the serve engine (a fixed latency, DMA_CYCLES), and the CPU
writing SMx_INSTR (`exec_jump`). pioemu also forgets an `out pins` value on pins that are not
(yet) outputs in the next cycle, where the chip keeps it in the pin's output latch; `out_latch`
keeps it as the chip does, and `driven` reports the level of the OUT pins that are outputs.
"""

import bisect
import dataclasses
import functools
import importlib
import sys
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import ModuleType

import pytest

PROJECT_ROOT = Path(__file__).resolve().parents[2]
TOOLS = PROJECT_ROOT / "firmware" / "tools"
JUNK_PIN = 30  # pioemu writes the side-set bits here; the real side-set is decoded by the harness
DMA_CYCLES = 10  # RX FIFO push to the byte in the TX FIFO through two chained DMA channels [unv]
OPCODE_WAIT = 1
OPCODE_PUSH_PULL = 4


def require_module(name: str, package: str) -> ModuleType:
    """Import a pip package the firmware tests need: skip locally, fail in CI (as require_tool)."""
    from conftest import IN_CI

    try:
        module = importlib.import_module(name)
    except ImportError:
        message = f"{package} is not installed (.ci/run installs it with pip)"
        if IN_CI:
            pytest.fail(message)
        pytest.skip(message)
        raise
    if name == "pioemu":
        use_copying_replace()
    return module


# pioemu's modules that build every next state with dataclasses.replace
PIOEMU_REPLACERS = (
    "pioemu.emulation",
    "pioemu.primitive_operations",
    "pioemu.instructions.push",
    "pioemu.instructions.pull",
)


def copying_replace(instance: object, /, **changes: object) -> object:
    """dataclasses.replace for a dataclass whose fields all go through __init__ and which has no
    __post_init__ (pioemu's State): the instance's attributes copied and `changes`
    laid over them, without __init__ and the field checks, which were a third of a PIO test's time.
    Any other class goes to dataclasses.replace."""
    cls = type(instance)
    if not _plain_dataclass(cls):
        return dataclasses.replace(instance, **changes)
    new = object.__new__(cls)
    attributes = new.__dict__
    attributes.update(instance.__dict__)
    attributes.update(changes)
    return new


@functools.cache
def _plain_dataclass(cls: type) -> bool:
    return (
        dataclasses.is_dataclass(cls)
        and not hasattr(cls, "__post_init__")
        and not hasattr(cls, "__slots__")
        and all(f.init for f in dataclasses.fields(cls))
        and not any(isinstance(f.type, dataclasses.InitVar) for f in dataclasses.fields(cls))
    )


def use_copying_replace() -> None:
    """Give pioemu `copying_replace` in place of dataclasses.replace (the same states, made faster)."""
    for name in PIOEMU_REPLACERS:
        importlib.import_module(name).replace = copying_replace


def tool(name: str) -> ModuleType:
    """A generator script of firmware/tools as a module (gen_pins, gen_pio, gen_timing)."""
    if str(TOOLS) not in sys.path:
        sys.path.insert(0, str(TOOLS))
    return importlib.import_module(name)


def engine_options(program: object) -> dict[str, object]:
    """pioemu's arguments for a program's shift, push, output pins and wrap, as its engine sets them."""
    engine = program.engine
    return {
        "shift_isr_right": engine.in_shift_right,
        "shift_osr_right": engine.out_shift_right,
        "auto_push": engine.autopush,
        "push_threshold": engine.push_threshold,
        "out_base": engine.out_base,
        "out_count": engine.out_count,
        "wrap_target": program.wrap_target,
        "wrap_top": program.wrap,
    }


@dataclass
class Waveform:
    """Input pin levels over time: piecewise constant, as (PIO clock, all pins) change points."""

    times: list[int]
    values: list[int]

    def at(self, clock: int) -> int:
        return self.values[max(0, bisect.bisect_right(self.times, clock) - 1)]

    def next_change(self, clock: int) -> int:
        index = bisect.bisect_right(self.times, clock)
        return self.times[index] if index < len(self.times) else 1 << 62


@dataclass
class Harness:
    """One state machine running one assembled program (gen_pio.Assembled) against a waveform."""

    program: object
    wave: Waveform
    state: object = None
    sideset_log: list[tuple[int, int]] = field(default_factory=list)  # (clock, level) of the opt pin
    dma_table: Callable[[int], int] | None = None  # pushed word -> byte (serve engines)
    drain: Callable[[int, int], None] | None = None  # (clock, word) for every RX word (sniff, dump)
    on_step: Callable[[object, object], None] | None = None
    out_latch: int = 0  # the OUT pins' output register
    _dma_pending: list[tuple[int, int]] = field(default_factory=list)
    _words_out: int = 0

    def __post_init__(self) -> None:
        from pioemu import State

        if self.state is None:
            self.state = State(x_register=0xFFFFFFFF)

    def _kwargs(self) -> dict[str, object]:
        program, engine = self.program, self.program.engine
        return {
            **engine_options(program),
            "auto_pull": engine.autopull,
            "pull_threshold": engine.pull_threshold,
            "jmp_pin": engine.jmp_pin,
            "side_set_base": JUNK_PIN,
            "side_set_count": program.sideset_count + program.sideset_opt,
        }

    def driven(self, state: object, mask: int) -> int | None:
        """The level of the pins of `mask` if the program drives all of them, else None."""
        if state.pin_directions & mask != mask:
            return None
        return self.out_latch & mask

    def schedule_tx(self, clock: int, word: int) -> None:
        """A word another engine's DMA channel writes into this machine's TX FIFO at `clock`."""
        bisect.insort(self._dma_pending, (clock, word))

    def exec_jump(self, address: int, tx_word: int | None = None) -> None:
        """What the CPU does by writing `jmp address` to SMx_INSTR (and a word to TXF)."""
        state = replace(self.state, program_counter=address)
        if tx_word is not None:
            state.transmit_fifo.append(tx_word)
        self.state = state

    def _signature(self, state: object) -> tuple[object, ...]:
        return (
            state.program_counter, state.y_register, state.pin_values, state.pin_directions,
            state.input_shift_register.contents, state.input_shift_register.counter,
            state.output_shift_register.contents, state.output_shift_register.counter,
            tuple(state.receive_fifo), tuple(state.transmit_fifo), self._words_out,
        )  # fmt: skip

    def run(self, until: int) -> None:
        """Run until the clock reaches `until` (inputs from the waveform)."""
        from pioemu import emulate

        opcodes = self.program.opcodes
        sideset_bits = self.program.sideset_count + self.program.sideset_opt
        wave = self.wave

        def pins(clock: int) -> int:
            return wave.at(clock)

        while self.state.clock < until:
            visits: dict[int, tuple[tuple[object, ...], int, int]] = {}
            skip_to: object = None
            emulation = emulate(
                opcodes,
                stop_when=lambda _opcode, state: state.clock >= until,
                initial_state=self.state,
                input_source=pins,
                **self._kwargs(),
            )
            for before, after in emulation:
                opcode = opcodes[before.program_counter]
                if self.program.sideset_opt and opcode & 0x1000:
                    level = opcode >> (13 - sideset_bits) & 1
                    if not self.sideset_log or self.sideset_log[-1][1] != level:
                        self.sideset_log.append((before.clock, level))
                while after.receive_fifo:
                    word = after.receive_fifo.popleft()
                    self._words_out += 1
                    if self.dma_table is not None:
                        byte = self.dma_table(word)
                        bisect.insort(self._dma_pending, (after.clock + DMA_CYCLES, byte * 0x01010101))
                    if self.drain is not None:
                        self.drain(before.clock, word)
                delivered = False
                while self._dma_pending and self._dma_pending[0][0] <= after.clock:
                    after.transmit_fifo.append(self._dma_pending.pop(0)[1])  # a byte fills all 4 lanes
                    delivered = True
                if opcode & 0xE0E0 == 0x6000:  # OUT PINS
                    engine = self.program.engine
                    mask = ((1 << engine.out_count) - 1) << engine.out_base
                    self.out_latch = (self.out_latch & ~mask) | (after.pin_values & mask)
                if self.on_step is not None:
                    self.on_step(before, after)
                self.state = after
                horizon = min(wave.next_change(after.clock), until)
                if self._dma_pending:
                    horizon = min(horizon, self._dma_pending[0][0])
                stalled = (
                    before.program_counter == after.program_counter
                    and after.clock == before.clock + 1
                    and not delivered
                )
                if stalled and opcode >> 13 in (OPCODE_WAIT, OPCODE_PUSH_PULL) and horizon > after.clock + 1:
                    skip_to = replace(after, clock=horizon)
                    break
                pc = after.program_counter
                signature = self._signature(after)
                seen = visits.get(pc)
                visits[pc] = (signature, after.clock, after.x_register)
                if seen is None or seen[0] != signature or wave.next_change(seen[1]) <= after.clock:
                    continue
                period = after.clock - seen[1]
                if (seen[2] - after.x_register) & 0xFFFFFFFF != 1:
                    continue
                passes = (horizon - after.clock) // period - 1
                if 0 < passes < after.x_register:
                    skip_to = replace(
                        after, clock=after.clock + passes * period, x_register=after.x_register - passes
                    )
                    break
            if skip_to is None:
                break
            self.state = skip_to
