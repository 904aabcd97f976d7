"""The combat bridge: Conquest battles fought on the console, read off the bus, applied to the board.

`screen`: the text on screen from the VDC registers (live, or replayed from a capture's writes);
`combat`: our own combat cartridge; `profile`: where a cartridge shows and stores a battle's result
(`profiles/*.json`); `consoles`: the consoles a battle can be fought on; `watch`: reading a battle
off a capture; `resolver`: the `ConsoleResolver` the board game uses; `calibrate`: learning a
profile from practice battles. docs/bridge.md explains all of it.
"""
