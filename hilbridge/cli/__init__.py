"""The `hilbridge` command line: a thin layer of click commands over the library, one module per group."""
