"""The web table: `hilbridge game serve SAVE` lets each player play a saved game in a browser.

`seats.Table` is the game behind the table (tokens, versioned moves, console battles, and the
per-player answers), `app` puts it on HTTP, `board_svg` draws the map from the layout data,
`messages` turns events into sentences, and `serve` starts it all. See docs/table.md.
"""
