"""The web table: `hilbridge game serve SAVE` lets each player play a saved game in a browser.

`seats.Table` is the game behind the table (tokens, versioned moves, console battles, and the
per-player answers), `app` puts it on HTTP, `board_svg` draws the map from the layout data,
`messages` turns events into sentences, and `serve` starts it all. See docs/table.md.
"""

CONFIRM_TIMEOUT_SECONDS = 300.0
"""How long a console battle's players have to confirm the console's result before it goes to manual
entry (five minutes to read a screen and say yes; `game serve --confirm-timeout`). Here, not in
`confirm`, so that the CLI reads it without importing the bridge."""
