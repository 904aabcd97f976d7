"""The `hilbridge` command and `python -m hilbridge`.

`hilbridge --version` is answered here, before click and the command table are imported: scripts
and installers call it to check the tool, and importing click is most of what the command would
add to a bare Python start-up. Everything else goes to the click group in `hilbridge.cli.main`.
"""

from __future__ import annotations

import sys

from hilbridge import __version__

VERSION_LINE = f"hilbridge, version {__version__}"
"""What click's version option prints for the group (tests/test_cli.py checks that the two agree)."""


def main() -> None:
    if sys.argv[1:] == ["--version"]:
        sys.stdout.write(VERSION_LINE + "\n")
        return
    from hilbridge.cli.main import main as click_main

    click_main()


if __name__ == "__main__":
    main()
