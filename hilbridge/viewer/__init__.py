"""Optional live window for the emulator (`hilbridge emu view`): Tk, keyboard and joysticks."""
