"""Picture and sound files from emulator output (PNG, animated GIF, WAV).

Kept outside `hilbridge.machine` because the emulator core imports no I/O library.
"""

from hilbridge.media.audio import wav_bytes, write_wav
from hilbridge.media.images import gif_bytes, png_bytes, write_gif, write_png

__all__ = ["gif_bytes", "png_bytes", "wav_bytes", "write_gif", "write_png", "write_wav"]
