"""`hilbridge game`: start, play, show, undo and replay board games stored in a save file.

A thin layer over `hilbridge.game`: every command loads the save (which checks it), acts, and
writes it back atomically, so a bad command or a corrupt file never costs the last good save.
"""

from __future__ import annotations

import json
import shlex
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from hilbridge.errors import HilbridgeError
from hilbridge.files import check_outputs
from hilbridge.game import CHANCE, Action, CombatRequest, DiceResolver, Game, RandomResolver, get_ruleset
from hilbridge.game.registry import RULESET_MODULES
from hilbridge.game.session import random_seed
from hilbridge.table import CONFIRM_TIMEOUT_SECONDS
from hilbridge.table.messages import describe_event

if TYPE_CHECKING:
    from hilbridge.bridge.resolver import ManualEntry


def _parse_value(text: str) -> Any:
    """`3` → 3, `true` → True, anything that is not JSON stays a string."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def _pairs(items: tuple[str, ...], what: str) -> dict[str, str]:
    pairs = {}
    for item in items:
        key, separator, value = item.partition("=")
        if not separator or not key:
            raise HilbridgeError(f"{what} must look like NAME=VALUE, not {item!r}")
        pairs[key.strip()] = value.strip()
    return pairs


def action_label(action: Action) -> str:
    """How an action is shown and typed: its kind followed by its parameter values."""
    return " ".join([action.kind, *(str(value) for value in action.params.values())])


def _show(game: Game, player: str | None) -> str:
    view = game.view(player)
    lines = [game.ruleset.describe(view)]
    if game.is_terminal():
        return "\n".join(lines)
    waiting = game.current_players()
    lines.append("waiting for: " + (", ".join(waiting) if waiting != (CHANCE,) else "a battle result"))
    return "\n".join(lines)


def _choices(game: Game, player: str) -> str:
    return "\n".join(
        f"  {number:>2}. {action_label(a)}" for number, a in enumerate(game.legal_actions(player), 1)
    )


def _pick(game: Game, player: str, text: str) -> Action:
    """A listed move by number or name, or any move typed as ``KIND NAME=VALUE ...`` (amounts:
    ``sell resource=oil units=2``; quote names with spaces; lists by commas: ``targets=Peru,Brazil``)."""
    options = game.legal_actions(player)
    text = text.strip()
    if text.isdigit() and 1 <= int(text) <= len(options):
        return options[int(text) - 1]
    for action in options:
        if action_label(action).casefold() == " ".join(text.split()).casefold():
            return action
    try:
        words = shlex.split(text)
    except ValueError as error:
        raise HilbridgeError(f"cannot read {text!r}: {error}") from None
    if len(words) > 1 and all("=" in word for word in words[1:]):
        examples = [a.params for a in options if a.kind == words[0]]
        params: dict[str, Any] = {}
        for key, value in _pairs(tuple(words[1:]), "a move's parameter").items():
            is_list = any(isinstance(example.get(key), list) for example in examples)
            params[key] = [item.strip() for item in value.split(",")] if is_list else _parse_value(value)
        return Action(words[0], player, params)
    raise HilbridgeError(
        f"{text!r} is not one of {player}'s moves (type its number or its name, or KIND NAME=VALUE ...)"
    )


class Quit(Exception):
    """The player typed `quit` at a prompt: save and leave."""


def _ask(text: str, read: Callable[[str], Any]) -> Any:
    """Prompt until `read` accepts the answer; `quit` leaves from any prompt."""
    while True:
        answer = click.prompt(text).strip()
        if answer in ("quit", "q"):
            raise Quit
        try:
            return read(answer)
        except ValueError as error:
            click.echo(f"{error} (or type quit)")


def _choice(options: list[str]) -> Callable[[str], str]:
    def read(answer: str) -> str:
        if answer not in options:
            raise ValueError(f"{answer!r} is not one of {', '.join(options)}")
        return answer

    return read


def _units(answer: str) -> int:
    if not answer.isdigit():
        raise ValueError(f"{answer!r} is not a number of energy units")
    return int(answer)


class PromptResolver:
    """Players type the battle result the console screen shows (dice drills are rolled here)."""

    def resolve(self, request: CombatRequest, rng: Any) -> dict[str, Any]:
        if "dice" in request.params:
            return DiceResolver().resolve(request, rng)
        sides = [request.attacker, request.defender]
        winner = _ask(
            f"Battle {request.attacker} vs {request.defender}: winner ({'/'.join(sides)})", _choice(sides)
        )
        if request.kind != "end_game_battle":
            return {"winner": winner}
        energy = {side: _ask(f"energy units left on screen for {side}", _units) for side in sides}
        return {"winner": winner, "energy": energy}


def _report(game: Game, since: int, viewer: str | None) -> None:
    """Say what the moves from log position `since` on did (dice, losses, cards, money)."""
    for item in game.events(viewer):
        if item["step"] > since:
            click.echo("  " + describe_event(game.ruleset.name, item))


@click.group("game")
def game() -> None:
    """Board games (Conquest of the World, Supremacy) with console battles."""


@game.command("new")
@click.argument("name", type=click.Choice(sorted(RULESET_MODULES)))
@click.argument("save", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--players", required=True, help="Comma-separated player names in seating order.")
@click.option(
    "--seed",
    type=int,
    help="Seed for dice, draws and shuffles (default: random; fix it for tests and replays).",
)
@click.option("--option", "options", multiple=True, metavar="NAME=VALUE", help="A rules option (ruling).")
@click.option(
    "--homeland", "homelands", multiple=True, metavar="PLAYER=COUNTRY", help="Conquest: a HOMELAND."
)
@click.option(
    "--board", type=click.Path(dir_okay=False, path_type=Path), help="Conquest: a replacement board."
)
@click.option("--force", is_flag=True, help="Replace an existing save file.")
def new(
    name: str,
    save: Path,
    players: str,
    seed: int | None,
    options: tuple[str, ...],
    homelands: tuple[str, ...],
    board: Path | None,
    force: bool,
) -> None:
    """Start a game of NAME and write it to SAVE."""
    check_outputs({"SAVE": save}, inputs=[board], force=force)
    ruleset = get_ruleset(name)
    names = [player.strip() for player in players.split(",") if player.strip()]
    setup = ruleset.default_setup(names, {k: _parse_value(v) for k, v in _pairs(options, "--option").items()})
    if homelands:
        setup["homelands"] = {**setup.get("homelands", {}), **_pairs(homelands, "--homeland")}
    if board is not None:
        from hilbridge.game.conquest.board import load_board

        setup["board"] = load_board(board)
    created = Game(ruleset, setup, random_seed() if seed is None else seed)
    created.save(save)
    click.echo(f"{name} for {', '.join(names)} saved to {save}")


@game.command("show")
@click.argument("save", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--as",
    "player",
    help="Show only what this player may see (a convenience, not a check; default: public view).",
)
def show(save: Path, player: str | None) -> None:
    """Show the board as PLAYER (or a spectator) sees it, and PLAYER's moves."""
    loaded = _load_as(save, player)
    click.echo(_show(loaded, player))
    if player is not None and loaded.legal_actions(player):
        click.echo(f"{player}'s moves:\n{_choices(loaded, player)}")


