"""The mapper registry (hilbridge/machine/mappers.tsv): every consumer reads it, and a new mapper is
one row plus its banking rule (the firmware's generated table: tests/firmware/test_fw_protocol.py)."""

from __future__ import annotations

from importlib import resources

import pytest
from conftest import PROJECT_ROOT

from hilbridge import cartdb
from hilbridge.dumper import detect
from hilbridge.errors import HilbridgeError
from hilbridge.link.adapter import Adapter
from hilbridge.link.protocol import codes
from hilbridge.link.transport import InProcessTransport
from hilbridge.machine.cartridge import BANKING_RULES, MAPPER_TYPES, BankingRule, load_cartridge
from hilbridge.machine.mappers import DEFAULT_REGISTRY, parse_registry, registry, use_registry
from hilbridge.oracle import mame
from hilbridge.oracle.emulator import MAME_EQUIVALENT_MAPPERS
from hilbridge.sim import build_device
from hilbridge.sim.demo import demo_image

REGISTRY_TEXT = resources.files("hilbridge.machine").joinpath("mappers.tsv").read_text(encoding="utf-8")
NEW_ROW = "\t".join(
    [
        "o2_big32",
        "5",
        "-",
        "32768",
        "no",
        "32768",
        "latch_any",
        "2048",
        "mirror_400",
        "0",
        "mask",
        "none",
        "-",
        "test mapper: 16 banks of 2 KB from a latch that any MOVX write with A7 = 1 sets",
    ]
)
BANK = 2048


class LatchAny(BankingRule):
    """The new mapper's banking rule: a latch set by every MOVX write with A7 = 1, whatever P14 is."""

    takes_writes = True

    def bank(self, p1: int) -> int:
        return self.latch & (self.banks - 1)

    def write(self, address: int, value: int, p1: int) -> None:
        if address & 0x80:
            self.latch = value


@pytest.fixture
def with_new_mapper(monkeypatch):
    """The package's registry plus NEW_ROW, and the rule LatchAny under the name the row gives."""
    monkeypatch.setitem(BANKING_RULES, "latch_any", LatchAny)
    with use_registry(parse_registry(REGISTRY_TEXT + NEW_ROW + "\n", "test-mappers.tsv")) as extended:
        yield extended


def banked_image(banks: int) -> bytes:
    """Every byte of bank b is b: what a fetch reads names the bank it reached."""
    return b"".join(bytes([bank]) * BANK for bank in range(banks))


def test_one_row_and_its_banking_rule_reach_every_consumer(with_new_mapper):
    image = banked_image(16)
    # the size rule (cartridge list, emulator, oracle): an unlisted 32 KB image is the new mapper
    assert cartdb.mapper_from_size(len(image)) == "o2_big32"
    assert mame.mame_slot_for_size(len(image)) == "o2_big32"
    assert 32768 in cartdb.cartridge_sizes()
    assert "o2_big32" in MAPPER_TYPES
    # the emulator: the cartridge banks by the new rule
    cart = load_cartridge(image)
    assert cart.mapper == "o2_big32" and cart.takes_writes
    cart.write(0x80, 9, p1=0xFF, p2=0)  # P14 high: the o2_rally latch would ignore this write
    assert cart.fetch(0x400, 0xFF, 0) == 9 and cart.program_view(0xFF)[0] == 9
    assert cart.fetch(0xC00, 0xFF, 0) == 9  # mirror_400: 0C00h reaches 0400h of the bank
    cart.write(0x7F, 3, p1=0xFF, p2=0)  # A7 = 0: no latch write
    assert cart.fetch(0x400, 0xFF, 0) == 9
    # the link and the simulated adapter: uploaded under protocol id 5 and served as the new mapper
    device = build_device(mapper="o2_rom")
    with Adapter(InProcessTransport(device)) as adapter:
        adapter.upload(image, "o2_big32")
        assert adapter.emulation(True)["mapper"] == "o2_big32"
    assert device.emulated is not None and device.emulated.mapper == "o2_big32"
    # the dumper and the oracle refuse it by the row's own columns (detect no, no MAME slot)
    with pytest.raises(HilbridgeError, match="cannot dump mapper 'o2_big32'"):
        detect.detect(Adapter(InProcessTransport(build_device())), "o2_big32")
    with pytest.raises(HilbridgeError, match="unknown cartridge type 'o2_big32'"):
        mame.run_mame(image, frames=1, slot="o2_big32")


def test_the_new_row_is_gone_outside_its_registry(with_new_mapper):
    with use_registry(DEFAULT_REGISTRY):
        with pytest.raises(HilbridgeError, match="no supported mapper is larger than 16384"):
            load_cartridge(banked_image(16))
        assert "o2_big32" not in MAPPER_TYPES
    assert registry() is with_new_mapper


