"""`hilbridge game` through click's CliRunner (the group is invoked directly, then via the root)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from hilbridge.cli.game import game
from hilbridge.cli.main import cli
from hilbridge.game import Game


def run(*args: str, input: str | None = None):
    return CliRunner().invoke(game, list(args), input=input, catch_exceptions=False)


def new_game(tmp_path, *extra: str):
    path = tmp_path / "game.json"
    result = run("new", "conquest", str(path), "--players", "ann,bob,cy", *extra)
    assert result.exit_code == 0, result.output
    return path


def test_new_writes_a_loadable_save_with_options_and_homelands(tmp_path):
    path = new_game(
        tmp_path, "--option", "rounding_halves=down", "--option", "max_rounds=3", "--homeland", "cy=China"
    )
    loaded = Game.load(path)
    assert loaded.state["options"]["rounding_halves"] == "down"
    assert loaded.state["options"]["max_rounds"] == 3
    assert loaded.state["homeland"]["cy"] == "China"


def test_new_refuses_to_overwrite_and_rejects_bad_options(tmp_path):
    path = new_game(tmp_path)
    before = path.read_bytes()
    result = CliRunner().invoke(cli, ["game", "new", "conquest", str(path), "--players", "a,b"])
    assert result.exit_code == 2 and "exists" in result.output
    other = tmp_path / "other.json"
    result = CliRunner().invoke(
        cli, ["game", "new", "conquest", str(other), "--players", "a,b", "--option", "x=1"]
    )
    assert result.exit_code == 2 and "unknown Conquest option" in result.output
    assert not other.exists() and path.read_bytes() == before


def test_show_lists_the_board_and_the_players_moves(tmp_path):
    path = new_game(tmp_path)
    result = run("show", str(path), "--as", "ann")
    assert "United States" in result.output and "occupied by ann (HOMELAND)" in result.output
    assert "occupy Canada" in result.output
    assert "costs per country value: occupy 500 PBU, ally 250 PBU, attack 1000 PBU" in result.output
    assert "ann's moves" not in run("show", str(path), "--as", "bob").output


def test_play_moves_by_number_and_name_then_quits_with_the_game_saved(tmp_path):
    path = new_game(tmp_path)
    result = run("play", str(path), input="occupy Canada\n1\nquit\n")
    assert result.exit_code == 0, result.output
    loaded = Game.load(path)
    assert [str(a) for a in loaded.actions] == ["ann: occupy country=Canada", "bob: pass"]


def test_play_reports_a_bad_move_and_goes_on(tmp_path):
    path = new_game(tmp_path)
    result = run("play", str(path), input="occupy Atlantis\nquit\n")
    assert "is not one of ann's moves" in result.output
    assert Game.load(path).actions == []


def test_play_prompts_for_console_battle_results(tmp_path):
    path = new_game(tmp_path, "--option", "starting_chips=20000")
    run("play", str(path), input="pass\noccupy Scandinavia\nquit\n")
    # cy (West Germany) attacks bob's Scandinavia; the console says cy won.
    result = run("play", str(path), input="attack Scandinavia\ncy\nquit\n")
    assert result.exit_code == 0, result.output
    assert Game.load(path).state["owner"]["Scandinavia"] == "cy"


def test_play_as_one_player_stops_when_others_must_move(tmp_path):
    path = new_game(tmp_path)
    result = run("play", str(path), "--as", "bob")
    assert "waiting for ann" in result.output


def test_undo_and_replay(tmp_path):
    path = new_game(tmp_path)
    run("play", str(path), input="occupy Canada\nquit\n")
    replayed = run("replay", str(path)).output
    assert "occupied" in replayed and '"Canada"' in replayed
    result = run("undo", str(path))
    assert "undone: ann: occupy country=Canada" in result.output
    assert Game.load(path).actions == []
    result = CliRunner().invoke(cli, ["game", "undo", str(path)])
    assert result.exit_code == 2 and "nothing to undo" in result.output


def test_secret_weapon_commit_is_not_shown_to_the_opponent(tmp_path):
    path = new_game(tmp_path, "--option", "max_rounds=1")
    run("play", str(path), input="pass\npass\npass\npass\npass\npass\nquit\n")
    loaded = Game.load(path)
    first = loaded.current_players()[0]
    other = loaded.current_players()[1]
    run("play", str(path), "--as", first, input="weapon PLANE\n")
    assert "PLANE" not in run("replay", str(path), "--as", other).output
    assert "PLANE" in run("replay", str(path), "--as", first).output
    refused = CliRunner().invoke(cli, ["game", "undo", str(path), "--as", other])
    assert refused.exit_code == 2 and f"only {first} can take it back" in refused.output
    assert "committed a secret move" in run("undo", str(path)).output  # a spectator undoing


def test_corrupt_or_wrong_version_saves_fail_cleanly_and_are_kept(tmp_path):
    path = new_game(tmp_path)
    data = json.loads(path.read_text())
    data["version"] = 7
    path.write_text(json.dumps(data))
    before = path.read_bytes()
    for command in (["game", "play", str(path)], ["game", "undo", str(path)], ["game", "show", str(path)]):
        result = CliRunner().invoke(cli, command, input="1\n")
        assert result.exit_code == 2
        assert f"{path}: error: save format version 7 is not supported" in result.output
        assert path.read_bytes() == before
    path.write_text(before.decode()[:100])
    result = CliRunner().invoke(cli, ["game", "show", str(path)])
    assert result.exit_code == 2 and "not valid JSON" in result.output and "Traceback" not in result.output


def test_unknown_player_is_a_user_error(tmp_path):
    path = new_game(tmp_path)
    result = CliRunner().invoke(cli, ["game", "show", str(path), "--as", "zed"])
    assert result.exit_code == 2 and "does not play" in result.output


@pytest.mark.parametrize(
    "content",
    [bytes(range(256)) * 4, b"[" * 5000, b'{"format": ' + b"9" * 5000 + b"}"],
    ids=["binary", "deep-nesting", "5000-digit-number"],
)
def test_hostile_board_and_save_files_are_clean_errors(tmp_path, content):
    bad = tmp_path / "bad.json"
    bad.write_bytes(content)
    runner = CliRunner()
    new = runner.invoke(
        cli, ["game", "new", "conquest", str(tmp_path / "g.json"), "--players", "a,b", "--board", str(bad)]
    )
    assert new.exit_code == 2 and "Traceback" not in new.output and f"{bad}" in new.output, new.output
    assert not (tmp_path / "g.json").exists()
    show = runner.invoke(cli, ["game", "show", str(bad)])
    assert show.exit_code == 2 and "Traceback" not in show.output and f"{bad}" in show.output, show.output


def test_new_seeds_the_dice_randomly_unless_a_seed_is_given(tmp_path):
    seeds = set()
    for number in range(3):
        path = tmp_path / f"random{number}.json"
        assert run("new", "conquest", str(path), "--players", "ann,bob").exit_code == 0
        seeds.add(json.loads(path.read_text())["seed"])
    assert len(seeds) == 3
    fixed = tmp_path / "fixed.json"
    assert run("new", "conquest", str(fixed), "--players", "ann,bob", "--seed", "7").exit_code == 0
    assert json.loads(fixed.read_text())["seed"] == 7


def supremacy(tmp_path, *extra: str):
    path = tmp_path / "supremacy.json"
    result = run("new", "supremacy", str(path), "--players", "ann,bob", "--seed", "4", *extra)
    assert result.exit_code == 0, result.output
    return path


def test_play_takes_moves_with_amounts_and_says_what_they_did(tmp_path):
    """S-3.C's example: two units of oil at $500M pay $1 billion."""
    path = supremacy(tmp_path)
    steps = "1\n1\n1\n1\nbid 1\nbid 0\nsell resource=oil units=2\nquit\n"
    result = run("play", str(path), input=steps)
    assert result.exit_code == 0, result.output
    assert "ann sells 2 oil to the market for $1000M." in result.output
    assert "Stage 3 blind bids: ann: 1; bob: 0." in result.output
    assert "salary bill $" in result.output and "cards: " in result.output and "costs: move" in result.output
    assert Game.load(path).state["supplies"]["ann"]["oil"] >= 1


def test_play_ends_a_supremacy_game_with_the_winner_line(tmp_path):
    path = supremacy(tmp_path, "--option", "turn_cap=1")
    result = run("play", str(path), input="1\n" * 30)
    assert result.exit_code == 0, result.output
    assert result.output.rstrip().endswith("Game over. Winner: nobody")


def test_play_quits_at_the_battle_prompt_with_the_game_saved(tmp_path):
    path = new_game(tmp_path, "--option", "starting_chips=20000")
    run("play", str(path), input="pass\noccupy Scandinavia\nquit\n")
    result = run("play", str(path), input="attack Scandinavia\nnobody\nquit\n")
    assert result.exit_code == 0, result.output
    assert "'nobody' is not one of cy, bob" in result.output and "saved in" in result.output
    loaded = Game.load(path)
    assert loaded.state["phase"] == "battle" and loaded.state["owner"]["Scandinavia"] == "bob"


def test_play_does_not_redraw_the_board_after_a_typo(tmp_path):
    path = new_game(tmp_path)
    result = run("play", str(path), input="ocupy Canada\nquit\n")
    assert result.output.count("WARCHEST/bank") == 1
    assert "is not one of ann's moves" in result.output
