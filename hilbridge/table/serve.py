"""Start the web table: print each player's private URL (and a QR code), then serve until Ctrl-C."""

from __future__ import annotations

import io
import socket
from collections.abc import Callable
from pathlib import Path

import segno
import uvicorn

from hilbridge.game import CombatResolver
from hilbridge.table import CONFIRM_TIMEOUT_SECONDS
from hilbridge.table.app import create_app
from hilbridge.table.seats import BridgeFactory, Table, tokens_path

LOCAL = "127.0.0.1"


def player_urls(table: Table, host: str, port: int) -> dict[str, str]:
    shown = socket.gethostname() if host in ("0.0.0.0", "::") else host
    return {player: f"http://{shown}:{port}/t/{token}" for player, token in table.tokens.items()}


def qr_text(url: str) -> str:
    """`url` as a QR code drawn with terminal block characters."""
    out = io.StringIO()
    segno.make(url, error="l").terminal(out=out, compact=True)
    return out.getvalue()


def serve(
    save: Path,
    host: str = LOCAL,
    port: int = 8470,
    console: CombatResolver | None = None,
    bridge: BridgeFactory | None = None,
    confirm_timeout: float = CONFIRM_TIMEOUT_SECONDS,
    qr: bool = True,
    echo: Callable[[str], None] = print,
) -> None:
    table = Table(save, console, bridge, confirm_timeout)
    if host != LOCAL:
        echo(
            f"warning: serving on {host}: anyone who can reach this address and learns a URL plays as that "
            "player (the URLs are the only check)"
        )
    urls = player_urls(table, host, port)
    state = "new" if table.new_tokens else "unchanged"
    echo(f"{table.game.ruleset.name} from {save}; private URLs ({state}, kept in {tokens_path(save)}):")
    for player, url in urls.items():
        echo(f"  {player}: {url}")
        if qr:
            echo(qr_text(url))
    echo("Give each player only their own URL. Ctrl-C stops the table; the game is saved after every move.")
    if bridge is not None:
        echo(
            "Console battles are fought on the console; their players confirm the result on their pages "
            f"(within {confirm_timeout:g} s, else they enter it by hand)."
        )
    try:
        uvicorn.run(create_app(table), host=host, port=port, log_level="warning", timeout_graceful_shutdown=1)
    finally:
        table.close()
