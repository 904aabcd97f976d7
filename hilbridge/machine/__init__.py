"""The reference emulator: 8048 + 8244/8245 + console glue + cartridges. Imports no I/O library."""