@game.command("undo")
@click.argument("save", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--as", "player", help="Undo only if the last move is this player's own.")
def undo(save: Path, player: str | None) -> None:
    """Take back the last move (and the battle results that followed it)."""
    loaded = _load_as(save, player)
    removed = loaded.undo(player)
    if not removed:
        raise HilbridgeError("nothing to undo: the game is at its start")
    loaded.save(save)
    for action in removed:
        click.echo(f"undone: {loaded.describe_action(action, player)}")


@game.command("replay")
@click.argument("save", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--as", "player", help="Replay only what this player may see.")
def replay(save: Path, player: str | None) -> None:
    """Print the game's event log, step by step, as PLAYER (or a spectator) may see it."""
    loaded = _load_as(save, player)
    for item in loaded.events(player):
        details = {k: v for k, v in item.items() if k not in ("step", "kind", "visible_to")}
        text = " ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in details.items())
        click.echo(f"{item['step']:>4} {item['kind']} {text}".rstrip())


class ClickBridgeUI:
    """The players' side of the console bridge at the terminal: one key to confirm, prompts by hand."""

    def tell(self, request: CombatRequest, text: str) -> None:
        click.echo(text)

    def confirm(self, request: CombatRequest, result: Mapping[str, Any], text: str) -> str | None:
        while True:
            if sys.stdin.isatty():
                click.echo(f"{text} [y/n] ", nl=False)
                key = click.getchar()
                click.echo(key)
            else:
                key = click.prompt(f"{text} [y/n]", default="", show_default=False)
            if key.strip().lower() in ("y", "n"):
                from hilbridge.bridge.resolver import CORRECTED

                return None if key.strip().lower() == "y" else CORRECTED

    def manual(self, request: CombatRequest, reason: str) -> ManualEntry:
        from hilbridge.bridge.resolver import ManualEntry

        return ManualEntry(PromptResolver().resolve(request, None))


class ConsoleBattles:
    """Battles on the console through the bridge; dice drills (Supremacy) are still rolled here."""

    def __init__(self, console: Any):
        self.console = console

    def resolve(self, request: CombatRequest, rng: Any) -> dict[str, Any]:
        if "dice" in request.params:
            return DiceResolver().resolve(request, rng)
        return self.console.resolve(request, rng)


def console_bridge(device: str, cart: Path | None, profile: Path | None, screen_only: bool):
    """The combat bridge's resolver maker: `make(ui, validate)` for the console `device`, the
    cartridge (default: hilbridge's own) and its profile; the console is opened here, once."""
    from hilbridge.bridge.combat import combat_image
    from hilbridge.bridge.consoles import open_console
    from hilbridge.bridge.profile import profile_for
    from hilbridge.bridge.resolver import ConsoleResolver

    image = cart.read_bytes() if cart is not None else combat_image()
    console, read_with = open_console(device, image), profile_for(image, profile)

    def make(ui: Any, validate: Callable[[dict[str, Any]], None]) -> ConsoleResolver:
        return ConsoleResolver(console, read_with, ui, validate=validate, use_record=not screen_only)

    return make


def _console_resolver(loaded: Game, device: str, cart: Path | None, profile: Path | None, screen_only: bool):
    def validate(result: dict[str, Any]) -> None:
        loaded.ruleset.apply(loaded.state, Action("combat_result", CHANCE, result))

    return ConsoleBattles(console_bridge(device, cart, profile, screen_only)(ClickBridgeUI(), validate))


def _console_options(command: Callable[..., None]) -> Callable[..., None]:
    """--console, --cart, --profile and --screen-only, shared by play and serve."""
    options = [
        click.option("--console", "device",
                     help="Fight battles on a console: sim, mame or an adapter (docs/bridge.md)."),
        click.option("--cart", type=click.Path(exists=True, dir_okay=False, path_type=Path),
                     help="With --console: the combat cartridge image (default: hilbridge's own)."),
        click.option("--profile", type=click.Path(exists=True, dir_okay=False, path_type=Path),
                     help="With --console: the cartridge profile (default: the shipped one)."),
        click.option("--screen-only", is_flag=True,
                     help="With --console: read results off the screen, not RAM."),
    ]  # fmt: skip
    for option in reversed(options):
        command = option(command)
    return command


def _check_console_options(
    device: str | None, random_battles: bool, cart: Path | None, profile: Path | None, screen_only: bool
) -> None:
    if device is not None and random_battles:
        raise HilbridgeError("choose --console or --random-battles, not both")
    if device is None and (cart or profile or screen_only):
        raise HilbridgeError("--cart, --profile and --screen-only go with --console")


@game.command("play")
@click.argument("save", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--as",
    "player",
    help="Play only this player's moves (a convenience, not a check; see docs/table.md).",
)
@click.option("--random-battles", is_flag=True, help="Let the computer decide battles (no console).")
@_console_options
def play(
    save: Path,
    player: str | None,
    random_battles: bool,
    device: str | None,
    cart: Path | None,
    profile: Path | None,
    screen_only: bool,
) -> None:
    """Play interactively: type a move's number or name, `undo`, `show`, `log` or `quit`.

    The game is saved after every move.
    """
    loaded = _load_as(save, player)
    _check_console_options(device, random_battles, cart, profile, screen_only)
    if device is not None:
        resolver: Any = _console_resolver(loaded, device, cart, profile, screen_only)
    else:
        resolver = RandomResolver(loaded.ruleset) if random_battles else PromptResolver()
    try:
        _play(loaded, save, player, resolver)
    except (Quit, click.Abort):
        click.echo(f"\nsaved in {save}")


def _play(loaded: Game, save: Path, player: str | None, resolver: Any) -> None:
    """The play loop: the board when the position changes, then the mover's moves and a prompt."""
    shown = -1
    while not loaded.is_terminal():
        waiting = loaded.current_players()
        if waiting == (CHANCE,):
            before = len(loaded.entries)
            try:
                loaded.step_chance(resolver)
            except HilbridgeError as error:
                click.echo(str(error))
                continue
            _report(loaded, before, player)
            loaded.save(save)
            continue
        mover = waiting[0] if player is None else player
        if mover not in waiting:
            click.echo(f"waiting for {', '.join(waiting)}; the game is saved in {save}")
            return
        if shown != len(loaded.entries):
            click.echo(_show(loaded, mover))
            click.echo(f"{mover} to move:\n{_choices(loaded, mover)}")
            shown = len(loaded.entries)
        command = click.prompt(f"{mover}", default="", show_default=False).strip()
        before = len(loaded.entries)
        if command in ("quit", "q"):
            raise Quit
        if command == "undo":
            try:
                undone = loaded.undo(player)
            except HilbridgeError as error:
                click.echo(str(error))
                continue
            for action in undone:
                click.echo(f"undone: {loaded.describe_action(action, mover)}")
        elif command == "log":
            for item in loaded.events(mover)[-15:]:
                click.echo(f"  {item['step']:>4} {describe_event(loaded.ruleset.name, item)}")
            continue
        elif command in ("show", ""):
            shown = -1
            continue
        else:
            try:
                loaded.apply(_pick(loaded, mover, command))
            except HilbridgeError as error:
                click.echo(f"{error} (type show to see the board and the moves again)")
                continue
            _report(loaded, before, mover if player is not None else None)
        loaded.save(save)
    click.echo(_show(loaded, player))


def _load_as(save: Path, player: str | None) -> Game:
    """Load SAVE for `--as PLAYER`, refusing a player who is not in the game."""
    loaded = Game.load(save)
    if player is not None and player not in loaded.setup["players"]:
        raise HilbridgeError(f"{player!r} does not play in this game ({', '.join(loaded.setup['players'])})")
    return loaded


@game.command("serve")
@click.argument("save", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--port", type=click.IntRange(1, 65535), default=8470, show_default=True)
@click.option(
    "--host", default="127.0.0.1", show_default=True, help="Address to listen on (others: a warning)."
)
@click.option("--random-battles", is_flag=True, help="Let the computer decide console battles.")
@_console_options
@click.option(
    "--confirm-timeout",
    type=click.FloatRange(min=0, min_open=True),
    default=CONFIRM_TIMEOUT_SECONDS,
    show_default=True,
    metavar="SECONDS",
    help="With --console: how long the battle's players have to confirm the console's result "
    "before it goes to manual entry.",
)
@click.option("--no-qr", is_flag=True, help="Print the URLs without QR codes.")
def serve(
    save: Path,
    port: int,
    host: str,
    random_battles: bool,
    device: str | None,
    cart: Path | None,
    profile: Path | None,
    screen_only: bool,
    confirm_timeout: float,
    no_qr: bool,
) -> None:
    """Play SAVE in the browser: one private URL per player (docs/table.md).

    With --console, battles are fought on the console and its result is confirmed or corrected by
    the battle's players on their own pages; a result typed by hand applies once both agree.
    """
    from hilbridge.table.serve import serve as serve_table

    _check_console_options(device, random_battles, cart, profile, screen_only)
    console = RandomResolver(Game.load(save).ruleset) if random_battles else None
    bridge = console_bridge(device, cart, profile, screen_only) if device is not None else None
    serve_table(
        save,
        host=host,
        port=port,
        console=console,
        bridge=bridge,
        confirm_timeout=confirm_timeout,
        qr=not no_qr,
        echo=click.echo,
    )
