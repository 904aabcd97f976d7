"""The command line: a Conquest end game played with `game play --console sim`, corrections,
an interrupted battle, bad profiles, and `bridge cart`."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from hilbridge.bridge.combat import combat_image
from hilbridge.cli.main import cli
from hilbridge.game import CHANCE, Game

MOVES = ["pass", "weapon TANK", "weapon SUB", "weapon PLANE"]


def run(*arguments: str, input: str = ""):
    return CliRunner().invoke(cli, list(arguments), input=input)


def new_game(tmp_path, players="ann,bob,cy"):
    path = tmp_path / "end.json"
    result = run("game", "new", "conquest", str(path), "--players", players, "--option", "max_rounds=1")
    assert result.exit_code == 0, result.output
    return path


@pytest.mark.slow
def test_a_conquest_end_game_from_the_command_line_with_the_console_sim(tmp_path):
    path = new_game(tmp_path)
    # moves a player cannot make now are refused and the next line is read; "y" confirms a battle
    result = run("game", "play", str(path), "--console", "sim", input="\n".join([*MOVES, "y"] * 30) + "\n")
    assert result.exit_code == 0, result.output
    assert "Game over. Winner:" in result.output
    assert (
        "enters 1950 units and TANK" in result.output
        and "(from the ram record). Correct? [y/n]" in result.output
    )
    game = Game.load(path)
    results = [action for action in game.actions if action.kind == "combat_result"]
    assert len(results) >= 2
    assert all(action.params["source"].startswith("console sim: ram record #") for action in results)


def play_to_first_battle(tmp_path):
    """A saved 2-player game at its first END GAME battle (weapons TANK and SUB)."""
    path = new_game(tmp_path, "ann,bob")
    game = Game.load(path)
    while game.current_players() != (CHANCE,):
        for player in game.current_players():
            moves = game.legal_actions(player)
            pick = next((m for m in moves if m.kind == "pass"), None)
            game.apply(pick or moves[1 if player == "ann" else 0])
    game.save(path)
    return path


def test_a_correction_is_typed_in_and_logged_as_a_manual_entry(tmp_path):
    path = play_to_first_battle(tmp_path)
    game = Game.load(path)
    duel = game.state["ladder"]["duel"]
    attacker, defender = duel["attacker"], duel["defender"]
    typed = ["n", attacker, str(duel["energy"][attacker]), str(duel["energy"][defender] - 100), "quit"]
    result = run("game", "play", str(path), "--console", "sim", input="\n".join(typed) + "\n")
    assert result.exit_code == 0, result.output
    last = Game.load(path).actions[-1]
    assert last.params["source"] == "manual entry: the players corrected the console's result"
    assert last.params["winner"] == attacker


def test_a_battle_interrupted_before_its_confirmation_leaves_the_save_as_it_was(tmp_path):
    path = play_to_first_battle(tmp_path)
    before = path.read_text()
    result = run("game", "play", str(path), "--console", "sim", input="")
    # Aborted at the question: play stops as on `quit` (exit 0, "saved in"), with nothing applied.
    assert result.exit_code == 0 and "Correct? [y/n]" in result.output and "saved in" in result.output
    assert path.read_text() == before
    assert Game.load(path).to_json() == json.loads(before)


def test_bad_console_options_are_one_line_errors(tmp_path):
    path = play_to_first_battle(tmp_path)
    broken = tmp_path / "broken.json"
    broken.write_text("{")
    result = run("game", "play", str(path), "--console", "sim", "--profile", str(broken))
    assert result.exit_code == 2 and "not valid JSON" in result.output and "Traceback" not in result.output
    other = tmp_path / "other.bin"
    other.write_bytes(b"\xff" * 2048)
    result = run("game", "play", str(path), "--console", "sim", "--cart", str(other))
    assert result.exit_code == 2 and "no profile for the cartridge with SHA-1" in result.output
    result = run("game", "play", str(path), "--console", "sim", "--random-battles")
    assert result.exit_code == 2 and "not both" in result.output


def test_bridge_cart_writes_our_combat_cartridge(tmp_path):
    output = tmp_path / "combat.bin"
    result = run("bridge", "cart", "-o", str(output))
    assert result.exit_code == 0 and output.read_bytes() == combat_image()
    assert run("bridge", "cart", "-o", str(output)).exit_code == 2  # never overwritten
