"""The adapter firmware's host-side tools: UF2 images, boot2 CRC, USB descriptors, build and flash.

The firmware itself is C under `firmware/`; see `firmware/README.md`.
"""
