"""A game in progress: ruleset + setup + seed + action log, with undo, views and versioned saves.

The action log is the truth; states are derived by replaying it. Chance is drawn from an RNG seeded
by ``(seed, position in the log)``, so a saved game continued after loading draws exactly what it
would have drawn without saving, and undoing a move and making it again gives the same dice (undo
cannot be used to re-roll).

Simultaneous nodes: each player's move is a *commit*, logged but hidden from the others; when the
last player has committed, the engine reveals all moves and calls `Ruleset.apply_joint`.
"""

from __future__ import annotations

import json
import random
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hilbridge.errors import HilbridgeError, SourceLocation
from hilbridge.files import read_json, write_atomic
from hilbridge.game.core import CHANCE, Action, IllegalAction, Ruleset, State, event, event_visible

SAVE_FORMAT = "hilbridge-game-save"
SAVE_VERSION = 1


class SaveFileError(HilbridgeError):
    """A save file that cannot be loaded: unreadable, truncated, corrupt or of another version."""


@dataclass(frozen=True, slots=True)
class LogEntry:
    """One action of the log, the state after it, the events it caused and the pending commits."""

    action: Action
    state: State
    events: tuple[dict[str, Any], ...]
    commits: Mapping[str, Action] = field(default_factory=dict)


SAVE_MODE = 0o600
"""The save file holds every secret (commits, the seed that decides all dice): its owner alone reads it."""


def random_seed() -> int:
    """A fresh seed for a new game, so nobody can know the dice in advance (`--seed` fixes one)."""
    return secrets.randbits(48)


def chance_rng(seed: int, position: int) -> random.Random:
    """The RNG for the chance step at `position` in the log (deterministic, no hidden state)."""
    return random.Random(f"hilbridge-game:{seed}:{position}")


