"""`WebBridgeUI`: the console bridge's confirmation on the players' pages instead of the terminal.

The bridge's resolver runs in a thread of its own and blocks in `confirm` and `manual` until the
battle's players answer over HTTP (`answer_confirm`, `answer_manual`). The confirmation needs a yes
from both players of the battle, each on their own page, within `confirm_timeout` seconds; a no
from either, or the time running out, sends the battle to manual entry with the reason. A manual
entry is trusted only when both agree: one battle player enters a result, the other confirms that
exact result (or enters another, which is then shown back to the first), so a loser alone cannot
type a false one. What the console read, the messages, the entries and the reason for a manual
entry go to the battle's players only; everyone else sees only what is asked and of whom.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from hilbridge.bridge.resolver import CORRECTED, ManualEntry
from hilbridge.errors import HilbridgeError
from hilbridge.game import CombatRequest
from hilbridge.table import CONFIRM_TIMEOUT_SECONDS

MESSAGES_KEPT = 20


class Unasked(HilbridgeError):
    """An answer to a question the bridge is not asking (the page was out of date): HTTP 400."""


class BattleStopped(HilbridgeError):
    """The table was closed while the bridge waited for the players."""


@dataclass
class Question:
    """What the bridge asks the battle's players now: ``confirm`` a result or type one (``manual``).

    A manual question holds the latest `entry` and who made it until the other player agrees."""

    kind: str
    request: CombatRequest
    text: str
    result: Mapping[str, Any] | None = None
    number: int = 0  # counts the questions and entries, so that a page's answer to an older one is stale
    deadline: float | None = None  # time.monotonic() when an unconfirmed result goes to manual entry
    yes: set[str] = field(default_factory=set)
    entry: dict[str, Any] | None = None
    entered_by: str | None = None
    answer: Any = None  # None until answered (or the table closed)
    answered: threading.Event = field(default_factory=threading.Event)

    @property
    def sides(self) -> tuple[str, str]:
        return self.request.attacker, self.request.defender

    def other(self, player: str) -> str:
        attacker, defender = self.sides
        return defender if player == attacker else attacker

    def waiting_for(self) -> list[str]:
        if self.kind == "confirm":
            return sorted(set(self.sides) - self.yes)
        if self.entered_by is not None:
            return [self.other(self.entered_by)]
        return sorted(self.sides)


def _same(one: Mapping[str, Any], other: Mapping[str, Any]) -> bool:
    def strip(result: Mapping[str, Any]) -> dict[str, Any]:
        return {key: value for key, value in result.items() if key != "source"}

    return strip(one) == strip(other)


class WebBridgeUI:
    """The players' side of the bridge on the web table; `changed()` tells the table to redraw pages."""

    def __init__(self, changed: Callable[[], None], confirm_timeout: float = CONFIRM_TIMEOUT_SECONDS):
        if confirm_timeout <= 0:
            raise HilbridgeError(f"the confirmation timeout must be positive, not {confirm_timeout:g} s")
        self.changed = changed
        self.confirm_timeout = confirm_timeout
        self.messages: list[str] = []
        self.question: Question | None = None
        self.request: CombatRequest | None = None  # the battle being fought (its players see the messages)
        self._lock = threading.Lock()
        self._closed = False
        self._asked = 0

    # -- the resolver's side (its thread) ----------------------------------------------------------
    def tell(self, request: CombatRequest, text: str) -> None:
        self._say(request, text)
        self.changed()

    def confirm(self, request: CombatRequest, result: Mapping[str, Any], text: str) -> str | None:
        self._say(request, text)
        question = Question("confirm", request, text, dict(result))
        question.deadline = time.monotonic() + self.confirm_timeout
        answer = self._ask(question, self.confirm_timeout)
        if answer is None:  # the time ran out
            waiting = ", ".join(question.waiting_for())
            return (
                f"the console's result was not confirmed within {self.confirm_timeout:g} s"
                f" (waiting for {waiting})"
            )
        return None if answer else CORRECTED

    def _say(self, request: CombatRequest, text: str) -> None:
        with self._lock:
            self.request = request
            self.messages = [*self.messages, text][-MESSAGES_KEPT:]

    def manual(self, request: CombatRequest, reason: str) -> ManualEntry:
        answer = self._ask(Question("manual", request, reason), None)
        assert isinstance(answer, ManualEntry)
        return answer

    def _ask(self, question: Question, timeout: float | None) -> Any:
        """Wait for the answer to `question`: None when `timeout` ran out first."""
        with self._lock:
            if self._closed:
                raise BattleStopped("the table was closed during the console battle")
            self._number(question)
            self.request, self.question = question.request, question
        self.changed()
        question.answered.wait(timeout)
        with self._lock:
            self.question = None
            answer, closed = question.answer, self._closed
        if closed:
            raise BattleStopped("the table was closed during the console battle")
        return answer

    def _number(self, question: Question) -> None:
        self._asked += 1
        question.number = self._asked

    def finished(self) -> None:
        """The battle's result is in the game: its messages go."""
        with self._lock:
            self.messages, self.question, self.request = [], None, None

    def close(self) -> None:
        """Release a resolver that waits for an answer (the server stops)."""
        with self._lock:
            self._closed = True
            question = self.question
        if question is not None:
            question.answered.set()

    # -- the players' side (HTTP) -----------------------------------------------------------------
    def _asking(self, player: str, *kinds: str) -> Question:
        question = self.question
        if question is None or question.kind not in kinds:
            wanted = "a confirmation" if kinds == ("confirm",) else "a result"
            raise Unasked(f"the console bridge is not asking for {wanted}")
        if player not in question.sides:
            raise Unasked(
                f"only {question.request.attacker} or {question.request.defender} answers for this battle"
            )
        return question

    def answer_confirm(self, player: str, yes: bool) -> tuple[str, bool]:
        """A battle player's yes or no to the console's result, or yes to the other player's manual
        entry: what the page should say, and whether the question is answered."""
        with self._lock:
            question = self._asking(player, "confirm", "manual")
            if question.kind == "manual":
                return self._agree(question, player, yes), True
            if not yes:
                question.answer = False
            else:
                question.yes.add(player)
                if question.yes >= set(question.sides):
                    question.answer = True
            done = question.answer is not None
        if done:
            question.answered.set()
        else:
            self.changed()
        if not yes:
            return "corrected: enter the result the screen shows", done
        return ("confirmed" if done else "confirmed; waiting for the other player of the battle"), done

    def _agree(self, question: Question, player: str, yes: bool) -> str:
        """`player` confirms the other's manual entry (called with the lock held)."""
        if question.entry is None or question.entered_by in (None, player):
            raise Unasked(f"there is no entry of {question.other(player)} for you to confirm")
        if not yes:
            raise Unasked("to disagree, enter the result the screen shows")
        question.answer = ManualEntry(question.entry, question.entered_by, player)
        question.answered.set()
        return f"confirmed {question.entered_by}'s entry"

    def answer_manual(self, player: str, result: dict[str, Any]) -> tuple[str, bool]:
        """A battle player's entry: it agrees with the other's (the question is answered), or it
        is the new entry the other player must confirm. Returns what the page should say and
        whether the question is answered."""
        with self._lock:
            question = self._asking(player, "manual")
            before, by = question.entry, question.entered_by
            if before is not None and by is not None and by != player and _same(before, result):
                return self._agree(question, player, True), True
            question.entry, question.entered_by = dict(result), player
            self._number(question)
            other = question.other(player)
        self.changed()
        if before is not None and by == other:
            return f"your result differs from {other}'s; waiting for {other} to confirm yours", False
        return f"entered; waiting for {other} to confirm it", False

    def asked_of(self, player: str) -> dict[str, Any]:
        """The bridge's part of the battle prompt as `player` may see it."""
        with self._lock:
            question, request, messages = self.question, self.request, list(self.messages)
        seen: dict[str, Any] = {"state": "fighting" if question is None else question.kind}
        if question is not None:
            seen["waiting_for"] = question.waiting_for()
            if question.deadline is not None:
                seen["seconds_left"] = round(max(0.0, question.deadline - time.monotonic()), 1)
        if request is not None and player in (request.attacker, request.defender):
            seen["messages"] = messages
            if question is not None:
                seen["question"] = question.number
                seen["text"] = question.text
                seen["result"] = dict(question.result) if question.result is not None else None
                seen["you_confirmed"] = player in question.yes
                if question.entry is not None:
                    seen["entry"] = {"result": dict(question.entry), "entered_by": question.entered_by}
        return seen
