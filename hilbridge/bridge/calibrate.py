"""Learning a cartridge profile from practice battles: which screen fields carry winner and units.

The players fight practice battles and type what the screen shows at the end (the winner, and the
units each side has left). For every battle we have the characters on screen (`screen_chars`) and
their answers. A *run* is a sequence of characters of one screen row, left to right. A units field
is a run that reads as the typed number in the battles; the winner field is a run whose text is the
same in every battle the same side won and differs between the sides. Of the runs that agree with
the most battles, the longest (a run inside another is dropped, and characters blank in every battle
are trimmed from its ends) is the field; other such runs are kept as alternatives, so a later reading
where they disagree is reported as ambiguous rather than guessed.

The report says how sure the result is: per field, how many battles agree and which alternatives
remained.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from hilbridge.bridge.profile import ROLES, Cell, Profile, ScreenField, ScreenLayout
from hilbridge.bridge.screen import screen_chars
from hilbridge.errors import HilbridgeError

MAX_RUN = 8  # characters in a field


@dataclass(frozen=True, slots=True)
class PracticeBattle:
    """The screen at the end of a practice battle, and what the players typed from it."""

    screen: Mapping[Cell, str]  # cell -> printed character
    winner: str  # "attacker" or "defender"
    units: Mapping[str, int]


def practice_battle(
    registers: bytes | bytearray, winner: str, units: Mapping[str, int], region: str = "ntsc"
) -> PracticeBattle:
    if winner not in ROLES:
        raise HilbridgeError(f"the winner is the attacker or the defender, not {winner!r}")
    screen = {(char.y, char.x): char.text for char in screen_chars(registers, region)}
    return PracticeBattle(screen, winner, dict(units))


def _runs(battles: Sequence[PracticeBattle]) -> list[tuple[Cell, ...]]:
    """Every run of up to MAX_RUN cells of a row, trimmed of cells blank in every battle."""
    cells = sorted({cell for battle in battles for cell in battle.screen})
    always_blank = {cell for cell in cells if all(battle.screen.get(cell, " ") == " " for battle in battles)}
    rows: dict[int, list[Cell]] = {}
    for cell in cells:
        rows.setdefault(cell[0], []).append(cell)
    runs: set[tuple[Cell, ...]] = set()
    for row in rows.values():
        for start in range(len(row)):
            for end in range(start + 1, min(start + MAX_RUN, len(row)) + 1):
                run = row[start:end]
                while run and run[0] in always_blank:
                    run = run[1:]
                while run and run[-1] in always_blank:
                    run = run[:-1]
                if run:
                    runs.add(tuple(run))
    return sorted(runs)


def _text(battle: PracticeBattle, run: tuple[Cell, ...]) -> str:
    return "".join(battle.screen.get(cell, " ") for cell in run).strip()


def _longest(runs: list[tuple[Cell, ...]]) -> list[tuple[Cell, ...]]:
    """The runs not contained in another run of the list."""
    sets = [set(run) for run in runs]
    return [run for run, cells in zip(runs, sets, strict=True) if not any(cells < other for other in sets)]


@dataclass(frozen=True, slots=True)
class FieldFound:
    field: ScreenField
    agreeing: int  # battles whose answer the field shows
    labels: Mapping[str, str]  # the winner field's texts -> role ({} for a units field)


def _best(
    scored: list[tuple[int, tuple[Cell, ...], Mapping[str, str]]], what: str, battles: int
) -> FieldFound:
    if not scored or max(score for score, _, _ in scored) < min(2, battles):
        raise HilbridgeError(f"no screen field shows {what} in the practice battles", hint=_ANSWERS_HINT)
    best = max(score for score, _, _ in scored)
    runs = _longest([run for score, run, _ in scored if score == best])
    labels = next(labels for score, run, labels in scored if score == best and run == runs[0])
    return FieldFound(ScreenField(runs[0], tuple(runs[1:])), best, labels)


_ANSWERS_HINT = "fight more practice battles, and type exactly what the screen shows at the end"


def _units_field(battles: Sequence[PracticeBattle], role: str, runs: list[tuple[Cell, ...]]) -> FieldFound:
    scored = []
    for run in runs:
        agree = sum(_matches_number(battle, run, role) for battle in battles)
        if agree:
            scored.append((agree, run, {}))
    return _best(scored, f"the {role}'s units", len(battles))


def _matches_number(battle: PracticeBattle, run: tuple[Cell, ...], role: str) -> bool:
    text = _text(battle, run)
    return text.isdigit() and int(text) == battle.units[role]


def _winner_field(battles: Sequence[PracticeBattle], runs: list[tuple[Cell, ...]]) -> FieldFound:
    if {battle.winner for battle in battles} != set(ROLES):
        raise HilbridgeError(
            "the practice battles must include wins by the attacker and by the defender",
            hint="fight more practice battles",
        )
    scored = []
    for run in runs:
        texts = {role: Counter(_text(b, run) for b in battles if b.winner == role) for role in ROLES}
        shown = {role: texts[role].most_common(1)[0][0] for role in ROLES}
        if shown["attacker"] == shown["defender"] or not all(shown.values()):
            continue
        agree = sum(_text(battle, run) == shown[battle.winner] for battle in battles)
        scored.append((agree, run, {shown[role]: role for role in ROLES}))
    return _best(scored, "the winner", len(battles))


@dataclass(frozen=True, slots=True)
class CalibrationReport:
    battles: int
    agreeing: Mapping[str, int]  # field -> battles it agrees with
    ambiguous: tuple[str, ...]  # fields with alternatives, described

    @property
    def sure(self) -> bool:
        return not self.ambiguous and all(count == self.battles for count in self.agreeing.values())

    def to_json(self) -> dict[str, object]:
        return {
            "battles": self.battles,
            "agreeing": dict(self.agreeing),
            "ambiguous": list(self.ambiguous),
            "sure": self.sure,
        }

    def describe(self) -> str:
        lines = [
            f"{field}: {count} of {self.battles} battles agree" for field, count in self.agreeing.items()
        ]
        lines += [f"ambiguous {item}" for item in self.ambiguous]
        lines.append(
            "sure: every battle agrees, no field is ambiguous" if self.sure else "NOT sure (see above)"
        )
        return "\n".join(lines)


def learn_profile(
    battles: Sequence[PracticeBattle], name: str, sha1: str, settle_frames: int = 8
) -> tuple[Profile, CalibrationReport]:
    """The screen profile the practice battles imply, and the report of how sure it is."""
    if len(battles) < 2:
        raise HilbridgeError("calibration needs at least 2 practice battles", hint=_ANSWERS_HINT)
    runs = _runs(battles)
    winner = _winner_field(battles, runs)
    units = {role: _units_field(battles, role, runs) for role in ROLES}
    found = {"winner": winner, **{f"units.{role}": units[role] for role in ROLES}}
    report = CalibrationReport(
        len(battles),
        {field: item.agreeing for field, item in found.items()},
        tuple(
            f"{field}: other cells fit as well: "
            + ", ".join(str(list(cells)) for cells in item.field.alternatives)
            for field, item in found.items()
            if item.field.alternatives
        ),
    )
    layout = ScreenLayout(
        winner.field, dict(winner.labels), {role: units[role].field for role in ROLES}, settle_frames
    )
    return Profile(name, sha1, layout, calibration=report.to_json()), report
