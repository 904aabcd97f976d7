"""`WebBridgeUI`: the console bridge's confirmation on the players' pages instead of the terminal.

The bridge's resolver runs in a thread of its own and blocks in `confirm` and `manual` until the
battle's players answer over HTTP (`answer_confirm`, `answer_manual`). The confirmation needs a yes
from both players of the battle, each on their own page; a no from either sends the battle to manual
entry (the resolver says so in the result's source). What the console read, the messages and the
reason for a manual entry go to the battle's players only: `public` is what everyone else sees.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from hilbridge.errors import HilbridgeError
from hilbridge.game import CombatRequest

MESSAGES_KEPT = 20


class Unasked(HilbridgeError):
    """An answer to a question the bridge is not asking (the page was out of date): HTTP 400."""


class BattleStopped(HilbridgeError):
    """The table was closed while the bridge waited for the players."""


@dataclass
class Question:
    """What the bridge asks the battle's players now: ``confirm`` a result or type one (``manual``)."""

    kind: str
    request: CombatRequest
    text: str
    result: Mapping[str, Any] | None = None
    number: int = 0  # counts the questions, so that a page's answer to an older one is stale
    yes: set[str] = field(default_factory=set)
    answer: Any = None
    answered: threading.Event = field(default_factory=threading.Event)


class WebBridgeUI:
    """The players' side of the bridge on the web table; `changed()` tells the table to redraw pages."""

    def __init__(self, changed: Callable[[], None]):
        self.changed = changed
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

    def confirm(self, request: CombatRequest, result: Mapping[str, Any], text: str) -> bool:
        self._say(request, text)
        return bool(self._ask(Question("confirm", request, text, dict(result))))

    def _say(self, request: CombatRequest, text: str) -> None:
        with self._lock:
            self.request = request
            self.messages = [*self.messages, text][-MESSAGES_KEPT:]

    def manual(self, request: CombatRequest, reason: str) -> dict[str, Any]:
        return dict(self._ask(Question("manual", request, reason)))

    def _ask(self, question: Question) -> Any:
        with self._lock:
            if self._closed:
                raise BattleStopped("the table was closed during the console battle")
            self._asked += 1
            question.number = self._asked
            self.request, self.question = question.request, question
        self.changed()
        question.answered.wait()
        with self._lock:
            self.question = None
        if question.answer is None:
            raise BattleStopped("the table was closed during the console battle")
        return question.answer

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
    def _asking(self, kind: str, player: str) -> Question:
        question = self.question
        if question is None or question.kind != kind:
            wanted = "a confirmation" if kind == "confirm" else "a result"
            raise Unasked(f"the console bridge is not asking for {wanted}")
        if player not in (question.request.attacker, question.request.defender):
            raise Unasked(
                f"only {question.request.attacker} or {question.request.defender} answers for this battle"
            )
        return question

    def answer_confirm(self, player: str, yes: bool) -> tuple[str, bool]:
        """A battle player's yes or no: what the page should say, and whether the question is answered."""
        with self._lock:
            question = self._asking("confirm", player)
            request = question.request
            if not yes:
                question.answer = False
            else:
                question.yes.add(player)
                if question.yes >= {request.attacker, request.defender}:
                    question.answer = True
            done = question.answer is not None
        if done:
            question.answered.set()
        else:
            self.changed()
        if not yes:
            return "corrected: enter the result the screen shows", done
        return ("confirmed" if done else "confirmed; waiting for the other player of the battle"), done

    def answer_manual(self, player: str, result: dict[str, Any]) -> None:
        with self._lock:
            question = self._asking("manual", player)
            question.answer = result
        question.answered.set()

    def asked_of(self, player: str) -> dict[str, Any]:
        """The bridge's part of the battle prompt as `player` may see it."""
        with self._lock:
            question, request, messages = self.question, self.request, list(self.messages)
        seen: dict[str, Any] = {"state": "fighting" if question is None else question.kind}
        if question is not None:
            sides = {question.request.attacker, question.request.defender}
            seen["waiting_for"] = sorted(sides - question.yes if question.kind == "confirm" else sides)
        if request is not None and player in (request.attacker, request.defender):
            seen["messages"] = messages
            if question is not None:
                seen["question"] = question.number
                seen["text"] = question.text
                seen["result"] = dict(question.result) if question.result is not None else None
                seen["you_confirmed"] = player in question.yes
        return seen
