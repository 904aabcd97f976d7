import subprocess
import sys

from click.testing import CliRunner

from hilbridge import __version__
from hilbridge.cli.main import COMMANDS, cli


def test_version():
    result = CliRunner().invoke(cli, ["--version"])
    assert result.exit_code == 0
    assert __version__ in result.output


def test_the_version_shortcut_prints_what_click_prints_and_imports_neither_click_nor_a_command():
    from hilbridge.__main__ import VERSION_LINE

    assert CliRunner().invoke(cli, ["--version"]).output == VERSION_LINE + "\n"
    code = (
        "import sys; sys.argv = ['hilbridge', '--version']\n"
        "from hilbridge.__main__ import main; main()\n"
        "print(sorted(m for m in sys.modules if m == 'click' or m.startswith('hilbridge.cli')))"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert run.stdout.splitlines() == [VERSION_LINE, "[]"], run.stdout + run.stderr
    run = subprocess.run([sys.executable, "-m", "hilbridge", "--version"], capture_output=True, text=True)
    assert run.stdout == VERSION_LINE + "\n" and run.returncode == 0


def test_help_lists_groups():
    result = CliRunner().invoke(cli, ["--help"])
    assert result.exit_code == 0
    assert "Usage" in result.output
    listed = {line.split()[0] for line in result.output.split("Commands:")[1].splitlines() if line.strip()}
    assert listed == {name for _, name in COMMANDS}
    assert {"asm", "disasm", "dump", "load", "unload", "emu", "sim", "oracle", "game", "carts"} <= listed


def test_every_command_in_the_table_resolves_and_has_help():
    for _, name in COMMANDS:
        result = CliRunner().invoke(cli, [name, "--help"])
        assert result.exit_code == 0, (name, result.output)
        assert "Usage" in result.output


def test_version_imports_no_command_group():
    # `hilbridge --version` must not pay for importing every command (numpy, the emulator, pyserial...).
    code = (
        "import sys; from hilbridge.cli.main import cli\n"
        "try:\n    cli(['--version'])\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in sys.modules if m.startswith('hilbridge.cli.') and m != 'hilbridge.cli.main'))"  # noqa: E501
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert run.stdout.strip().splitlines()[-1] == "[]", run.stdout


def test_a_library_warning_prints_as_a_message_not_a_python_warning(tmp_path):
    from hilbridge.sim.demo import demo_image

    cart = tmp_path / "c.bin"
    cart.write_bytes(demo_image())
    bios = tmp_path / "odd-bios.bin"
    bios.write_bytes(bytes(1024))
    run = subprocess.run(
        [sys.executable, "-m", "hilbridge", "emu", "run", str(cart), "--frames", "1", "--bios", str(bios)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    assert f"{bios}: warning: unknown BIOS image" in run.stderr
    assert "UnknownBiosWarning" not in run.stderr and "warnings.warn" not in run.stderr
