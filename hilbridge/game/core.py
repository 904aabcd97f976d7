"""The rules-side API every board game implements: actions, chance nodes, events and `Ruleset`.

A ruleset is pure: a state is a plain JSON-compatible dict (so snapshots, saves and views are just
JSON), and `Ruleset.apply` returns a new state without touching the one it was given. Nothing random
happens inside a ruleset: where the game needs dice, a secret draw or a battle it exposes a
`ChanceNode`, and the engine (`hilbridge.game.session.Game`) picks the outcome with its seeded RNG
or a `CombatResolver` and records it in the action log like any other move.

Every state carries, under the key ``"events"``, the events produced by the transition that made
it. Each event is a dict with a ``"kind"`` and a ``"visible_to"`` list (``None`` = everybody); the
engine collects them into the game log and filters them per player.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from hilbridge.errors import HilbridgeError

State = dict[str, Any]
"""A game state: JSON-compatible, owned by its ruleset, never mutated once returned."""

CHANCE = "chance"
"""The player id of chance: dice, secret draws and battle results are actions by this player."""


class IllegalAction(HilbridgeError):
    """A move the rules do not allow in this position (a user error: the CLI reports it)."""


@dataclass(frozen=True, slots=True, eq=True)
class Action:
    """One move: who makes it, what kind of move it is, and its JSON parameters."""

    kind: str
    player: str
    params: Mapping[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "player": self.player, "params": dict(self.params)}

    @classmethod
    def new(cls, kind: str, player: str, params: Mapping[str, Any]) -> Action:
        """The same as ``Action(kind, player, params)``, made by filling the slots directly: legal-move
        lists make one per candidate move, and the frozen dataclass ``__init__`` costs three times as
        much (it goes through ``object.__setattr__`` for each field)."""
        action = _new_object(cls)
        _set_kind(action, kind)
        _set_player(action, player)
        _set_params(action, params)
        return action

    @classmethod
    def from_json(cls, data: Any) -> Action:
        if not isinstance(data, dict) or set(data) != {"kind", "player", "params"}:
            raise HilbridgeError(f"an action must be an object with kind, player and params, not {data!r}")
        kind, player, params = data["kind"], data["player"], data["params"]
        if not isinstance(kind, str) or not isinstance(player, str) or not isinstance(params, dict):
            raise HilbridgeError(f"malformed action {data!r}")
        return cls(kind, player, params)

    def __hash__(self) -> int:
        return hash(json.dumps(self.to_json(), sort_keys=True))

    def __str__(self) -> str:
        details = " ".join(f"{key}={value}" for key, value in self.params.items())
        return f"{self.player}: {self.kind}" + (f" {details}" if details else "")


_new_object = object.__new__
_set_kind = Action.kind.__set__  # the slot descriptors, which a frozen dataclass leaves writable
_set_player = Action.player.__set__
_set_params = Action.params.__set__


@dataclass(frozen=True, slots=True)
class CombatRequest:
    """A battle the board cannot decide by itself; a `CombatResolver` supplies its result.

    `params` is ruleset-specific: dice counts for a dice drill, energy units and weapons for a
    console battle. The result is a JSON dict that the ruleset validates when it is applied.
    """

    kind: str
    attacker: str
    defender: str
    params: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class ChanceNode:
    """A point where chance moves next.

    Either `outcomes` (equally likely actions by `CHANCE`: a die, a card from a shuffled deck) or
    `combat` (a battle for a resolver; its result becomes ``Action("combat_result", CHANCE, result)``).
    """

    kind: str
    outcomes: tuple[Action, ...] = ()
    combat: CombatRequest | None = None


def event(kind: str, visible_to: Sequence[str] | None = None, **data: Any) -> dict[str, Any]:
    """A log event; `visible_to` lists the players who may see it (None: everybody)."""
    return {"kind": kind, "visible_to": None if visible_to is None else list(visible_to), **data}


def event_visible(entry: Mapping[str, Any], player: str | None) -> bool:
    """May `player` (None: a spectator, who sees only public events) see this event?"""
    visible_to = entry.get("visible_to")
    return visible_to is None or (player is not None and player in visible_to)


class Ruleset:
    """The rules of one game. Subclasses override the methods marked as required.

    Required: `name`, `version`, `default_setup`, `initial_state`, `current_players`,
    `legal_actions`, `apply`, `is_terminal`, `view`. Optional: `chance_node` (games with dice,
    draws or battles), `is_simultaneous` + `apply_joint` (blind bids), `random_combat_result`
    (test-friendly battles), `describe` (text board), `check_invariants` (playout tests).
    """

    name: str = ""
    version: int = 1
    min_players: int = 2
    max_players: int = 6

    def default_setup(
        self, players: Sequence[str], options: Mapping[str, Any] | None = None
    ) -> dict[str, Any]:
        """A complete, JSON-compatible setup for these players (validated by `initial_state`)."""
        raise NotImplementedError

    def initial_state(self, setup: Mapping[str, Any], seed: int) -> State:
        """The state before the first move. `seed` is available for setup-time shuffles only."""
        raise NotImplementedError

    def current_players(self, state: State) -> tuple[str, ...]:
        """Who moves next: one player, several (simultaneous), ``(CHANCE,)``, or () when over."""
        raise NotImplementedError

    def legal_actions(self, state: State, player: str) -> list[Action]:
        raise NotImplementedError

    def is_legal(self, state: State, action: Action) -> bool:
        """Override where the action space is too large to enumerate."""
        return action.player in self.current_players(state) and action in self.legal_actions(
            state, action.player
        )

    def apply(self, state: State, action: Action) -> State:
        """The state after `action`; raises `IllegalAction` for a malformed chance result."""
        raise NotImplementedError

    def is_simultaneous(self, state: State) -> bool:
        """True where all `current_players` commit secretly and the moves are revealed together."""
        return False

    def apply_joint(self, state: State, moves: Mapping[str, Action]) -> State:
        """Apply the revealed moves of a simultaneous node."""
        raise NotImplementedError

    def chance_node(self, state: State) -> ChanceNode | None:
        return None

    def random_combat_result(self, request: CombatRequest, rng: Any) -> dict[str, Any]:
        """A plausible battle result drawn from `rng` (for playouts and tests)."""
        raise NotImplementedError

    def is_terminal(self, state: State) -> bool:
        raise NotImplementedError

    def winners(self, state: State) -> list[str]:
        return []

    def view(self, state: State, player: str | None) -> State:
        """What `player` (None: a spectator) may see of `state`; the engine filters ``events``."""
        raise NotImplementedError

    def describe(self, view: State) -> str:
        """A text rendering of a view, for the CLI."""
        return json.dumps({k: v for k, v in view.items() if k != "events"}, indent=1, sort_keys=True)

    def check_invariants(self, before: State, action: Action | None, after: State) -> None:
        """Raise AssertionError when a transition breaks a conservation law (used by playouts)."""
