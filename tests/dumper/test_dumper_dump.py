"""Dumping through the simulated adapter: every mapper type, noisy links, interruptions, unstable carts."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from click.testing import CliRunner
from conftest import served_simulator

from hilbridge import cartdb
from hilbridge.cli.main import cli
from hilbridge.dumper.dump import dump_cartridge, output_name
from hilbridge.errors import HilbridgeError
from hilbridge.link.discovery import open_adapter
from hilbridge.link.errors import LinkError
from hilbridge.sim.demo import demo_image

CARTRIDGES = [
    ("o2_rom", 2048),
    ("o2_rom", 4096),
    ("o2_rom", 8192),
    ("o2_4in1", 4096),
    ("o2_rally", 8192),
    ("o2_rally", 12288),
    ("o2_rally", 16384),
    ("o2_ktaa", 3072),
    ("o2_ktaa", 6144),
    ("o2_ktaa", 12288),
]
NOISY = "drop=0.01,corrupt=0.01,dup=0.01"


def _sim(mapper: str, size: int, faults: str = "") -> str:
    return f"sim?type={mapper}&size={size}&faults={faults}"


@pytest.mark.parametrize(("mapper", "size"), CARTRIDGES)
def test_every_mapper_type_is_detected_and_dumped_exactly(tmp_path, mapper, size):
    with open_adapter(_sim(mapper, size)) as adapter:
        result = dump_cartridge(adapter, tmp_path / "out.bin")
    assert (result.detection.mapper, len(result.image)) == (mapper, size)
    assert result.verified and not result.unstable
    assert (tmp_path / "out.bin").read_bytes() == demo_image(mapper, size)
    assert not list(tmp_path.glob("*.partial*"))


@pytest.mark.slow
@pytest.mark.parametrize(("mapper", "size"), CARTRIDGES)
def test_dumps_are_exact_with_one_percent_of_bytes_dropped_corrupted_and_duplicated(tmp_path, mapper, size):
    with open_adapter(_sim(mapper, size, f"{NOISY},seed={size % 97}")) as adapter:
        result = dump_cartridge(adapter, tmp_path / "out.bin")
        assert adapter.link.stats.bad_frames > 0 and adapter.link.stats.retransmits > 0
    assert result.detection.mapper == mapper
    assert (tmp_path / "out.bin").read_bytes() == demo_image(mapper, size)


def test_forced_type_is_sized_from_the_cartridge(tmp_path):
    with open_adapter(_sim("o2_ktaa", 6144)) as adapter:
        result = dump_cartridge(adapter, tmp_path / "k.bin", mapper="o2_ktaa")
    assert result.image == demo_image("o2_ktaa", 6144)
    assert "given by the user" in result.detection.reasons[0]


def test_interrupted_dump_resumes_and_finishes_byte_exact(tmp_path):
    output = tmp_path / "rally.bin"
    with (
        open_adapter(_sim("o2_rally", 16384, "disconnect=45000")) as adapter,
        pytest.raises(LinkError) as cut,
    ):
        dump_cartridge(adapter, output)
    assert "run the same command again" in cut.value.hint
    assert not output.exists()
    state = json.loads((tmp_path / "rally.bin.partial.json").read_text())
    done_before = sum(len(d) for d in state["done"])
    assert 0 < done_before < 2 * 16
    checked_again = len(set(state["done"][0]) & set(state["done"][1]))  # all passes resumed: one check read
    with open_adapter(_sim("o2_rally", 16384)) as adapter:
        result = dump_cartridge(adapter, output)
        reads_after = result.reads
    assert result.resumed
    assert output.read_bytes() == demo_image("o2_rally", 16384)
    assert reads_after == 2 * 16 - done_before + checked_again
    assert not list(tmp_path.glob("*.partial*"))


def test_a_partial_dump_of_another_cartridge_is_not_reused(tmp_path):
    output = tmp_path / "x.bin"
    with open_adapter(_sim("o2_rom", 8192, "disconnect=30000")) as adapter, pytest.raises(LinkError):
        dump_cartridge(adapter, output)
    notices = []
    with open_adapter(_sim("o2_rom", 4096)) as adapter:
        result = dump_cartridge(adapter, output, notice=notices.append)
    assert not result.resumed and notices and "another cartridge" in notices[0]
    assert output.read_bytes() == demo_image("o2_rom", 4096)


def test_unstable_cartridge_is_reported_and_not_written(tmp_path):
    output = tmp_path / "flaky.bin"
    with open_adapter(_sim("o2_rom", 4096, "unstable=4,seed=5")) as adapter:
        result = dump_cartridge(adapter, output)
    assert not result.verified and not result.written and not output.exists()
    clean = demo_image("o2_rom", 4096)
    assert result.unstable
    for offset, values in result.unstable.items():
        assert clean[offset] in values and len(values) >= 2
    assert set(result.report()["unstable"]) == {f"0x{o:04x}" for o in result.unstable}


def test_unstable_cartridge_is_written_when_asked_and_says_so(tmp_path):
    output = tmp_path / "flaky.bin"
    with open_adapter(_sim("o2_rom", 4096, "unstable=2,seed=9")) as adapter:
        result = dump_cartridge(adapter, output, keep_unverified=True)
    assert result.written and not result.verified and output.exists()
    assert result.report()["verified"] is False


def test_fewer_than_two_passes_are_refused(tmp_path):
    with open_adapter("sim") as adapter, pytest.raises(HilbridgeError):
        dump_cartridge(adapter, tmp_path / "o.bin", passes=1)


def test_identified_dump_is_named_after_the_list_entry():
    entry = cartdb.by_name("conquest")
    assert output_name([cartdb.Match(entry, exact=True)], b"") == entry.file_name
    assert output_name([cartdb.Match(entry, exact=False)], b"\x01") == "unknown-a505df1b.bin"


def test_cli_dump_writes_a_verified_file_and_a_json_report(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the second dump names its file itself, in the current folder
    runner = CliRunner()
    result = runner.invoke(cli, ["dump", "-d", "sim", "-o", "demo.bin", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["verified"] and report["mapper"] == "o2_rom" and report["size"] == 4096
    assert (tmp_path / "demo.bin").read_bytes() == demo_image()
    plain = runner.invoke(cli, ["dump", "-d", "sim"])
    assert plain.exit_code == 0
    assert report["identified"][0]["name"] == "hilbridge_demo"  # the demo is in the cartridge list
    assert (tmp_path / "hilbridge_demo.bin").read_bytes() == demo_image()


def test_cli_dump_of_an_unstable_cartridge_exits_2_without_traceback(tmp_path):
    output = tmp_path / "f.bin"
    result = CliRunner().invoke(cli, ["dump", "-d", "sim?faults=unstable=3", "-o", str(output)])
    assert result.exit_code == 2
    assert "not verified" in result.output and "Traceback" not in result.output
    assert not output.exists()


def test_cli_reports_a_missing_device_as_an_error(tmp_path):
    result = CliRunner().invoke(cli, ["dump", "-d", str(tmp_path / "ttyNOPE"), "-o", str(tmp_path / "o.bin")])
    assert result.exit_code == 2 and "error: cannot open" in result.output


def test_cli_load_and_unload(tmp_path):
    rom = tmp_path / "rally.bin"
    rom.write_bytes(demo_image("o2_rally", 16384))
    runner = CliRunner()
    loaded = runner.invoke(cli, ["load", str(rom), "-d", "sim", "--type", "o2_rally"])
    assert loaded.exit_code == 0, loaded.output
    assert "o2_rally, 16384 bytes" in loaded.output and "verified" in loaded.output
    assert runner.invoke(cli, ["unload", "-d", "sim"]).exit_code == 0
    bad = tmp_path / "bad.bin"
    bad.write_bytes(b"\x00" * 1000)
    refused = runner.invoke(cli, ["load", str(bad), "-d", "sim"])
    assert refused.exit_code == 2 and "Traceback" not in refused.output


def test_cli_devices_lists_the_simulator():
    result = CliRunner().invoke(cli, ["devices", "--json"])
    assert result.exit_code == 0
    assert any(entry["name"] == "sim" for entry in json.loads(result.output))


@pytest.mark.slow
def test_dump_over_socket_resumes_across_disconnects_of_a_served_simulator(tmp_path):
    with served_simulator("--port", "0", "--faults", "disconnect=20000") as url:
        output = tmp_path / "demo.bin"
        codes = []
        for _ in range(6):
            run = subprocess.run(
                [sys.executable, "-m", "hilbridge", "dump", "-d", url, "-o", str(output)],
                capture_output=True,
                text=True,
                timeout=120,
            )
            codes.append(run.returncode)
            if run.returncode == 0:
                assert "resumed an interrupted dump" in run.stdout
                break
            assert "dump interrupted" in run.stderr and "Traceback" not in run.stderr
        assert codes[0] == 2 and codes[-1] == 0
        assert output.read_bytes() == demo_image()


def test_a_dump_the_list_knows_is_identified_and_named_after_it(tmp_path, monkeypatch):
    entry = cartdb.by_name("conquest")
    image = demo_image()
    real_identify = cartdb.identify

    def identify(data: bytes) -> list[cartdb.Match]:
        return [cartdb.Match(entry, exact=True)] if data == image else real_identify(data)

    monkeypatch.setattr(cartdb, "identify", identify)
    with open_adapter("sim") as adapter:
        result = dump_cartridge(adapter, directory=tmp_path)
    assert result.output == tmp_path / entry.file_name
    assert (tmp_path / entry.file_name).read_bytes() == image
    assert result.report()["identified"] == [
        {"name": "conquest", "description": entry.description, "exact": True}
    ]


def test_a_live_noisy_link_is_not_declared_dead_by_one_unlucky_short_frame(tmp_path):
    # With 3 % of bytes damaged even the shortest piece fails most attempts; a budget of 10 tries
    # would end the dump on the first unlucky piece although the adapter keeps answering others.
    with open_adapter(_sim("o2_rom", 4096, f"{NOISY},seed=5")) as adapter:
        adapter.link.retries = 10
        adapter.piece_size = 16
        result = dump_cartridge(adapter, tmp_path / "out.bin")
        assert adapter.link.stats.retransmits > 0
    assert (tmp_path / "out.bin").read_bytes() == demo_image("o2_rom", 4096) == result.image


def _cart_sim(tmp_path, image: bytes, mapper: str, faults: str = "", name: str = "cart.bin") -> str:
    path = tmp_path / name
    path.write_bytes(image)
    return f"sim?cart={path}&type={mapper}&faults={faults}"


def test_a_4k_cartridge_whose_banks_differ_in_a_few_bytes_is_dumped_as_4k(tmp_path):
    # Different data is different data: no tolerance may fold two nearly equal banks into one.
    bank = demo_image("o2_rom", 2048)
    other = bytearray(bank)
    for offset in (0x100, 0x345, 0x7FE):
        other[offset] ^= 0x5A
    image = bank + bytes(other)
    with open_adapter(_cart_sim(tmp_path, image, "o2_rom")) as adapter:
        result = dump_cartridge(adapter, tmp_path / "out.bin")
    assert result.detection.size == 4096 and result.image == image and result.verified


def test_unstable_bits_do_not_make_a_2k_cartridge_look_bigger(tmp_path):
    with open_adapter(_sim("o2_rom", 2048, "unstable=12,seed=3")) as adapter:
        result = dump_cartridge(adapter, tmp_path / "out.bin", keep_unverified=True)
    assert result.detection.size == 2048 and result.unstable


def test_a_forced_o2_rally_type_on_a_cartridge_without_a_bank_latch_is_refused(tmp_path):
    with open_adapter(_sim("o2_rom", 4096)) as adapter, pytest.raises(HilbridgeError, match="latch"):
        dump_cartridge(adapter, tmp_path / "out.bin", mapper="o2_rally")
    assert not (tmp_path / "out.bin").exists()


@pytest.mark.parametrize("disconnect", [45000, 60000])
def test_a_resumed_dump_of_a_cartridge_that_differs_only_in_bank_3_is_not_the_old_one(tmp_path, disconnect):
    first = demo_image("o2_rally", 16384)
    second = bytearray(first)
    second[3 * 2048 + 0x123] ^= 0xFF
    output = tmp_path / "rally.bin"
    interrupted = _cart_sim(tmp_path, first, "o2_rally", f"disconnect={disconnect}", "a.bin")
    with open_adapter(interrupted) as adapter, pytest.raises(LinkError):
        dump_cartridge(adapter, output)
    assert (tmp_path / "rally.bin.partial.json").exists()
    notices: list[str] = []
    with open_adapter(_cart_sim(tmp_path, bytes(second), "o2_rally", name="b.bin")) as adapter:
        result = dump_cartridge(adapter, output, notice=notices.append)
    assert output.read_bytes() == bytes(second) and result.verified and not result.recovered
    assert not result.resumed and "does not match the cartridge" in notices[0]


def test_cli_loads_a_12k_videopac_plus_image(tmp_path):
    rom = tmp_path / "plus.bin"
    rom.write_bytes(demo_image("o2_rally", 12288))
    loaded = CliRunner().invoke(cli, ["load", str(rom), "-d", "sim", "--type", "o2_rally"])
    assert loaded.exit_code == 0, loaded.output
    assert "o2_rally, 12288 bytes" in loaded.output


def test_dump_json_reports_retries_and_damaged_frames(tmp_path):
    out = tmp_path / "n.bin"
    result = CliRunner().invoke(
        cli, ["dump", "-d", _sim("o2_rom", 4096, f"{NOISY},seed=2"), "-o", str(out), "--json"]
    )
    assert result.exit_code == 0, result.output
    link = json.loads(result.output)["link"]
    assert link["retransmits"] > 0 and link["bad_frames"] > 0 and "timeouts" in link


@pytest.mark.slow
def test_no_hello_under_heavy_simulated_faults_names_the_fault_settings(tmp_path):
    faults = "drop=0.3,corrupt=0.3,dup=0.3"
    result = CliRunner().invoke(cli, ["dump", "-d", f"sim?faults={faults}", "-o", str(tmp_path / "x.bin")])
    assert result.exit_code == 2 and "no adapter answered HELLO" in result.output
    assert faults in result.output and "cable" not in result.output


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("socket://127.0.0.1:99999", "port 99999"),
        ("socket://localhost", "no port"),
        ("rfc2217://:5000", "no host"),
    ],
)
def test_a_bad_device_url_says_what_a_device_url_looks_like(url, problem):
    result = CliRunner().invoke(cli, ["dump", "-d", url])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert problem in result.output and "socket://HOST:PORT" in result.output
