"""The web table over HTTP (Starlette): each player's page, its JSON, moves, and live updates.

Starlette is a small, well-kept ASGI toolkit whose responses (JSON, streaming for server-sent
events) are all the table needs; uvicorn serves it. Server-sent events carry only the new revision
(never game data), so each page fetches its own view again, through its own token.

Routes (TOKEN is a player's private token; anything else is 403):
``GET /t/TOKEN`` the page, ``GET /t/TOKEN/state`` its JSON, ``POST /t/TOKEN/move``,
``/battle``, ``/undo`` (JSON bodies with the revision the page was drawn at; 400 malformed or
illegal, 409 stale), ``/confirm`` (a battle player's answer to the console bridge: the question's
number and yes or no), ``GET /t/TOKEN/events`` the live revision stream.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from html import escape
from importlib import resources
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from hilbridge.table.seats import BadRequest, StaleMove, Table

PRIVATE = {
    "Cache-Control": "no-store",
    "Referrer-Policy": "no-referrer",  # the token is in the URL: never pass it on
    "X-Content-Type-Options": "nosniff",
}
KEEP_ALIVE_SECONDS = 15.0


def _static(name: str) -> str:
    return resources.files("hilbridge.table").joinpath("static", name).read_text("utf-8")


def _json(data: Any, status: int = 200) -> JSONResponse:
    return JSONResponse(data, status_code=status, headers=PRIVATE)


def _forbidden() -> Response:
    return _json({"error": "this page needs a player's private URL (its token is wrong or missing)"}, 403)


def create_app(table: Table) -> Starlette:
    """The ASGI app for `table` (one game, one save file)."""

    def seat(request: Request) -> str | None:
        return table.player_for(request.path_params.get("token", ""))

    async def page(request: Request) -> Response:
        player = seat(request)
        if player is None:
            return _forbidden()
        html = (
            _static("page.html")
            .replace("{player}", escape(player))
            .replace("{game}", table.game.ruleset.name)
        )
        return Response(html, media_type="text/html", headers=PRIVATE)

    async def state(request: Request) -> Response:
        player = seat(request)
        if player is None:
            return _forbidden()
        return _json(await run_in_threadpool(table.snapshot, player))

    def action(method: str) -> Any:
        async def handle(request: Request) -> Response:
            player = seat(request)
            if player is None:
                return _forbidden()
            try:
                body = json.loads(await request.body())
            except (json.JSONDecodeError, UnicodeDecodeError) as error:
                return _json({"error": f"the request body is not JSON: {error}"}, 400)
            try:
                return _json(await run_in_threadpool(getattr(table, method), player, body))
            except StaleMove as error:
                return _json({"error": error.message, "stale": True, "revision": table.revision}, 409)
            except BadRequest as error:
                return _json({"error": error.message}, 400)

        return handle

    async def events(request: Request) -> Response:
        player = seat(request)
        if player is None:
            return _forbidden()
        queue: asyncio.Queue[str] = asyncio.Queue()
        loop = asyncio.get_running_loop()

        def listener(revision: str) -> None:  # called from the thread that made the move
            loop.call_soon_threadsafe(queue.put_nowait, revision)

        table.listeners.append(listener)

        async def stream() -> AsyncIterator[str]:
            try:
                yield f"retry: 1000\ndata: {table.revision}\n\n"
                while True:
                    try:
                        revision = await asyncio.wait_for(queue.get(), KEEP_ALIVE_SECONDS)
                    except TimeoutError:
                        yield ": keep-alive\n\n"
                        continue
                    yield f"data: {revision}\n\n"
            finally:
                table.listeners.remove(listener)

        return StreamingResponse(stream(), media_type="text/event-stream", headers=PRIVATE)

    async def script(request: Request) -> Response:
        return Response(_static("table.js"), media_type="text/javascript", headers=PRIVATE)

    async def style(request: Request) -> Response:
        return Response(_static("table.css"), media_type="text/css", headers=PRIVATE)

    async def refuse(request: Request) -> Response:
        return _forbidden()

    routes = [
        Route("/static/table.js", script),
        Route("/static/table.css", style),
        Route("/t/{token}", page),
        Route("/t/{token}/state", state),
        Route("/t/{token}/events", events),
        Route("/t/{token}/move", action("move"), methods=["POST"]),
        Route("/t/{token}/battle", action("battle"), methods=["POST"]),
        Route("/t/{token}/undo", action("undo"), methods=["POST"]),
        Route("/t/{token}/confirm", action("confirm"), methods=["POST"]),
        Route("/{rest:path}", refuse, methods=["GET", "POST"]),
    ]
    return Starlette(routes=routes)
