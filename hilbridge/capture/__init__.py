"""Bus captures: what a console (or a stand-in for one) did on the cartridge slot, as a stream of items.

`stream` declares the items and the `CaptureSource` interface that every device (a real adapter, the
simulated adapter, MAME, a capture file) offers to the frame-by-frame check and the combat bridge.
"""
