"""The table's game: one save file, a private token per player, versioned moves and console battles.

Everything a player is sent is built here from `Game.view(player)`, the player's own legal moves
and the events that player may see, so no answer can carry another player's secret (nor the seed,
which would tell every die to come). Framework-free: `hilbridge.table.app` puts it on HTTP.
"""

from __future__ import annotations

import json
import secrets
import threading
import time
from collections.abc import Callable, Collection, Mapping
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from hilbridge.errors import HilbridgeError
from hilbridge.files import write_atomic
from hilbridge.game import CHANCE, Action, CombatRequest, CombatResolver, DiceResolver, Game
from hilbridge.game.session import SAVE_MODE
from hilbridge.game.supremacy.board import RESOURCES
from hilbridge.table import CONFIRM_TIMEOUT_SECONDS
from hilbridge.table.board_svg import draw_board, zone_names
from hilbridge.table.confirm import BattleStopped, Question, Unasked, WebBridgeUI
from hilbridge.table.messages import describe_event

TOKENS_FORMAT = "hilbridge-table-tokens"
LOG_LINES = 200
ANSWER_APPLIED_SECONDS = 10.0  # how long an answer waits to say what the confirmed result did

Validate = Callable[[dict[str, Any]], None]
BridgeFactory = Callable[[WebBridgeUI, Validate], CombatResolver]
"""Makes the combat bridge's resolver (`hilbridge.bridge.resolver.ConsoleResolver`) for the table,
given the players' side and the rules' check of a result."""


class BadRequest(HilbridgeError):
    """A request the table cannot act on (malformed, illegal, or not this player's): HTTP 400."""


class StaleMove(HilbridgeError):
    """A move made on a position that has changed since the player saw it: HTTP 409."""


@cache
def forms(game: str) -> dict[str, Any]:
    text = resources.files("hilbridge.table").joinpath("forms.json").read_text("utf-8")
    return json.loads(text).get(game, {})


def tokens_path(save: Path) -> Path:
    return save.with_name(save.name + ".tokens")


def load_tokens(save: Path, players: list[str]) -> tuple[dict[str, str], bool]:
    """The players' tokens (player -> token), kept beside the save (mode 0600) so that a restarted
    server keeps every player's URL; made anew when missing. Returns them and whether they are new."""
    path = tokens_path(save)
    if path.exists():
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as error:
            raise HilbridgeError(f"cannot read {path}: {error}; delete it to make new URLs") from None
        if data.get("format") == TOKENS_FORMAT and sorted(data.get("tokens", {})) == sorted(players):
            return dict(data["tokens"]), False
    tokens = {player: secrets.token_urlsafe(24) for player in players}
    text = json.dumps({"format": TOKENS_FORMAT, "tokens": tokens}, indent=1) + "\n"
    write_atomic(path, text.encode("utf-8"), mode=SAVE_MODE)
    return tokens, True


def _is_console_battle(request: CombatRequest) -> bool:
    return "dice" not in request.params


