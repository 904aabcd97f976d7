"""The VDC records each MAME screen update as one raster range (`Vdc._update_now`,
`Vdc._draw_since_update`); MAME draws it in up to three cliprects: the rest of the line the last
update stopped in, the whole lines after it (update_partial) and the part of the beam's line
(update_now). This replays MAME's steps as written and checks that they draw the same pixels, in
the same order, and leave the drawing stopped at the same place."""

from __future__ import annotations

from hypothesis import example, given
from hypothesis import strategies as st

from hilbridge.machine.timing import NTSC
from hilbridge.machine.vdc import Vdc
from hilbridge.machine.video import VISIBLE_LINES, VISIBLE_WIDTH

LAST_LINE, LAST_X = VISIBLE_LINES - 1, VISIBLE_WIDTH - 1


def add_run(runs: list[tuple[int, int]], start: int, end: int) -> None:
    """Append raster indices start..end-1 to `runs`, the drawing order kept as runs of consecutive
    indices: two sequences are equal exactly when their runs are, and comparing runs after each
    update costs far less than comparing every index drawn so far (up to a whole frame's)."""
    if start >= end:
        return
    if runs and runs[-1][1] == start:
        runs[-1] = (runs[-1][0], end)
    else:
        runs.append((start, end))


class MameUpdates:
    """MAME 0.251's screen_device::update_now / update_partial bookkeeping, cliprect by cliprect."""

    def __init__(self) -> None:
        self.last_line = 0
        self.last_hpos = 0
        self.drawn: list[tuple[int, int]] = []  # runs of raster indices, in drawing order

    def _draw(self, y0: int, y1: int, x0: int, x1: int) -> None:
        for line in range(y0, y1 + 1):
            add_run(self.drawn, line * VISIBLE_WIDTH + x0, line * VISIBLE_WIDTH + x1 + 1)

    def update_partial(self, scanline: int) -> None:
        if scanline < self.last_line:
            return
        y0, y1 = self.last_line, min(LAST_LINE, scanline)
        if y0 > y1:
            return
        self._draw(y0, y1, 0, LAST_X)
        self.last_line = scanline + 1
        self.last_hpos = 0

    def finish_line(self) -> None:
        if self.last_hpos > 0:
            if self.last_line <= LAST_LINE and self.last_hpos <= LAST_X:
                self._draw(self.last_line, self.last_line, self.last_hpos, LAST_X)
            self.last_hpos = 0
            self.last_line += 1

    def update_now(self, line: int, hpos: int) -> None:
        if line < self.last_line or (line == self.last_line and hpos == self.last_hpos):
            return
        if line > self.last_line:
            self.finish_line()
            if line > self.last_line:
                self.update_partial(line - 1)
        if hpos > 0 and line <= LAST_LINE:
            x0, x1 = self.last_hpos, min(LAST_X, hpos - 1)
            if x0 <= x1:
                self._draw(line, line, x0, x1)
        self.last_line, self.last_hpos = line, hpos

    def end_frame(self) -> None:
        self.finish_line()
        self.update_partial(LAST_LINE)
        self.last_line = self.last_hpos = 0


updates = st.lists(
    st.one_of(
        st.tuples(st.integers(0, 262), st.integers(0, NTSC.htotal - 1)),
        st.tuples(st.integers(0, 3), st.integers(0, 3)),
        st.tuples(st.integers(238, 250), st.integers(350, 370)),
        st.just(None),  # the frame ends
    ),
    max_size=30,
)


@given(updates=updates)
@example(updates=[(5, 400), (5, 100), (6, 0), (243, 10), None, (0, 359), (0, 360), (1, 1)])
def test_one_range_per_update_draws_what_mames_cliprects_draw(
    updates: list[tuple[int, int] | None],
) -> None:
    vdc = Vdc(NTSC)
    drawn: list[tuple[int, int]] = []
    vdc.renderer.add_range = lambda start, end, picture, lum: add_run(drawn, start, end)  # type: ignore[method-assign]
    mame = MameUpdates()
    for update in updates:
        if update is None:
            vdc._draw_since_update(VISIBLE_LINES * VISIBLE_WIDTH)
            vdc._last_line = vdc._last_hpos = 0
            mame.end_frame()
        else:
            vdc._update_now(*update)
            mame.update_now(*update)
        assert drawn == mame.drawn
        assert (vdc._last_line, vdc._last_hpos) == (mame.last_line, mame.last_hpos)
