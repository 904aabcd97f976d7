"""`hilbridge game serve`: the URLs it prints, the QR codes, the warning for other addresses."""

from __future__ import annotations

import json

from click.testing import CliRunner

from hilbridge.cli.main import cli
from hilbridge.table import serve as serve_module


def served(tmp_path, monkeypatch, *options: str):
    calls = []
    monkeypatch.setattr(serve_module.uvicorn, "run", lambda app, **kw: calls.append(kw))
    save = tmp_path / "game.json"
    runner = CliRunner()
    result = runner.invoke(cli, ["game", "new", "supremacy", str(save), "--players", "ann,bob,cy"])
    assert result.exit_code == 0, result.output
    result = runner.invoke(cli, ["game", "serve", str(save), *options])
    assert result.exit_code == 0, result.output
    tokens = json.loads((tmp_path / "game.json.tokens").read_text())["tokens"]
    return result.output, calls, tokens


def test_serve_binds_the_local_address_and_prints_each_private_url_with_a_qr_code(tmp_path, monkeypatch):
    output, calls, tokens = served(tmp_path, monkeypatch, "--port", "8123")
    assert calls == [
        {"host": "127.0.0.1", "port": 8123, "log_level": "warning", "timeout_graceful_shutdown": 1}
    ]
    for player, token in tokens.items():
        assert f"  {player}: http://127.0.0.1:8123/t/{token}" in output
        assert len(token) >= 32
    assert output.count("█") > 100 or output.count("▀") > 100  # the QR codes
    assert "warning" not in output


def test_serve_on_another_address_warns(tmp_path, monkeypatch):
    output, calls, _ = served(tmp_path, monkeypatch, "--host", "0.0.0.0", "--no-qr")
    assert calls[0]["host"] == "0.0.0.0"
    assert output.startswith("warning: serving on 0.0.0.0")
    assert "▀" not in output and "█" not in output


def test_serve_with_a_console_says_who_confirms_and_refuses_random_battles_too(tmp_path, monkeypatch):
    output, calls, _ = served(tmp_path, monkeypatch, "--console", "sim", "--no-qr")
    assert len(calls) == 1
    assert "their players confirm the result on their pages (within 300 s" in output
    result = CliRunner().invoke(
        cli, ["game", "serve", str(tmp_path / "game.json"), "--console", "sim", "--random-battles"]
    )
    assert result.exit_code == 2 and "choose --console or --random-battles" in result.output
    result = CliRunner().invoke(cli, ["game", "serve", str(tmp_path / "game.json"), "--screen-only"])
    assert result.exit_code == 2 and "go with --console" in result.output


def test_serve_takes_the_confirmation_timeout_and_refuses_one_that_is_not_positive(tmp_path, monkeypatch):
    output, _, _ = served(tmp_path, monkeypatch, "--console", "sim", "--confirm-timeout", "42", "--no-qr")
    assert "(within 42 s, else they enter it by hand)" in output
    save = str(tmp_path / "game.json")
    result = CliRunner().invoke(cli, ["game", "serve", save, "--console", "sim", "--confirm-timeout", "0"])
    assert result.exit_code == 2 and "--confirm-timeout" in result.output
