"""The simulated adapter: options, fault injection, version handshake, cartridge files, servers."""

from __future__ import annotations

import random
import subprocess
import sys

import pytest
from conftest import served_simulator

from hilbridge.errors import HilbridgeError
from hilbridge.link.adapter import Adapter
from hilbridge.link.discovery import open_adapter
from hilbridge.link.errors import LinkDisconnected, VersionMismatch
from hilbridge.link.protocol import MESSAGES, PROTOCOL_VERSION, FrameDecoder, encode_frame
from hilbridge.link.transport import InProcessTransport, SerialTransport
from hilbridge.sim import build_device, build_endpoint
from hilbridge.sim.demo import demo_image
from hilbridge.sim.device import RequestRefused, SimulatedAdapter
from hilbridge.sim.faults import ByteMangler, FaultPlan, FaultyEndpoint


def test_fault_plan_parses_and_rejects_bad_specs():
    plan = FaultPlan.parse("drop=0.01, dup=0.02,disconnect=500,seed=3")
    assert (plan.drop, plan.dup, plan.disconnect, plan.seed) == (0.01, 0.02, 500, 3)
    for bad in ("drop", "flood=1", "drop=x", "corrupt=0.9", "delay=-1"):
        with pytest.raises(HilbridgeError):
            FaultPlan.parse(bad)


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["drop", "corrupt", "dup"])
def test_byte_mangler_applies_each_fault_at_about_its_rate(kind):
    data = random.Random(0).randbytes(200_000)  # the faults' generator is its own: any bytes will do
    mangled = ByteMangler(FaultPlan(**{kind: 0.01}), random.Random(1))(data)
    if kind == "drop":
        assert 0.008 < 1 - len(mangled) / len(data) < 0.012
    elif kind == "dup":
        assert 0.008 < len(mangled) / len(data) - 1 < 0.012
    else:
        changed = sum(a != b for a, b in zip(data, mangled, strict=True))
        assert 0.008 < changed / len(data) < 0.012


def test_faults_are_reproducible_from_the_seed():
    data = bytes(range(256)) * 100
    plan = FaultPlan(drop=0.01, corrupt=0.01, dup=0.01, seed=4)
    first = ByteMangler(plan, random.Random(plan.seed))(data)
    assert first == ByteMangler(plan, random.Random(plan.seed))(data) != data


def test_disconnect_cuts_the_link_after_the_given_bytes():
    endpoint = FaultyEndpoint(build_device(), FaultPlan(disconnect=100))
    with pytest.raises(LinkDisconnected):
        Adapter(InProcessTransport(endpoint)).read(0x400, 1024)
    assert endpoint.sent == 100


def test_stalls_and_delays_are_survived():
    with open_adapter("sim?faults=stall=0.05,delay=0.002,seed=2") as adapter:
        assert adapter.read(0x400, 0x800, p1=0xFC) == demo_image()[:0x800]
        assert adapter.read(0x400, 0x800, p1=0xFD) == demo_image()[0x800:]


def test_a_newer_adapter_is_refused_with_a_version_mismatch(monkeypatch):
    device = build_device()
    original = SimulatedAdapter.on_hello

    def newer(self, host_protocol):
        return {**original(self, PROTOCOL_VERSION), "protocol": PROTOCOL_VERSION + 1}

    monkeypatch.setattr(SimulatedAdapter, "on_hello", newer)
    with pytest.raises(VersionMismatch) as refused:
        Adapter(InProcessTransport(device))
    assert "update" in refused.value.hint


def test_an_adapter_with_older_firmware_is_refused_with_the_advice_to_flash_this_packages(monkeypatch):
    """A version-3 adapter refuses HELLO 4 with VERSION_MISMATCH (its detail naming its protocol, as the
    firmware's does), or one answers HELLO with protocol 3: either way the user is told to flash the
    package's firmware."""
    original = SimulatedAdapter.on_hello

    def refuses(self, host_protocol):
        raise RequestRefused("VERSION_MISMATCH", "adapter speaks protocol 3")

    def answers_protocol_3(self, host_protocol):
        return {**original(self, PROTOCOL_VERSION), "protocol": 3}

    for version_3 in (refuses, answers_protocol_3):
        monkeypatch.setattr(SimulatedAdapter, "on_hello", version_3)
        with pytest.raises(VersionMismatch) as refused:
            Adapter(InProcessTransport(build_device()))
        assert "protocol 3 < 4" in refused.value.hint and "hilbridge firmware flash" in refused.value.hint