def test_a_row_without_its_banking_rule_is_refused_when_loaded():
    extended = parse_registry(REGISTRY_TEXT + NEW_ROW + "\n", "test-mappers.tsv")
    with use_registry(extended), pytest.raises(HilbridgeError, match="no banking rule 'latch_any'"):
        load_cartridge(banked_image(16))


def test_every_emulated_mapper_has_its_banking_rule():
    assert {m.bank_select for m in MAPPER_TYPES.values()} <= set(BANKING_RULES)


def test_the_link_codes_are_the_registrys_protocol_ids_and_the_protocol_document_lists_them():
    assert codes("mapper") == DEFAULT_REGISTRY.protocol_ids
    text = (PROJECT_ROOT / "docs/protocol.md").read_text(encoding="utf-8")
    for name, number in DEFAULT_REGISTRY.protocol_ids.items():
        assert f"| {number} | `{name}` |" in text


def test_every_type_the_cartridge_list_names_is_a_registry_row():
    listed = {entry.mapper for entry in cartdb.entries()}
    assert listed == set(cartdb.MAPPERS) == set(DEFAULT_REGISTRY.slot_types)


def test_listed_images_fit_the_sizes_of_their_emulated_mapper():
    for entry in cartdb.entries():
        mapper = DEFAULT_REGISTRY.mappers[entry.mapper]
        if mapper.emulated and entry.program_roms:
            assert entry.program_size in mapper.sizes, entry.name


@pytest.mark.parametrize("size", DEFAULT_REGISTRY.image_sizes)
def test_the_size_rule_is_one_function_for_every_consumer(size):
    chosen = DEFAULT_REGISTRY.for_size(size).name
    assert cartdb.mapper_from_size(size) == mame.mame_slot_for_size(size) == chosen
    # MAME 0.251 loads a plain 16 KB file as o2_rally, everything else as o2_rom (docs/oracle.md)
    assert chosen == ("o2_rally" if size == 16384 else "o2_rom")


def test_the_dumper_has_a_plan_for_each_detectable_mapper_and_only_those():
    assert set(detect.PLANS) == set(DEFAULT_REGISTRY.detectable) == set(detect.DETECTABLE)
    assert all(DEFAULT_REGISTRY.mappers[name].emulated for name in detect.PLANS)


def test_the_oracle_runs_each_mame_slot_with_the_mapper_that_behaves_like_it():
    assert DEFAULT_REGISTRY.mame_slots == mame.SLOTS
    for slot in mame.SLOTS:
        assert DEFAULT_REGISTRY.mappers[slot].name == slot  # MAME's slot types are our names
        assert DEFAULT_REGISTRY.for_mame_slot(slot).emulated
    assert MAME_EQUIVALENT_MAPPERS == {"o2_rom": "o2_rom_mame0251"}  # docs/accuracy.md


@pytest.mark.parametrize("name", sorted(DEFAULT_REGISTRY.protocol_ids))
def test_the_simulated_adapter_serves_each_uploadable_mapper_by_its_id(name):
    mapper = DEFAULT_REGISTRY.mappers[name]
    image = demo_image(name, mapper.sizes[-1])
    device = build_device()
    with Adapter(InProcessTransport(device)) as adapter:
        adapter.upload(image, name)
        state = adapter.emulation(True)
    assert state["mapper"] == name and device.emulated is not None and device.emulated.mapper == name


def _with_row(row: str) -> str:
    return REGISTRY_TEXT + row + "\n"


def _line_of_last_row() -> int:
    return len(REGISTRY_TEXT.splitlines()) + 1


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (("5", "1"), "protocol_id appears more than once: 1"),
        (("32768\tno\t32768", "16384\tno\t32768,16384"), "size_rule size appears more than once: 16384"),
        (("mirror_400", "mirror_200"), "unknown high_window 'mirror_200'"),
        (("\tno\t", "\tmaybe\t"), "detect is yes or no"),
        (("latch_any", "latch any"), "is not a banking rule's name"),
        (("\t32768\tno\t", "\t4096\tno\t"), "size_rule and layout sizes must be sizes of the mapper"),
        (("\t32768\tno\t", "\t*\tno\t"), "size_rule \\* appears more than once: o2_rom, o2_big32"),
    ],
)
def test_a_malformed_row_is_refused_with_its_place(change, message):
    old, new = change
    row = NEW_ROW.replace(old, new, 1)
    with pytest.raises(HilbridgeError, match=message) as refused:
        parse_registry(_with_row(row), "broken.tsv")
    assert refused.value.location is not None and refused.value.location.file == "broken.tsv"
    if "appears more than once" not in message:
        assert refused.value.location.line == _line_of_last_row()
