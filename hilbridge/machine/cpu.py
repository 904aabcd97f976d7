"""The Intel 8048 core: state, `step()` and the timer, cycle-exact as MAME 0.251 runs it
(docs/hardware.md, "The 8048").

What each instruction does is written once, per form, in `hilbridge.machine.semantics`; at start-up
one Python function per opcode is generated from it. A handler takes the address after its opcode
byte and the cycle at the *end* of the instruction (MAME burns the cycles before the I/O) and returns
the next PC. The fast loop (`run_until`) runs handlers and compiled straight-line blocks
(`hilbridge.machine.blocks`) back to back while nothing can happen; everything that needs care
(interrupt entry, timer overflow, counter mode, the JNI hack, bus tracing, idle loops) goes through
`step()`, which is the reference semantics the fast loop must equal. Idle loops are found by
`hilbridge.machine.idle` and skipped exactly. While fetches are traced (`trace_fetches`), blocks
with a fetch table may still run whole (`trace_blocks`, for a board that puts a block's fetches in
their place among its accesses): the board is told their fetches in one call after the block
(`Board.program_fetches`); everything else is stepped.

The CPU knows nothing about the console: it talks to a `Board` (`hilbridge.machine.board`): pins
stamped with the machine cycle of each access, and fast-forward hints for skipping time.
Program memory is one 4 KB bytearray, `prog`, that the board keeps up to date (BIOS + the current
cartridge bank); reads never go through a call.
"""

from __future__ import annotations

from collections.abc import Callable
from operator import itemgetter

from hilbridge.machine import idle
from hilbridge.machine.blocks import (
    BLOCK_HOT,
    COVERED_DELAY,
    CYCLE_SHIFT,
    Block,
    BlockSource,
    FetchTable,
    block_source,
    countdown_at,
    countdown_source,
)
from hilbridge.machine.board import Board
from hilbridge.machine.semantics import CYCLES, HANDLERS_CODE, LENGTHS, NEXT_PC, TABLES
from hilbridge.mcs48 import INSTRUCTIONS

C_FLAG = 0x80
AC_FLAG = 0x40
F0_FLAG = 0x20
BS_FLAG = 0x10
TIMER_PRESCALE = 32
NEVER = 1 << 62

TIMER_STOPPED, TIMER_RUNNING, COUNTER_RUNNING = 0, 1, 2
HEAD: tuple[()] = ()
"""`blocks[pc]` of a spin anchor (`hilbridge.machine.idle`): the fast loop hands it to step()."""
IdleEntry = tuple[
    Callable[[bytearray], object], object, bool | None, bool | None, "idle.Ports | None", "idle.Loop | None"
]
"""A cached idle analysis: the internal RAM bytes it depended on (getter) and their values, the T1
and /INT values and the ports it saw (None: not looked at), its result."""
SHORT_SKIP = 4
"""Iterations a spin anchor's skip must save to count as a success (fewer cost more than they save)."""
GIVE_UP = 16
"""Failed idle analyses in a row after which an anchor is no longer tried."""
TRY_COST = 48
"""Cycles of running the loop that one skip try costs as much time as (the fast loop's stop, `step()`,
the cached analysis): an anchor that has skipped is given up when its tries cost more than they save."""
CREDIT_CAP = 1 << 16
"""Cycles of saving an anchor keeps to its credit (a long wait pays for that many cycles' tries)."""
VARIANTS_KEPT = 4096
"""Blocks' variants for other banks and stack depths kept (`Cpu.block_variant`); then they start over."""


def _nothing(ram: bytearray) -> tuple[()]:
    return ()


ViewCode = tuple[list[Block | bool | None], bytearray, bytearray, dict[int, bool]]
"""What the fast loop keeps per program view: `Cpu.blocks`, `Cpu.visits`, `Cpu.covered` and
`Cpu.spin_paths`."""


def _fresh_code() -> ViewCode:
    return [None] * 0x1000, bytearray(0x1000), bytearray(0x1000), {}