class Table:
    """The game behind the web table. A console battle is decided by `bridge` (the combat bridge:
    fought on the console in a thread of its own, its result confirmed or corrected on the battle
    players' pages), or by `console` (a resolver that answers at once, such as random battles);
    with neither it waits as a prompt the battle's players answer."""

    def __init__(
        self,
        save: Path,
        console: CombatResolver | None = None,
        bridge: BridgeFactory | None = None,
        confirm_timeout: float = CONFIRM_TIMEOUT_SECONDS,
    ):
        if console is not None and bridge is not None:
            raise HilbridgeError("a table decides console battles with a resolver or the bridge, not both")
        self.save_path = save
        self.game = Game.load(save)
        self.players: list[str] = list(self.game.setup["players"])
        self.tokens, self.new_tokens = load_tokens(save, self.players)
        self.console = console
        self.listeners: list[Callable[[str], None]] = []
        self._boot = secrets.token_hex(3)  # a restarted server's revisions never match old pages
        self._changes = 0
        # Moves come from several threads, and the bridge's thread redraws pages while a player's
        # answer is handled (re-entrant: that answer's thread may be the one that redraws).
        self._lock = threading.RLock()
        self.bridge_ui = WebBridgeUI(self._redraw, confirm_timeout) if bridge is not None else None
        self.bridge = bridge(self.bridge_ui, self._validate) if bridge is not None else None
        self._fight: threading.Thread | None = None
        self.bridge_failed: str | None = None  # why the bridge stopped: battles are then typed in
        with self._lock:
            if self._advance():
                self.game.save(self.save_path)

    def close(self) -> None:
        """Stop waiting for answers to the console bridge (the server stops)."""
        if self.bridge_ui is not None:
            self.bridge_ui.close()

    # -- identity and versions --------------------------------------------------------------------
    def player_for(self, token: str) -> str | None:
        """The player whose token this is (compared in constant time), or None."""
        found = None
        for player, secret in self.tokens.items():
            if secrets.compare_digest(secret.encode(), token.encode()):
                found = player
        return found

    @property
    def revision(self) -> str:
        return f"{self._boot}.{self._changes}"

    def _changed(self) -> None:
        self.game.save(self.save_path)
        self._redraw()

    def _redraw(self) -> None:
        """A new revision: every page fetches its view again (the bridge asks, or the game moved)."""
        with self._lock:
            self._changes += 1
            revision = self.revision
        for listener in list(self.listeners):
            listener(revision)

    # -- chance -----------------------------------------------------------------------------------
    def pending_battle(self) -> CombatRequest | None:
        """A console battle the players must fight (and report) before the game goes on."""
        game = self.game
        if game.is_terminal() or game.ruleset.current_players(game.state) != (CHANCE,):
            return None
        node = game.ruleset.chance_node(game.state)
        if node is None or node.combat is None or not _is_console_battle(node.combat):
            return None
        return node.combat

    def _advance(self) -> bool:
        """Roll dice and draw cards until a player must move or a console battle waits."""
        game, moved = self.game, False
        while not game.is_terminal() and game.ruleset.current_players(game.state) == (CHANCE,):
            node = game.ruleset.chance_node(game.state)
            if node is not None and node.combat is not None and _is_console_battle(node.combat):
                if self.bridge is not None and self.bridge_failed is None:
                    self._start_fight(node.combat)
                    break
                if self.console is None:
                    break
                game.step_chance(self.console)
            else:
                game.step_chance(DiceResolver())
            moved = True
        return moved

    # -- the console bridge -------------------------------------------------------------------------
    def _bridged(self) -> bool:
        """Whether console battles go through the bridge (it is there and has not failed)."""
        return self.bridge_ui is not None and self.bridge_failed is None

    def _fighting(self) -> bool:
        return self._fight is not None and self._fight.is_alive()

    def _start_fight(self, request: CombatRequest) -> None:
        """Fight `request` on the console in a thread: the bridge blocks until the players answer."""
        if self._fighting():
            return
        steps, rng = len(self.game.entries), self.game.chance_rng()
        self._fight = threading.Thread(
            target=self._fight_battle, args=(request, rng, steps), name="console battle", daemon=True
        )
        self._fight.start()

    def _fight_battle(self, request: CombatRequest, rng: Any, steps: int) -> None:
        assert self.bridge is not None and self.bridge_ui is not None
        try:
            result = self.bridge.resolve(request, rng)
        except BattleStopped:
            return
        except HilbridgeError as error:  # not a battle it could not read (those end in manual entry)
            with self._lock:
                self._fight = None
                self.bridge_failed = f"the console bridge failed: {error.message}"
                self.bridge_ui.finished()
                self._redraw()
            return
        with self._lock:
            self._fight = None
            if len(self.game.entries) != steps or self.pending_battle() != request:
                return  # cannot happen: nothing else moves while a battle is fought
            self.game.apply(Action("combat_result", CHANCE, result))
            self.bridge_ui.finished()
            self._advance()
            self._changed()

    def _validate(self, result: dict[str, Any]) -> None:
        """The rules' check of a battle result on the current position (raises `IllegalAction`)."""
        self.game.ruleset.apply(self.game.state, Action("combat_result", CHANCE, result))

    # -- what a player is sent ---------------------------------------------------------------------
    def snapshot(self, player: str) -> dict[str, Any]:
        """Everything the page shows, from the player's own view only."""
        with self._lock:
            return self._snapshot(player)

    def _snapshot(self, player: str) -> dict[str, Any]:
        game = self.game
        view = game.view(player)
        name = game.ruleset.name
        events = view.pop("events")
        moves = game.legal_actions(player)
        battle = self.pending_battle()
        winners = game.ruleset.winners(game.state) if game.is_terminal() else []
        return {
            "player": player,
            "game": name,
            "revision": self.revision,
            "over": game.is_terminal(),
            "winners": winners,
            "waiting_for": view["waiting_for"],
            "status": self._status(player, view, battle, winners),
            "board": game.ruleset.describe({**view, "events": events}),
            "svg": draw_board(game.ruleset, view),
            "moves": [{"label": _label(action), **action.to_json()} for action in moves],
            "forms": self._forms(view, player, moves),
            "battle": self._battle_view(battle, player),
            "log": [describe_event(name, item) for item in events[-LOG_LINES:]],
            "can_undo": self._may_undo(player),
        }

    def _status(
        self, player: str, view: dict[str, Any], battle: CombatRequest | None, winners: list[str]
    ) -> str:
        if self.game.is_terminal():
            return f"Game over. Winner: {', '.join(winners) or 'nobody'}"
        if battle is not None:
            fight = f"Console battle: {battle.attacker} against {battle.defender}"
            asked = self.bridge_ui.asked_of(player) if self._bridged() else None
            if asked is None:
                failed = f" ({self.bridge_failed}; enter the result by hand)" if self.bridge_failed else ""
                return f"{fight} — fight it on the console{failed}"
            if asked["state"] == "fighting":
                return f"{fight} — on the console now"
            waiting = ", ".join(asked["waiting_for"])
            if asked["state"] == "confirm":
                left = f"{asked['seconds_left']:.0f} s left"
                return f"{fight} — waiting for {waiting} to confirm the console's result ({left})"
            return f"{fight} — waiting for {waiting} to enter or confirm the result by hand"
        waiting = view["waiting_for"]
        if player in waiting:
            return "Your move" + (
                f" (also waiting for {', '.join(p for p in waiting if p != player)})"
                if len(waiting) > 1
                else ""
            )
        return f"Waiting for {', '.join(waiting) or 'nobody'}"

    def _forms(self, view: dict[str, Any], player: str, moves: list[Action]) -> list[dict[str, Any]]:
        game = self.game.ruleset.name
        first: dict[str, Action] = {}
        for action in moves:
            first.setdefault(action.kind, action)
        shown = []
        for kind, spec in forms(game).items():
            if kind not in first:
                continue
            example = first[kind].params
            fields = []
            for name, kind_of_field in spec["fields"]:
                field: dict[str, Any] = {"name": name, "default": example.get(name)}
                if isinstance(kind_of_field, list):
                    field.update(type="select", choices=kind_of_field)
                elif kind_of_field in ("count", "money"):
                    field.update(type="number", min=1 if kind_of_field == "count" else 0)
                else:
                    field.update(type="multi" if kind_of_field == "zones" else "select")
                    field["choices"] = self._choices(kind_of_field, view, player)
                fields.append(field)
            shown.append({"kind": kind, "label": spec["label"], "fields": fields})
        return shown

    def _choices(self, kind: str, view: dict[str, Any], player: str) -> list[str]:
        if kind == "player":
            return [p for p in self.players if p != player]
        if kind == "resource":
            return list(RESOURCES)
        return sorted(zone_names(self.game.ruleset, view))

    def _battle_view(self, battle: CombatRequest | None, player: str) -> dict[str, Any] | None:
        prompt = _battle_prompt(battle, player)
        ui = self.bridge_ui
        if prompt is not None and ui is not None and self.bridge_failed is None:
            prompt["bridge"] = ui.asked_of(player)
        return prompt

    def _may_undo(self, player: str) -> bool:
        if self._fighting():
            return False
        last = next((e for e in reversed(self.game.entries) if e.action.player != CHANCE), None)
        return last is not None and last.action.player == player

    # -- what a player does ----------------------------------------------------------------------
    def _check(self, body: Any, keys: set[str], optional: Collection[str] = ()) -> dict[str, Any]:
        if not isinstance(body, dict):
            raise BadRequest("the request body must be a JSON object")
        missing, unknown = keys - set(body), set(body) - keys - set(optional)
        if missing or unknown:
            raise BadRequest(
                "the request needs "
                + ", ".join(sorted(keys))
                + (f" (missing {', '.join(sorted(missing))})" if missing else "")
                + (f" (unknown {', '.join(sorted(unknown))})" if unknown else "")
            )
        if not isinstance(body["revision"], str):
            raise BadRequest("revision must be the string the page was sent")
        if body["revision"] != self.revision:
            raise StaleMove("the game has moved on since your page was drawn; it now shows the new position")
        return body

    def move(self, player: str, body: Any) -> dict[str, Any]:
        """Make `player`'s move: ``{"revision", "kind", "params"}``."""
        with self._lock:
            return self._move(player, body)

    def battle(self, player: str, body: Any) -> dict[str, Any]:
        """Report the console battle's result: ``{"revision", "result"}`` (checked by the rules).
        With the bridge, this is the manual entry it asks for (after a correction, a timeout or an
        unreadable screen): one battle player's entry, applied only once the other enters the same
        result or confirms it; the answer says what the result did once the game has it."""
        with self._lock:
            before = len(self.game.entries)
            if not self._bridged():
                return self._battle(player, body)
            body = self._check(body, {"revision", "result"})
            if not isinstance(body["result"], dict):
                raise BadRequest("result must be an object")
            result = {key: value for key, value in body["result"].items() if key != "source"}
            question = self.bridge_ui.question
            try:
                self._validate(result)
                said, answered = self.bridge_ui.answer_manual(player, result)
            except HilbridgeError as error:
                raise BadRequest(error.message) from None
        return self._after_answer(player, before, question if answered else None, [said])

    def confirm(self, player: str, body: Any) -> dict[str, Any]:
        """A battle player's answer to the bridge's confirmation, or their yes to the other battle
        player's manual entry: ``{"question", "yes"}`` (the question's number from the page: an
        answer to an older question or an older entry is stale)."""
        if self.bridge_ui is None:
            raise BadRequest("this table has no console bridge")
        if not isinstance(body, dict) or set(body) - {"revision"} != {"question", "yes"}:
            raise BadRequest("the request needs question and yes")
        if not isinstance(body["yes"], bool) or not isinstance(body["question"], int):
            raise BadRequest("question must be the number the page was sent and yes true or false")
        with self._lock:
            before = len(self.game.entries)
            question = self.bridge_ui.question
            if question is None or question.number != body["question"]:
                raise StaleMove("the console bridge has moved on since your page was drawn")
            try:
                said, answered = self.bridge_ui.answer_confirm(player, body["yes"])
            except Unasked as error:
                raise BadRequest(error.message) from None
        return self._after_answer(player, before, question if answered else None, [said])

    def _after_answer(
        self, player: str, before: int, answered: Question | None, said: list[str]
    ) -> dict[str, Any]:
        """After the `answered` question: wait (briefly) until the bridge has put the result into the
        game or asks something new, then say what the answer did."""
        assert self.bridge_ui is not None
        fight, deadline = self._fight, time.monotonic() + ANSWER_APPLIED_SECONDS
        while answered is not None and fight is not None and fight.is_alive() and time.monotonic() < deadline:
            if self.bridge_ui.question not in (None, answered):
                break
            fight.join(0.02)
        with self._lock:
            events = self.game.events(player)
            name = self.game.ruleset.name
            did = [describe_event(name, item) for item in events if item["step"] > before]
            return {"ok": True, "revision": self.revision, "did": said + did}

    def undo(self, player: str, body: Any) -> dict[str, Any]:
        """Take back the player's own last move (never a secret move after its reveal)."""
        with self._lock:
            return self._undo(player, body)

    def _move(self, player: str, body: Any) -> dict[str, Any]:
        body = self._check(body, {"revision", "kind"}, {"params"})
        kind, params = body["kind"], body.get("params", {})
        if not isinstance(kind, str) or not kind or not isinstance(params, dict):
            raise BadRequest("kind must be a move's name and params an object")
        return self._act(player, lambda: self.game.apply(Action(kind, player, params)))

    def _battle(self, player: str, body: Any) -> dict[str, Any]:
        body = self._check(body, {"revision", "result"})
        request = self.pending_battle()
        if request is None:
            raise BadRequest("no console battle is waiting for a result")
        if player not in (request.attacker, request.defender):
            raise BadRequest(f"only {request.attacker} or {request.defender} reports this battle")
        if not isinstance(body["result"], dict):
            raise BadRequest("result must be an object")
        return self._act(player, lambda: self.game.apply(Action("combat_result", CHANCE, body["result"])))

    def _undo(self, player: str, body: Any) -> dict[str, Any]:
        self._check(body, {"revision"})
        if not self._may_undo(player):
            raise BadRequest("the last move is not yours to take back")
        undone: list[str] = []

        def take_back() -> None:
            undone.extend(self.game.describe_action(a, player) for a in self.game.undo(player))

        result = self._act(player, take_back)
        result["did"] = [f"undone: {text}" for text in undone]
        return result

    def _act(self, player: str, change: Callable[[], None]) -> dict[str, Any]:
        before = len(self.game.entries)
        try:
            change()
        except HilbridgeError as error:
            raise BadRequest(error.message) from None
        except (KeyError, TypeError, ValueError) as error:
            raise BadRequest(f"malformed move: {error!r}") from None
        self._advance()
        self._changed()
        events = self.game.events(player)
        new = [item for item in events if item["step"] > min(before, len(self.game.entries))]
        name = self.game.ruleset.name
        return {"ok": True, "revision": self.revision, "did": [describe_event(name, item) for item in new]}


def _label(action: Action) -> str:
    return " ".join([action.kind.replace("_", " "), *(_value(v) for v in action.params.values())])


def _value(value: Any) -> str:
    return ", ".join(map(str, value)) if isinstance(value, list) else str(value)


def _battle_prompt(request: CombatRequest | None, player: str) -> dict[str, Any] | None:
    """The console-battle prompt: who fights, what the screen will ask, the fields of the result."""
    if request is None:
        return None
    params: Mapping[str, Any] = request.params
    fields: list[dict[str, Any]] = [
        {"name": "winner", "type": "select", "choices": [request.attacker, request.defender]}
    ]
    if request.kind == "end_game_battle":
        fields += [
            {"name": f"energy.{side}", "type": "number", "min": 0, "max": params["energy"][side]}
            for side in (request.attacker, request.defender)
        ]
    return {
        "kind": request.kind,
        "attacker": request.attacker,
        "defender": request.defender,
        "params": dict(params),
        "fields": fields,
        "yours": player in (request.attacker, request.defender),
    }
