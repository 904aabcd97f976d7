"""The reference emulator: Intel 8048 + Intel 8244/8245 + console glue + cartridges. Imports no I/O library."""