class Cpu:
    """8048 state plus the generated handlers bound to this instance's memories and board."""

    __slots__ = (
        "a",
        "a11",
        "anchor_credit",
        "anchor_failures",
        "anchor_visits",
        "block_hot",
        "block_names",
        "block_sets",
        "blocks",
        "board",
        "bus",
        "code_switched",
        "covered",
        "cycle",
        "f1",
        "handlers",
        "idle_loops",
        "irq_in_progress",
        "irq_polled",
        "jump_a11",
        "last_read_pc",
        "p1",
        "p2",
        "pc",
        "poll_anchors",
        "poll_paths",
        "prog",
        "psw",
        "ram",
        "rb",
        "replaced",
        "skip_idle",
        "skip_traced",
        "spin_paths",
        "stop",
        "t1_history",
        "target",
        "timer_base",
        "timer_event",
        "timer_flag",
        "timer_mode",
        "timer_overflow",
        "timer_prescaler",
        "timer_start_value",
        "tirq_enabled",
        "trace_blocks",
        "trace_fetches",
        "trace_first_fetches_after",
        "variants",
        "visits",
        "watch_read",
        "xirq_enabled",
    )

    def __init__(self, board: Board, prog: bytearray) -> None:
        self.board = board
        self.prog = prog
        self.ram = bytearray(64)
        namespace: dict[str, object] = {
            "P": prog,
            "M": self.ram,
            "C": self,
            "B": board,
            **TABLES,
        }
        self.block_names = dict(namespace)  # blocks take these as default arguments: nothing else
        exec(HANDLERS_CODE, namespace)
        self.block_sets: dict[object, ViewCode] = {}
        # per PC: the compiled block, False for none, None for not yet; while not yet compiled, the
        # times run one by one; inside a compiled block, the COVERED_DELAY rounds left; whether a
        # static path leads back to it (`idle.may_return`, asked again at each round otherwise)
        self.blocks, self.visits, self.covered, self.spin_paths = _fresh_code()
        self.code_switched = False
        # per (block function, register bank, stack pointer) elsewhere than compiled for: the
        # variant compiled for them, or the times run one instruction at a time so far
        self.variants: dict[tuple[object, int, int], Callable[[int, bool], int] | int] = {}
        self.block_hot = BLOCK_HOT  # tests set 1 to compile every block at once
        self.replaced: set[int] = set()  # opcodes whose handler `replace_handler` changed
        self.handlers: list[Callable[[int, int], int]] = [namespace[f"op_{op:02X}"] for op in range(256)]  # type: ignore[misc]
        self.trace_fetches = False
        # a board that orders a block's bulk fetches among its accesses itself sets this
        self.trace_blocks = False
        # and this when it needs no call at a block's first fetch, before the block runs (it reads
        # nothing there that the block could change): the block's whole table then comes after it
        self.trace_first_fetches_after = False
        self.skip_idle = True
        self.target = NEVER
        self.last_read_pc = -1
        # whether `vdc_read` may do anything at the MOVX read under way (the board calls it only
        # then): every read sets it, a block's read that heads no poll to whether /INT may interrupt
        self.watch_read = True
        self.skip_traced = False
        # per anchor, registers and inputs: (RAM getter, its values, the loop found) for each RAM
        self.idle_loops: dict[tuple[object, ...], list[IdleEntry]] = {}
        self.poll_anchors: dict[int, bool] = {}  # per PC after a VDC read: worth analysing?
        self.poll_paths: dict[tuple[int, int], bool] = {}  # per (PC, MOVX): may it lead back?
        self.anchor_failures: dict[int, int] = {}  # per anchor: failed tries, -1 once one skipped
        self.anchor_visits: dict[int, int] = {}  # per anchor: the cycle of the last try
        self.anchor_credit: dict[int, int] = {}  # per spin anchor that skipped: cycles saved - tries' cost
        self.cycle = 0
        self.a = 0
        self.psw = 0
        self.reset()

    # -- reset and state --------------------------------------------------------------------------
    def reset(self) -> None:
        """Reset as MAME does: PC 0, ports FFh, interrupts and timer off, A11 = 0; C/AC survive."""
        self.pc = 0
        self.psw &= C_FLAG | AC_FLAG
        self.rb = 0
        self.a11 = 0
        self.jump_a11 = 0
        self.bus = 0xFF
        self.p1 = 0xFF
        self.p2 = 0xFF
        self.f1 = 0
        self.xirq_enabled = False
        self.tirq_enabled = False
        self.irq_in_progress = False
        self.irq_polled = -1
        self.timer_overflow = False
        self.timer_flag = False
        self.timer_mode = TIMER_STOPPED
        self.timer_start_value = 0
        self.timer_prescaler = 0
        self.timer_base = self.cycle
        self.timer_event = NEVER
        self.t1_history = 0
        self.stop = 0
        self.board.bus_write(0xFF, self.cycle)
        self.board.port_write(1, 0xFF, self.cycle)
        self.board.port_write(2, 0xFF, self.cycle)

    STATE_FIELDS = (
        "a",
        "a11",
        "bus",
        "cycle",
        "f1",
        "irq_in_progress",
        "irq_polled",
        "jump_a11",
        "p1",
        "p2",
        "pc",
        "psw",
        "rb",
        "t1_history",
        "timer_base",
        "timer_flag",
        "timer_mode",
        "timer_overflow",
        "timer_prescaler",
        "timer_start_value",
        "tirq_enabled",
        "xirq_enabled",
    )

    def state(self) -> dict[str, object]:
        if self.timer_mode == COUNTER_RUNNING:
            self._fold_counter(self.cycle)
        fields: dict[str, object] = {name: int(getattr(self, name)) for name in self.STATE_FIELDS}
        fields["ram"] = bytes(self.ram)
        return fields

    def load_state(self, state: dict[str, object]) -> None:
        for name in self.STATE_FIELDS:
            value = int(state[name])  # type: ignore[call-overload]
            current = getattr(self, name)
            setattr(self, name, bool(value) if isinstance(current, bool) else value)
        self.ram[:] = state["ram"]  # type: ignore[index]
        self._update_timer_event()
        self.stop = 0

    # -- registers for tests and debuggers --------------------------------------------------------
    def register(self, number: int) -> int:
        return self.ram[self.rb + number]

    def set_register(self, number: int, value: int) -> None:
        self.ram[self.rb + number] = value & 0xFF

    # -- timer/counter (lazy: the value is computed from the cycle, overflow is an event) ----------
    # In counter mode MAME samples T1 once per burnt cycle; the samples at cycles timer_base and
    # later are not counted yet, t1_history holds the last two counted ones (bit 0 the latest).
    def timer_value(self, cycle: int) -> int:
        if self.timer_mode == TIMER_RUNNING:
            ticks = (self.timer_prescaler + cycle - self.timer_base) >> 5
            return (self.timer_start_value + ticks) & 0xFF
        if self.timer_mode == COUNTER_RUNNING:
            self._fold_counter(cycle)
        return self.timer_start_value

    def _settle_timer(self, cycle: int) -> None:
        """Fold the time (or the T1 samples) since `timer_base` into the value and the prescaler."""
        if self.timer_mode == TIMER_RUNNING:
            total = self.timer_prescaler + cycle - self.timer_base
            self.timer_start_value = (self.timer_start_value + (total >> 5)) & 0xFF
            self.timer_prescaler = total & 31
        elif self.timer_mode == COUNTER_RUNNING:
            self._fold_counter(cycle)
        self.timer_base = cycle

    def _fold_counter(self, cycle: int) -> None:
        """Count the falling T1 edges in the samples at cycles timer_base..cycle-1 (the board counts
        them without sampling every cycle); an overflow on the way sets the flags as MAME's would."""
        first, last = self.timer_base, cycle - 1
        if last < first:
            return
        board = self.board
        previous = self.t1_history & 1
        edges = board.t1_falls(previous, first, last)
        before_last = board.t1(last - 1) if last > first else previous
        self.t1_history = (2 if before_last else 0) | (1 if board.t1(last) else 0)
        value = self.timer_start_value + edges
        for _ in range(value >> 8):
            self._overflowed()
        self.timer_start_value = value & 0xFF
        self.timer_base = cycle

    def _update_timer_event(self) -> None:
        """The first end-of-instruction cycle whose burn reaches the overflow."""
        if self.timer_mode == TIMER_RUNNING:
            remaining = (256 - self.timer_start_value) * TIMER_PRESCALE - self.timer_prescaler
            self.timer_event = self.timer_base + remaining
        elif self.timer_mode == COUNTER_RUNNING:
            edges = 256 - self.timer_start_value
            sample = self.board.t1_fall_sample(self.t1_history & 1, self.timer_base, edges)
            self.timer_event = sample + 1
        else:
            self.timer_event = NEVER

    def set_timer(self, value: int, cycle: int) -> None:
        self._settle_timer(cycle)
        self.timer_start_value = value & 0xFF
        self._update_timer_event()
        self.stop = 0

    def start_timer(self, cycle: int) -> None:
        self._settle_timer(cycle)
        self.timer_mode = TIMER_RUNNING
        self.timer_prescaler = 0
        self._update_timer_event()
        self.stop = 0

    def start_counter(self, cycle: int) -> None:
        self._settle_timer(cycle)
        if self.timer_mode != COUNTER_RUNNING:
            self.t1_history = 1 if self.board.t1(cycle) else 0
        self.timer_mode = COUNTER_RUNNING
        self._update_timer_event()
        self.stop = 0

    def stop_timer(self, cycle: int) -> None:
        self._settle_timer(cycle)
        self.timer_mode = TIMER_STOPPED
        self._update_timer_event()
        self.stop = 0

    def _overflowed(self) -> None:
        self.timer_flag = True
        # An overflow with the timer interrupt disabled is not remembered (MAME; Intel manual).
        if self.tirq_enabled:
            self.timer_overflow = True

    def _burn(self, start: int, count: int) -> int:
        """Advance timer or counter over `count` cycles from `start` (MAME burn_cycles); new cycle."""
        end = start + count
        mode = self.timer_mode
        if mode == TIMER_RUNNING:
            if end >= self.timer_event:
                self._settle_timer(end)
                self._overflowed()
                self._update_timer_event()
        elif mode == COUNTER_RUNNING and end >= self.timer_event:
            self._fold_counter(end)
            self._update_timer_event()
        return end

    def expander(self, operation: int, port: int, cycle: int) -> None:
        board = self.board
        self.p2 = (self.p2 & 0xF0) | (operation << 2) | (port & 3)
        board.port_write(2, self.p2, cycle)
        if operation:
            self.p2 = (self.p2 & 0xF0) | (self.a & 0x0F)
            board.port_write(2, self.p2, cycle)
        else:
            self.p2 |= 0x0F
            board.port_write(2, self.p2, cycle)
            self.a = board.port_read(2, cycle) & 0x0F

    # -- execution --------------------------------------------------------------------------------
    def _interrupt_pending(self, cycle: int) -> bool:
        if self.irq_in_progress:
            return False
        if self.xirq_enabled and self.board.irq(cycle):
            return True
        return self.tirq_enabled and self.timer_overflow

    def _refresh_stop(self) -> None:
        """The first end-of-instruction cycle the fast loop must not reach without `step()`."""
        self._refresh_stop_at(self.cycle)

    def _refresh_stop_at(self, cycle: int) -> None:
        """`_refresh_stop` for the end of an instruction at `cycle` (the fast loop keeps the cycle
        in a local, so handlers pass theirs)."""
        if (
            (self.trace_fetches and not self.trace_blocks)
            or self.code_switched  # the fast loop must fetch the new view's blocks first
            or self.irq_polled >= 0  # the next boundary must see (and clear) the JNI hack
            or self._interrupt_pending(cycle)
        ):
            self.stop = cycle
        elif self.xirq_enabled and not self.irq_in_progress:
            # only a rising /INT can make an interrupt pending; T1 is sampled where it is tested
            self.stop = min(self.timer_event, self.board.next_irq_event(cycle), self.target)
        else:
            self.stop = min(self.timer_event, self.target)  # the run's end too: one test a loop

    def vdc_written(self, cycle: int) -> None:
        """A MOVX write reached the VDC at `cycle`: it may have moved the next /INT (e.g. an
        interrupt enable), so the fast loop's stop is recomputed there, as `step()` would."""
        self._refresh_stop_at(cycle)

    def vdc_read(self, cycle: int) -> None:
        """A MOVX read reached the VDC at `cycle` (it may clear /INT or move its next rise). If the
        read can anchor an idle loop, `step()` runs next to try skipping it; otherwise the fast
        loop goes on with its stop recomputed as `step()` would. The board calls it only while
        `watch_read` is set (a block clears it where this would do nothing)."""
        if self.skip_idle:
            pc = self.last_read_pc
            try:  # a subscript, not a `get` call: hundreds of reads a frame, a miss once per PC
                known = self.poll_anchors[pc]
            except KeyError:
                known = self.heads_poll(pc)
            if known:
                self.stop = 0
                return
        if self.xirq_enabled and not self.irq_in_progress:
            self._refresh_stop_at(cycle)
        # else nothing a read changes (/INT is masked) moves the stop

    def heads_poll(self, pc: int) -> bool:
        """Whether `vdc_read` tries the poll anchored at `pc` (after a MOVX read): statically it
        may (`idle.may_return`, per program view) and it has not been given up. A block's read
        where it does not only has `vdc_read` called while /INT may interrupt (`blocks.QUIET_READ`)."""
        known = self.poll_anchors.get(pc)
        if known is None:
            movx_pc = (pc & 0x800) | ((pc - 1) & 0x7FF)
            known = self.poll_anchors[pc] = idle.may_return(self.prog, pc, movx_pc, allow_movx=True)
        return known

    def _take_interrupts(self) -> None:
        """MAME check_irqs: external /INT (vector 3) before the timer (vector 7); entry costs 2."""
        if self.irq_in_progress:
            return
        cycle = self.cycle
        external = self.xirq_enabled and self.board.irq(cycle)
        if not external and not (self.tirq_enabled and self.timer_overflow):
            return
        self.cycle = self._burn(cycle, 2)
        self.irq_in_progress = True
        self.jump_a11 = 0
        if external:
            if self.irq_polled >= 0:
                # MAME's JNI hack: the JNI that just fell through is taken after all.
                operand = self.irq_polled
                self.pc = (operand & 0xF00) | self.prog[operand]
            vector = 0x03
        else:
            self.timer_overflow = False
            vector = 0x07
        pc = self.pc
        sp = self.psw & 7
        self.ram[8 + 2 * sp] = pc & 0xFF
        self.ram[9 + 2 * sp] = ((pc >> 8) & 0x0F) | (self.psw & 0xF0)
        self.psw = (self.psw & 0xF0) | ((sp + 1) & 7)
        self.pc = vector

    def step(self) -> None:
        """One MAME execute_run iteration: the interrupt check, then one instruction."""
        if self.skip_idle:
            if self.last_read_pc == self.pc:
                self._skip_polling_loop()
            elif self.blocks[self.pc] is HEAD:
                self._skip_spin_loop()
        self.last_read_pc = -1
        self._take_interrupts()
        self.irq_polled = -1
        pc = self.pc
        prog = self.prog
        opcode = prog[pc]
        start = self.cycle
        if self.trace_fetches:
            self._trace_fetch(pc, opcode, start)
        end = self._burn(start, CYCLES[opcode])
        self.cycle = end
        self.pc = self.handlers[opcode]((pc & 0x800) | ((pc + 1) & 0x7FF), end)
        self._refresh_stop()

    def _trace_fetch(self, pc: int, opcode: int, cycle: int) -> None:
        fetch = self.board.program_fetch
        fetch(pc, cycle)
        operand = (pc & 0x800) | ((pc + 1) & 0x7FF)
        if LENGTHS[opcode] == 2:
            fetch(operand, cycle)
        mnemonic = INSTRUCTIONS[opcode].mnemonic
        if mnemonic in ("MOVP", "JMPP"):
            fetch((operand & 0xF00) | self.a, cycle)
        elif mnemonic == "MOVP3":
            fetch(0x300 | self.a, cycle)

    # -- exact idle-loop skipping (the analysis is hilbridge.machine.idle) ----------------------------
    def _skip_polling_loop(self) -> None:
        """Skip iterations of an idle loop anchored after the MOVX read that just ended (at X - 1)."""
        pc = self.pc
        movx_pc = (pc & 0x800) | ((pc - 1) & 0x7FF)
        opcode = self.prog[movx_pc]
        if opcode in (0x80, 0x81):
            self._skip_loop(pc, movx_pc, self.ram[self.rb | (opcode & 1)])

    def _switched_code(self, cycle: int) -> tuple[list[Block | bool | None], bytearray]:
        """After a bank switch: the new view's blocks and visits for the fast loop, its stop again."""
        self.code_switched = False
        self._refresh_stop_at(cycle)
        return self.blocks, self.visits

    def _skip_spin_loop(self) -> None:
        """Skip iterations of an idle loop anchored at the PC (a backward branch's target)."""
        self._skip_loop(self.pc, -1, -1)

    def _skip_loop(self, anchor: int, movx_pc: int, address: int) -> None:
        """Jump over whole iterations of the idle loop at `anchor` (`idle.run_iteration`), up to the
        run target, a timer overflow, the next /INT rise (interrupts enabled) and the horizons of
        the loop's inputs; A ends as the last skipped read left it (`peek_read`). Skipped reads are
        replayed to the board (`repeat_reads`); while fetches are traced (`skip_traced`, for a board
        that merges them by cycle: `trace_blocks`), the skipped iterations' fetches too."""
        if self.trace_fetches and not (self.skip_traced and self.trace_blocks):
            return
        cycle = self.cycle
        if self._interrupt_pending(cycle):
            return
        board = self.board
        key = (anchor, movx_pc, self.a, self.psw, self.f1, self.jump_a11, self.timer_flag)
        known = self.idle_loops.get(key)
        if known is None:
            if len(self.idle_loops) > 1024:
                self.idle_loops.clear()
            known = self.idle_loops[key] = []
        ram = self.ram
        for guard, values, t1, irq, ports, found in known:
            if (
                guard(ram) == values
                and (t1 is None or board.t1(cycle) == t1)
                and (irq is None or board.irq(cycle) == irq)
                and (ports is None or self._ports(cycle) == ports)
            ):
                loop = found
                break
        else:
            t1, irq, ports = board.t1(cycle), board.irq(cycle), self._ports(cycle)
            state = (*key[2:], bytes(ram), t1, irq)
            reaches = self._poll_reaches(movx_pc) if movx_pc >= 0 else None
            analysis = idle.run_iteration(self.prog, anchor, movx_pc, state, ports, reaches)  # type: ignore[arg-type]
            guard = itemgetter(*analysis.touched) if analysis.touched else _nothing
            if len(known) >= 32:
                known.clear()
            loop = analysis.loop
            used_t1 = t1 if analysis.t1 else None
            used_ports = ports if analysis.ports else None
            known.append((guard, guard(ram), used_t1, irq if analysis.irq else None, used_ports, loop))
        if loop is None:
            self._anchor_failed(anchor, movx_pc)
            return
        last, self.anchor_visits[anchor] = self.anchor_visits.get(anchor, -1), cycle
        if last != cycle - loop.period:
            self._charge(anchor, movx_pc, 0)
            return  # skip from the second pass on: the iteration before ran as the skipped ones will
        horizon = min(self.target, self.timer_event)
        if loop.irq or (self.xirq_enabled and not self.irq_in_progress):
            horizon = min(horizon, board.next_irq_event(cycle))
        if loop.t1:
            horizon = min(horizon, board.next_t1_change(cycle))
        if loop.ports:
            horizon = min(horizon, board.next_input_change(cycle))
        if movx_pc >= 0:
            horizon = min(horizon, board.read_horizon(address, cycle, loop.care))
        period = loop.period
        count = (horizon - 1 - cycle) // period
        if loop.delay_register >= 0:
            count = min(count, (self.ram[loop.delay_register] - 1) & 0xFF)
        if count < SHORT_SKIP and movx_pc < 0:
            self._anchor_failed(anchor, movx_pc)  # a poll's short skips come in runs: keep trying
        elif count > 0 and self.anchor_failures.get(anchor, 0) >= 0:
            # it has skipped: a poll is never given up (its tries come with its real reads), a spin
            # anchor when its credit runs out
            self.anchor_failures[anchor] = -1
            if movx_pc < 0:
                self.anchor_credit[anchor] = 0
        self._charge(anchor, movx_pc, count * period if count > 0 else 0)
        if count <= 0:
            return
        if self.trace_fetches:
            self._replay_traced(loop, address, cycle, count)
        elif movx_pc >= 0:
            board.repeat_reads(address, cycle + period, period, count)
        if loop.delay_register >= 0:
            self.ram[loop.delay_register] = (self.ram[loop.delay_register] - count) & 0xFF
        self.cycle = cycle + count * period
        if movx_pc >= 0:
            self.a = board.peek_read(address, self.cycle)

    def _poll_reaches(self, movx_pc: int) -> idle.Reaches:
        """Whether a static path may lead from a PC back to the poll's MOVX at `movx_pc`, cached
        per program view: the analysis of a poll stops where it leaves its loop for good."""
        paths = self.poll_paths
        prog = self.prog

        def reaches(pc: int) -> bool:
            key = (pc, movx_pc)
            try:
                return paths[key]
            except KeyError:
                found = paths[key] = idle.may_return(prog, pc, movx_pc, allow_movx=True)
                return found

        return reaches

    def _ports(self, cycle: int) -> idle.Ports:
        """The port latches and what the inputs answer at `cycle` (for the idle analysis)."""
        board = self.board
        return idle.Ports(
            self.p1, self.p2, board.port_read(1, cycle), board.port_read(2, cycle), board.bus_read(cycle)
        )

    def _replay_traced(self, loop: idle.Loop, address: int, cycle: int, count: int) -> None:
        """The fetches and the poll's reads (at the end of each iteration) of `count` skipped
        iterations from `cycle`, for a board that orders them by cycle itself (`trace_blocks`): one
        iteration's fetches and the count in one call, then all the reads in one."""
        period = loop.period
        prog = self.prog
        one = tuple((offset, fetched, prog[fetched]) for fetched, offset in loop.fetches)
        self.board.repeat_fetches(FetchTable.of(one), cycle, period, count)
        if address >= 0:
            self.board.repeat_reads(address, cycle + period, period, count)

    def _anchor_failed(self, anchor: int, movx_pc: int) -> None:
        """After `GIVE_UP` failed or short skips and no long one, stop trying the anchor (it is not
        idle code, or its waits are too short to gain anything)."""
        failures = self.anchor_failures.get(anchor, 0)
        if failures < 0:
            return
        self.anchor_failures[anchor] = failures + 1
        if failures + 1 >= GIVE_UP:
            self._give_up(anchor, movx_pc)

    def _charge(self, anchor: int, movx_pc: int, saved: int) -> None:
        """Book a try of a spin anchor that has skipped: `saved` cycles skipped, `TRY_COST` spent. One
        whose tries have cost more than `GIVE_UP` tries' worth beyond what it saved (a loop that
        mostly runs a pass or two, as line-counting T1 loops do) is given up."""
        credit = self.anchor_credit.get(anchor)
        if credit is None:
            return
        credit += saved - TRY_COST
        self.anchor_credit[anchor] = credit if credit < CREDIT_CAP else CREDIT_CAP
        if credit < -GIVE_UP * TRY_COST:
            del self.anchor_credit[anchor]
            self.anchor_failures[anchor] = GIVE_UP
            self._give_up(anchor, movx_pc, compile_block=False)

    def _give_up(self, anchor: int, movx_pc: int, compile_block: bool = True) -> None:
        """No longer try the anchor: a poll anchor no longer stops the fast loop, a spin anchor gets
        its block compiled, or (`compile_block` False: it is idle code, only not worth trying
        there) runs instruction by instruction, so that a block from it does not run over another
        anchor of the loop (wait_vsync's spin is also entered at its JZ, after each interrupt)."""
        if movx_pc >= 0:
            self.poll_anchors[anchor] = False
        elif self.blocks[anchor] is HEAD:
            self.blocks[anchor] = None if compile_block else False
            self.visits[anchor] = 0

    def code_changed(self, view: object = None) -> None:
        """The program memory changed (bank switch): forget the analysed polling loops, and use the
        compiled blocks of `view` (the cartridge's bytes for this bank; None: compile anew)."""
        self.idle_loops.clear()
        self.poll_anchors.clear()
        self.poll_paths.clear()
        self.anchor_failures.clear()
        self.anchor_visits.clear()
        self.anchor_credit.clear()
        self.code_switched = True  # the fast loop holds the old lists: it stops at once and takes
        self.stop = 0  # the new ones (_refresh_stop_at keeps the stop there until it has)
        if view is None:
            self.block_sets.clear()
            self.variants.clear()
            self.blocks, self.visits, self.covered, self.spin_paths = _fresh_code()
            return
        found = self.block_sets.get(view)
        if found is None:
            if len(self.block_sets) >= 16:
                self.block_sets.clear()
            found = self.block_sets[view] = _fresh_code()
        self.blocks, self.visits, self.covered, self.spin_paths = found

    def replace_handler(self, opcode: int, handler: Callable[[int, int], int]) -> None:
        """Run `handler` for `opcode` from now on (a deviating console's DA A). Compiled blocks and
        the idle analysis both work from the instruction's own statements, so the blocks compiled so
        far are dropped, no block that holds the opcode is compiled again, and no loop is skipped any
        more: the opcode always runs through `handlers`."""
        self.handlers[opcode] = handler
        self.replaced.add(opcode)
        self.skip_idle = False
        self.code_changed(None)

    def _compile_block(self, pc: int) -> Block | bool:
        """The block starting at `pc` (compiled once per program view), or False; or `HEAD` when
        `pc` may anchor an idle loop (the fast loop then hands it to step()). A delay loop
        (`blocks.countdown_at`: `DJNZ Rn,$`, maybe after NOPs) is neither: its block runs all its
        passes up to the stop at once, as skipping would, without the analysis, and it holds no
        copy of another block's code."""
        countdown = countdown_at(self.prog, pc)
        if self.skip_idle and countdown is None and self.anchor_failures.get(pc, 0) < GIVE_UP:
            returns = self.spin_paths.get(pc)
            if returns is None:
                returns = self.spin_paths[pc] = idle.may_return(self.prog, pc, pc, allow_movx=False)
            if returns:
                self.blocks[pc] = HEAD
                return False
        rounds = self.covered[pc]
        # inside a compiled block: entered one by one after a start, an interrupt, a stop
        if rounds and countdown is None:
            self.covered[pc] = rounds - 1
            self.visits[pc] = 0
            return False
        if countdown is not None:
            found: BlockSource | None = countdown_source(self.prog, pc, countdown)
        else:
            found = block_source(self.prog, pc, self.jump_a11, self.rb, self.psw & 7, self.heads_poll)
        if found is None:
            self.blocks[pc] = False
            return False
        if self.replaced and not self.replaced.isdisjoint(self.prog[inside] for inside in found.pcs):
            self.blocks[pc] = False  # a block would run the instruction's own statements
            return False
        for inside in found.pcs[1:]:
            if self.blocks[inside] is None:
                self.covered[inside] = COVERED_DELAY
        fetches = found.fetches
        after_first = whole = None
        if fetches is not None:
            after_first, whole = FetchTable.of(fetches[1:]), FetchTable.of(fetches)
        function = self._block_function(pc, found.source)
        block = self.blocks[pc] = (function, found.cycles, after_first, whole, found.alike)  # type: ignore[assignment]
        return block

    def block_variant(self, pc: int, cycle: int, passes: bool) -> int:
        """Run the block at `pc` in the current register bank and at the current stack pointer,
        which are not those it was compiled for (its guard calls this): their variant, compiled
        once it has been asked for `block_hot` times; until then one instruction, as the fast loop
        would run it (the block runs only when all of it ends before the stop)."""
        key = (self.blocks[pc][0], self.rb, self.psw & 7)  # type: ignore[index]
        variant = self.variants.get(key, 0)
        if isinstance(variant, int):
            found = None
            if variant + 1 >= self.block_hot:
                if len(self.variants) >= VARIANTS_KEPT:
                    self.variants.clear()
                found = block_source(self.prog, pc, self.jump_a11, self.rb, self.psw & 7, self.heads_poll)
            if found is None:
                # Not hot yet; or no block here with A11 guessed as it is now (a SEL MB since the
                # block was compiled can shorten it to one instruction): counted again from 0.
                self.variants[key] = variant + 1 if variant + 1 < self.block_hot else 0
                opcode = self.prog[pc]
                end = cycle + CYCLES[opcode]
                return self.handlers[opcode](NEXT_PC[pc], end) | (CYCLES[opcode] << CYCLE_SHIFT)
            variant = self.variants[key] = self._block_function(pc, found.source)
        return variant(cycle, passes)

    def _block_function(self, pc: int, source: str) -> Callable[[int], int]:
        names = self.block_names
        exec(compile(source, f"<hilbridge 8048 block {pc:03X}>", "exec"), names)
        return names.pop("block")  # type: ignore[no-any-return]

    def _run_traced(self, target: int) -> None:
        """`run_until` while fetches are traced, until `target` or the tracing ends: a block with a
        fetch table runs whole when all of it would end before the stop (as in the fast loop); its
        first fetch goes to the board before it runs (the board sees the machine as stepping would
        at that fetch), the others in one `program_fetches` call after it; with
        `trace_first_fetches_after`, all of them after it. A delay loop's block runs all its passes
        and reports them as one `repeat_fetches`, as idle skipping does. The rest is stepped."""
        board = self.board
        hot = self.block_hot
        while self.trace_fetches:
            if self.code_switched:  # a bank switch: the new view's blocks from now on
                self.code_switched = False
                self._refresh_stop()
            cycle = self.cycle
            if cycle >= target:
                return
            pc = self.pc
            block = self.blocks[pc]
            if block:
                fetches = block[2]
                if block[4] and cycle + block[1] < self.stop:  # a delay loop: its passes at once
                    ran = block[0](cycle)
                    self.pc = ran & 0xFFF
                    self.cycle = cycle + (ran >> 12)
                    board.repeat_fetches(block[3], cycle, block[1], (ran >> 12) // block[1])
                    continue
                if fetches is not None and cycle + block[1] < self.stop:
                    after = self.trace_first_fetches_after
                    if not after:
                        board.program_fetch(pc, cycle)
                    ran = block[0](cycle, False)  # one pass: the fetch table is one pass's
                    self.pc = ran & 0xFFF
                    self.cycle = cycle + (ran >> 12)
                    if after:
                        board.program_fetches(block[3], cycle, ran >> 12)
                    elif self.trace_fetches:
                        board.program_fetches(fetches, cycle, ran >> 12)
                    continue
            elif block is None:
                count = self.visits[pc] + 1
                if count < hot:
                    self.visits[pc] = count
                else:
                    self._compile_block(pc)
                    continue
            opcode = self.prog[pc]
            end = cycle + CYCLES[opcode]
            if end < self.stop and block is not HEAD:  # one instruction as the fast loop runs it
                self._trace_fetch(pc, opcode, cycle)
                self.pc = self.handlers[opcode](NEXT_PC[pc], end)
                self.cycle = end
                continue
            self.step()

    def run_until(self, target: int) -> None:
        """Execute whole instructions while the cycle counter is below `target`."""
        self.target = target
        if self.trace_fetches and self.trace_blocks:
            self._run_traced(target)
        self._refresh_stop()
        prog = self.prog
        handlers = self.handlers
        cycles = CYCLES
        following = NEXT_PC
        pc = self.pc
        cycle = self.cycle
        blocks = self.blocks
        visits = self.visits
        hot = self.block_hot
        while True:
            block = blocks[pc]
            if block:
                end = cycle + block[1]
                if end < self.stop:  # all of it would: it returns the PC and the cycles it ran
                    ran = block[0](cycle)
                    pc = ran & 0xFFF
                    cycle += ran >> 12
                    continue
            elif block is None:
                if self.code_switched:  # the last block switched banks: the new view's lists first
                    blocks, visits = self._switched_code(cycle)
                    continue
                count = visits[pc] + 1
                if count < hot:
                    visits[pc] = count
                else:
                    self._compile_block(pc)
                    continue
            opcode = prog[pc]
            end = cycle + cycles[opcode]
            if end < self.stop and block is not HEAD:  # never past `target`: the stop is before it
                pc = handlers[opcode](following[pc], end)
                cycle = end
                continue
            if cycle >= target:
                break
            if not self.code_switched:
                self.pc = pc
                self.cycle = cycle
                self.step()
                pc = self.pc
                cycle = self.cycle
            if self.code_switched:  # a bank switch: take the new view's lists, then go on
                blocks, visits = self._switched_code(cycle)
        self.pc = pc
        self.cycle = cycle