def test_an_older_host_is_refused_by_the_adapter():
    device = build_device()
    assert device.on_hello(PROTOCOL_VERSION)["protocol"] == PROTOCOL_VERSION
    with pytest.raises(Exception, match="speaks protocol"):
        device.on_hello(PROTOCOL_VERSION + 1)


def test_unknown_simulator_options_are_user_errors():
    with pytest.raises(HilbridgeError, match="unknown simulator option"):
        build_endpoint("carts=x")
    with pytest.raises(HilbridgeError):
        build_endpoint("type=o2_rally&size=3000")


def test_served_simulator_holds_a_cartridge_file_and_serves_it_over_a_pty(tmp_path):
    image = demo_image("o2_ktaa", 12288)
    cart = tmp_path / "ktaa.bin"
    cart.write_bytes(image)
    with served_simulator("--pty", "--cart", str(cart), "--type", "o2_ktaa") as path:
        output = tmp_path / "out.bin"
        run = subprocess.run(
            [sys.executable, "-m", "hilbridge", "dump", "-d", path, "-o", str(output)],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert run.returncode == 0, run.stderr
        assert "detected: o2_ktaa, 12288 bytes" in run.stdout
        assert output.read_bytes() == image
        with Adapter(SerialTransport(path)) as adapter:
            assert adapter.info.serial == "SIM-0001"


def test_every_pass_of_a_repeated_read_reads_unstable_bits_anew():
    plan = FaultPlan.parse("unstable=3,seed=4")
    device = build_device(None, "o2_rom", 4096, plan)
    unstable = plan.unstable_bits()
    reply = device.on_cart_read_repeat(p1=0xFF, p2=0, strobe=0, address=0x400, length=0x800, count=6)
    passes = [reply["data"][i * 0x800 : (i + 1) * 0x800] for i in range(6)]
    differing = {a for a in range(0x800) if len({p[a] for p in passes}) > 1}
    assert differing and differing <= {a - 0x400 for a in unstable}
    stable = [a for a in range(0x800) if a + 0x400 not in unstable]
    assert all(len({p[a] for p in passes}) == 1 for a in stable)


def test_transmit_with_a_limit_answers_queued_requests_in_order_a_few_at_a_time():
    """A server computes replies only about as far ahead as the connection buffers (serve.REPLY_BATCH)."""
    device = build_device(None, "o2_rally", 16384)
    read = MESSAGES["CART_READ"]
    fields = {"p1": 0xFF, "p2": 0, "strobe": 0, "length": 0x400}
    device.receive(
        b"".join(
            encode_frame(read.id, seq, read.request_layout.pack({**fields, "address": 0x400 * seq}))
            for seq in (1, 2, 3)
        )
    )
    assert device.busy  # requests wait to be answered
    decoder = FrameDecoder()
    first = decoder.feed(device.transmit(limit=1))
    rest = decoder.feed(device.transmit())
    assert [frame.seq for frame in first] == [1] and [frame.seq for frame in rest] == [2, 3]
    assert not device.busy
    program = device.cartridge.program_view(0xFF)
    for frame in first + rest:
        values = read.response_layout.unpack(frame.payload, "CART_READ")
        start = values["address"] - 0x400
        assert values["data"] == program[start : start + 0x400]


def test_the_demo_cartridge_draws_a_picture_when_run():
    import numpy as np

    from hilbridge.machine.cartridge import load_cartridge
    from hilbridge.machine.console import Console
    from hilbridge.sim.demo import demo_image

    console = Console(load_cartridge(demo_image()))
    console.run_frames(10)
    picture = console.vdc.frame()
    assert len(np.unique(picture)) >= 2  # a grid over a background, not a black screen
    assert np.count_nonzero(picture) > picture.size // 2


def test_the_demo_cartridge_is_in_the_cartridge_list():
    from click.testing import CliRunner

    from hilbridge import cartdb
    from hilbridge.cli.main import cli
    from hilbridge.sim.demo import demo_image

    [match] = cartdb.identify(demo_image())
    assert match.exact and match.cartridge.name == "hilbridge_demo" and match.cartridge.mapper == "o2_rom"
    listed = CliRunner().invoke(cli, ["carts", "list"])
    assert "hilbridge_demo" in listed.output


@pytest.mark.parametrize("size", [0, 1, 2, 3, 4, 5, 2048, 4096, 16384])
def test_the_demo_fill_made_at_once_is_the_fill_made_a_byte_at_a_time(size):
    from hilbridge.sim.demo import filler_bytes

    for seed in (0, 1, 2600 * 7919 + size, 2**40 + 3):
        plain = random.Random(seed)
        assert filler_bytes(seed, size) == bytes(plain.getrandbits(8) for _ in range(size))