class Game:
    def __init__(self, ruleset: Ruleset, setup: Mapping[str, Any], seed: int):
        self.ruleset = ruleset
        self.setup = json.loads(json.dumps(setup))
        self.seed = int(seed)
        self.initial = ruleset.initial_state(self.setup, self.seed)
        self.entries: list[LogEntry] = []
        self._undone: list[LogEntry] = []  # removed by the last undo, so it can be described safely

    # -- reading -------------------------------------------------------------------------------
    @property
    def state(self) -> State:
        return self.entries[-1].state if self.entries else self.initial

    @property
    def actions(self) -> list[Action]:
        return [entry.action for entry in self.entries]

    @property
    def commits(self) -> Mapping[str, Action]:
        """Moves committed at the current simultaneous node and not yet revealed."""
        return self.entries[-1].commits if self.entries else {}

    def current_players(self) -> tuple[str, ...]:
        """Players still to move (at a simultaneous node, those who have not committed yet)."""
        players = self.ruleset.current_players(self.state)
        return tuple(player for player in players if player not in self.commits)

    def legal_actions(self, player: str) -> list[Action]:
        if player not in self.current_players() or player == CHANCE:
            return []
        return self.ruleset.legal_actions(self.state, player)

    def is_terminal(self) -> bool:
        return self.ruleset.is_terminal(self.state)

    def view(self, player: str | None) -> State:
        """What `player` may see now: the ruleset's view plus the events visible to them."""
        shown = self.ruleset.view(self.state, player)
        shown["events"] = self.events(player)
        shown["waiting_for"] = list(self.current_players())
        return shown

    def events(self, player: str | None = None, *, everything: bool = False) -> list[dict[str, Any]]:
        """The log of events `player` may see (each tagged with its action number)."""
        shown = [
            {"step": index, **item}
            for index, entry in enumerate(self.entries, start=1)
            for item in entry.events
            if everything or event_visible(item, player)
        ]
        initial = [
            {"step": 0, **item}
            for item in self.initial.get("events", ())
            if everything or event_visible(item, player)
        ]
        return initial + shown

    # -- moving --------------------------------------------------------------------------------
    def apply(self, action: Action) -> None:
        """Make a move (a player's, or a chance result typed in by hand); illegal moves raise."""
        state = self.state
        if self.ruleset.is_terminal(state):
            raise IllegalAction("the game is over")
        if action.player == CHANCE:
            if self.ruleset.current_players(state) != (CHANCE,):
                raise IllegalAction("it is not chance's turn")
            self._push(action, self.ruleset.apply(state, action), {})
            return
        if action.player not in self.current_players():
            waiting = ", ".join(self.current_players()) or "nobody"
            raise IllegalAction(f"it is not {action.player}'s turn (waiting for {waiting})")
        if not self.ruleset.is_legal(state, action):
            raise IllegalAction(f"illegal move: {action}{self._reason(state, action)}")
        if not self.ruleset.is_simultaneous(state):
            self._push(action, self.ruleset.apply(state, action), {})
            return
        commits = {**self.commits, action.player: action}
        committed = [
            event("committed", player=action.player),
            event("commit", visible_to=[action.player], action=action.to_json()),
        ]
        if set(commits) < set(self.ruleset.current_players(state)):
            self.entries.append(LogEntry(action, state, tuple(committed), commits))
            return
        after = self.ruleset.apply_joint(state, commits)
        reveal = event("revealed", moves={player: move.to_json() for player, move in commits.items()})
        self.entries.append(LogEntry(action, after, (*committed, reveal, *after.get("events", ())), {}))

    def _reason(self, state: State, action: Action) -> str:
        """Why the rules refuse `action`, where applying it says so (for the player's message)."""
        if self.ruleset.is_simultaneous(state):
            return ""
        try:
            self.ruleset.apply(state, action)
        except IllegalAction as error:
            return "" if error.message.startswith("illegal move") else f" ({error.message})"
        return ""

    def _push(self, action: Action, after: State, commits: Mapping[str, Action]) -> None:
        self.entries.append(LogEntry(action, after, tuple(after.get("events", ())), commits))

    def chance_rng(self) -> random.Random:
        return chance_rng(self.seed, len(self.entries))

    def step_chance(self, resolver: Any = None) -> Action:
        """Resolve the pending chance node (battles through `resolver`) and record the outcome."""
        node = self.ruleset.chance_node(self.state)
        if node is None or self.ruleset.current_players(self.state) != (CHANCE,):
            raise IllegalAction("no chance event is pending")
        rng = self.chance_rng()
        if node.combat is not None:
            if resolver is None:
                raise HilbridgeError("a battle is pending and no combat resolver was given")
            action = Action("combat_result", CHANCE, resolver.resolve(node.combat, rng))
        else:
            action = node.outcomes[rng.randrange(len(node.outcomes))]
        self.apply(action)
        return action

    def advance(self, resolver: Any = None) -> None:
        """Resolve chance until a player must decide or the game is over."""
        while not self.is_terminal() and self.ruleset.current_players(self.state) == (CHANCE,):
            self.step_chance(resolver)

    def undo(self, player: str | None = None) -> list[Action]:
        """Take back the last player move and the chance results that followed it.

        With `player`, only that player's own last move may be taken back. A move that completed a
        simultaneous node cannot be taken back at all: its player has seen the revealed moves and
        could commit again knowing them. Returns the removed actions, newest first (callers show
        them through `describe_action` so a secret commit is not revealed to whoever watches).
        """
        last_entry = next((entry for entry in reversed(self.entries) if entry.action.player != CHANCE), None)
        last = last_entry.action if last_entry else None
        if player is not None and last is not None and last.player != player:
            raise IllegalAction(f"the last move is {last.player}'s; only {last.player} can take it back")
        if last_entry is not None and any(item["kind"] == "revealed" for item in last_entry.events):
            raise IllegalAction(
                "the secret moves have been revealed; a committed secret cannot be taken back"
            )
        removed: list[LogEntry] = []
        while self.entries:
            removed.append(self.entries.pop())
            if removed[-1].action.player != CHANCE:
                break
        self._undone = removed
        return [entry.action for entry in removed]

    def describe_action(self, action: Action, player: str | None) -> str:
        """`action` as `player` may see it: another player's commit shows only who committed."""
        if action.player not in (player, CHANCE) and self._was_commit(action):
            return f"{action.player}: committed a secret move"
        return str(action)

    def _was_commit(self, action: Action) -> bool:
        wanted = action.to_json()
        return any(
            item["kind"] == "commit" and item["action"] == wanted
            for entry in (*self.entries, *self._undone)
            for item in entry.events
        )

    # -- saving --------------------------------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        return {
            "format": SAVE_FORMAT,
            "version": SAVE_VERSION,
            "ruleset": self.ruleset.name,
            "ruleset_version": self.ruleset.version,
            "setup": self.setup,
            "seed": self.seed,
            "actions": [action.to_json() for action in self.actions],
            "snapshot": self.state,
        }

    def save(self, path: str | Path) -> None:
        """Write the save file atomically (a crash leaves the previous save intact), mode 0600: it is
        the game master's record and holds every secret."""
        text = json.dumps(self.to_json(), indent=1, sort_keys=True) + "\n"
        write_atomic(path, text.encode("utf-8"), mode=SAVE_MODE)

    @classmethod
    def from_json(cls, data: Any, source: str = "<save>") -> Game:
        from hilbridge.game.registry import get_ruleset

        where = SourceLocation(source)
        if not isinstance(data, dict) or data.get("format") != SAVE_FORMAT:
            raise SaveFileError("not a hilbridge game save", where)
        if data.get("version") != SAVE_VERSION:
            raise SaveFileError(
                f"save format version {data.get('version')!r} is not supported "
                f"(this hilbridge reads {SAVE_VERSION})",
                where,
            )
        missing = {"ruleset", "ruleset_version", "setup", "seed", "actions", "snapshot"} - set(data)
        if missing:
            raise SaveFileError(f"save file lacks {', '.join(sorted(missing))}", where)
        ruleset = get_ruleset(data["ruleset"])
        if data["ruleset_version"] != ruleset.version:
            raise SaveFileError(
                f"save was written by {ruleset.name} rules version {data['ruleset_version']!r}, "
                f"these are version {ruleset.version}",
                where,
            )
        if not isinstance(data["seed"], int) or not isinstance(data["actions"], list):
            raise SaveFileError("save file has a malformed seed or action list", where)
        try:
            game = cls(ruleset, data["setup"], data["seed"])
            for number, item in enumerate(data["actions"], start=1):
                try:
                    game.apply(Action.from_json(item))
                except HilbridgeError as error:
                    raise SaveFileError(f"action {number} does not replay: {error.message}", where) from None
        except SaveFileError:
            raise
        except HilbridgeError as error:
            raise SaveFileError(f"bad setup: {error.message}", where) from None
        except (KeyError, TypeError, ValueError) as error:
            raise SaveFileError(f"corrupt save file ({error!r})", where) from None
        if game.state != data["snapshot"]:
            raise SaveFileError("the snapshot does not match the replayed action log (file corrupt?)", where)
        return game

    @classmethod
    def load(cls, path: str | Path) -> Game:
        data = read_json(path, "save file", SaveFileError)
        return cls.from_json(data, str(path))
