"""`hilbridge bridge`: the combat bridge's tools (learning a cartridge profile, our combat cartridge)."""

from __future__ import annotations

import hashlib
import random
import threading
from pathlib import Path

import click

from hilbridge.bridge.calibrate import PracticeBattle, learn_profile, practice_battle
from hilbridge.bridge.combat import combat_image
from hilbridge.bridge.consoles import BattleConsole, open_console
from hilbridge.bridge.profile import ROLES, profile_for
from hilbridge.bridge.resolver import BattlePlan, battle_movie
from hilbridge.bridge.screen import BusReplay, screen_text
from hilbridge.errors import HilbridgeError
from hilbridge.files import write_atomic
from hilbridge.game.conquest.rules import WEAPONS


@click.group("bridge")
def bridge() -> None:
    """Conquest battles on the console: cartridge profiles and our combat cartridge (docs/bridge.md)."""


@bridge.command("cart")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), required=True)
def cart(output: Path) -> None:
    """Write our combat cartridge image (2 KB, o2_rom) to OUTPUT, to load into an adapter or MAME."""
    if output.exists():
        raise HilbridgeError(f"{output} exists; remove it first")
    write_atomic(output, combat_image())
    click.echo(f"combat cartridge (SHA-1 {hashlib.sha1(combat_image()).hexdigest()}) written to {output}")


def _ask_result(number: int) -> tuple[str, dict[str, int]]:
    winner = click.prompt(f"battle {number}: who won on screen", type=click.Choice(ROLES))
    units = {
        role: click.prompt(f"units left on screen for the {role}", type=click.IntRange(0)) for role in ROLES
    }
    return winner, units


def _scripted_screen(console: BattleConsole, rng: random.Random, image: bytes) -> bytes:
    """Fight one practice battle with random entries on a console that plays our keys."""
    keys = profile_for(image).keys
    if keys is None:
        raise HilbridgeError(
            "this cartridge's controls are unknown: practice battles need people at a console"
        )
    units = {role: rng.randrange(1, 60) * 100 for role in ROLES}
    plan = BattlePlan(dict.fromkeys(ROLES, ""), units, {role: rng.choice(WEAPONS) for role in ROLES})
    movie, last = battle_movie(plan, keys)
    replay = BusReplay()
    source = console.battle(movie, last + profile_for(image).battle_frames)
    try:
        for item in source.items():
            replay.feed(item)
    finally:
        source.close()
    return bytes(replay.registers)


def _live_screen(console: BattleConsole, frames: int) -> bytes:
    """Capture while people fight a practice battle; the screen when they press Enter."""
    replay = BusReplay()
    done = threading.Event()
    source = console.battle((), frames)

    def capture() -> None:
        for item in source.items():
            replay.feed(item)
            if done.is_set():
                break

    worker = threading.Thread(target=capture, daemon=True)
    worker.start()
    click.prompt("fight the battle; press Enter when its result is on screen", default="", show_default=False)
    done.set()
    worker.join(timeout=5)
    source.close()
    return bytes(replay.registers)


@bridge.command("calibrate")
@click.option("-d", "--device", required=True, help="sim, mame, or an adapter (people play).")
@click.option("--cart", "cart_path", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="The cartridge image (default: our combat cartridge).")  # fmt: skip
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), required=True)
@click.option("--battles", type=click.IntRange(2), default=8, show_default=True)
@click.option("--frames", type=click.IntRange(1), default=36000, show_default=True,
              help="At most this many frames per battle on a live console.")  # fmt: skip
@click.option("--seed", type=int, default=1, show_default=True, help="Entries of scripted practice battles.")
@click.option("--region", type=click.Choice(["ntsc", "pal"]), default="ntsc", show_default=True)
def calibrate(
    device: str, cart_path: Path | None, output: Path, battles: int, frames: int, seed: int, region: str
) -> None:
    """Learn where a cartridge shows winner and units: fight practice battles, type what the screen
    shows at the end of each; the profile is written to OUTPUT with a report of how sure it is."""
    if output.exists():
        raise HilbridgeError(f"{output} exists; choose another name or remove it")
    image = cart_path.read_bytes() if cart_path is not None else combat_image()
    console = open_console(device, image, region)
    rng = random.Random(seed)
    practice: list[PracticeBattle] = []
    for number in range(1, battles + 1):
        if console.scripted:
            registers = _scripted_screen(console, rng, image)
            click.echo(f"battle {number}, the screen at its end:\n{screen_text(registers, region)}")
        else:
            click.echo(f"practice battle {number} of {battles}")
            registers = _live_screen(console, frames)
        winner, units = _ask_result(number)
        practice.append(practice_battle(registers, winner, units, region))
    name = cart_path.name if cart_path is not None else "hilbridge combat cartridge"
    profile, report = learn_profile(practice, name, hashlib.sha1(image).hexdigest())
    profile.save(output)
    click.echo(report.describe())
    click.echo(f"profile written to {output}")
