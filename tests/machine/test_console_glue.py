"""Console glue: MOVX decode by P1, external RAM, keyboard encoder, joysticks, LUM.

The facts: docs/hardware.md, "Glue logic"."""

from __future__ import annotations

import pytest
from fixture_runs import SPECS, cart_image
from machine_doubles import ScriptedVdc, console_asm

from hilbridge.errors import HilbridgeError
from hilbridge.machine.bus import BusAccess
from hilbridge.machine.cartridge import load_cartridge
from hilbridge.machine.console import Console


def test_external_ram_is_written_and_read_with_p14_and_p16_low():
    console = console_asm(
        """
        org 400h
        mov a,#0ACh
        outl p1,a
        mov r0,#10h
        mov a,#5Ah
        movx @r0,a
        clr a
        movx a,@r0
        mov r2,a
done:   jmp done
        """
    )
    console.run_cycles(300)
    assert console.ram[0x10] == 0x5A and console.cpu.ram[2] == 0x5A
    assert console.vdc.writes == []  # P13 = 1: the VDC is not selected


def test_copy_mode_reads_ram_and_writes_the_vdc():
    vdc = ScriptedVdc(t1_period=0)
    vdc.registers[0x20] = 0x33
    console = console_asm(
        """
        org 400h
        mov a,#0ACh
        outl p1,a
        mov r0,#20h
        mov a,#77h
        movx @r0,a
        mov a,#0E4h
        outl p1,a
        movx a,@r0
        mov r2,a
        mov a,#11h
        movx @r0,a
done:   jmp done
        """,
        vdc=vdc,
    )
    console.run_cycles(300)
    assert console.cpu.ram[2] == 0x77  # from RAM: the VDC does not drive reads while P16 = 1
    assert vdc.writes[-1][1:] == (0x20, 0x11)  # the write went to the VDC...
    assert console.ram[0x20] == 0x77  # ...and not to RAM (P16 = 1 blocks /WR outside)


def test_ram_ignores_addresses_with_a7_set():
    console = console_asm(
        """
        org 400h
        mov a,#0ACh
        outl p1,a
        mov r0,#90h
        mov a,#5Ah
        movx @r0,a
        movx a,@r0
        mov r2,a
done:   jmp done
        """
    )
    console.run_cycles(300)
    assert console.cpu.ram[2] == 0xFF
    assert 0x5A not in console.ram


@pytest.mark.parametrize(
    ("key", "row", "expected"), [("A", 4, 0x0F | 7 << 5), ("ENTER", 5, 0x0F), ("P", 1, 0x0F)]
)
def test_keyboard_row_goes_through_the_priority_encoder(key, row, expected):
    console = console_asm(
        f"""
        org 400h
        mov a,#0FBh
        outl p1,a
        mov a,#{0xF8 | row:03X}h
        outl p2,a
        in a,p2
done:   jmp done
        """
    )
    console.set_key(key, True)
    console.run_cycles(300)
    assert console.cpu.a == (expected & 0xF0) | (0xF8 | row) & 0x0F


def test_no_key_or_scan_disabled_reads_ones():
    console = console_asm(
        """
        org 400h
        mov a,#0F4h
        outl p2,a
        in a,p2
done:   jmp done
        """
    )
    console.set_key("A", True)
    console.run_cycles(300)
    assert console.cpu.a == 0xF4  # P12 = 1 after reset: the encoder is disabled


def test_joysticks_read_through_ins_a_bus_active_low():
    console = console_asm(
        """
        org 400h
        anl p1,#0FBh
        anl p2,#0F8h
        ins a,bus
        mov r2,a
        orl p2,#01h
        ins a,bus
        mov r3,a
        orl p2,#02h
        ins a,bus
        mov r4,a
done:   jmp done
        """
    )
    console.set_joystick(0, up=True, fire=True)
    console.set_joystick(1, left=True)
    console.run_cycles(300)
    assert console.cpu.ram[2:5] == bytes([0xEE, 0xF7, 0xFF])


def test_lum_changes_reach_the_vdc():
    console = console_asm(
        """
        org 400h
        anl p1,#7Fh
        orl p1,#80h
done:   jmp done
        """
    )
    console.run_cycles(300)
    assert [bright for bright, _ in console.vdc.lum] == [True, False]


def test_bank_switch_takes_effect_on_the_next_fetch():
    image = bytearray(4096)
    image[0x800:0x803] = bytes([0x99, 0xFC, 0x00])  # last bank at 400h: ANL P1,#0FCh ; NOP
    image[0x002] = 0x27  # bank 0 at 402h: CLR A
    console = Console(load_cartridge(bytes(image), "o2_rom"), vdc=ScriptedVdc(t1_period=0))
    console.cpu.a = 0x55
    for _ in range(3):
        console.step()
    assert console.cpu.a == 0


def test_run_frames_stops_at_frame_ends_and_counts_them():
    console = console_asm("        org 400h\nloop:   jmp loop\n")
    console.run_frames(3)
    assert console.frame == 3
    assert console.region.frame_end_cycle(2) <= console.cycle < console.region.frame_end_cycle(2) + 2


def test_unknown_inputs_are_user_errors():
    console = console_asm("        org 400h\n")
    with pytest.raises(HilbridgeError):
        console.set_key("F13", True)
    with pytest.raises(HilbridgeError):
        console.set_joystick(2, up=True)
    with pytest.raises(HilbridgeError):
        console.set_joystick(0, jump=True)


def test_fetch_listener_sees_every_cartridge_byte_the_cpu_reads():
    console = console_asm(
        """
        org 400h
        mov a,#10h
        movp a,@a
        jmp 500h
        org 410h
        db 99h
        org 500h
        nop
        """
    )
    fetches = []
    console.add_bus_listener(fetches.append, fetches=True)
    for _ in range(5):
        console.step()
    seen = [(access.kind, access.address, access.value) for access in fetches]
    assert seen == [
        ("F", 0x400, 0x23),
        ("F", 0x401, 0x10),
        ("F", 0x402, 0xA3),
        ("F", 0x410, 0x99),  # the MOVP table read
        ("F", 0x403, 0xA4),
        ("F", 0x404, 0x00),
        ("F", 0x500, 0x00),
    ]
    assert fetches[0].cycle == 2  # stamped at the start of the instruction, after the BIOS JMP


def test_console_takes_a_cartridge_as_bytes_or_a_path(tmp_path):
    path = tmp_path / "cart.bin"
    path.write_bytes(bytes(4096))
    assert Console(str(path), vdc=ScriptedVdc(t1_period=0)).cart.mapper == "o2_rom"
    assert len(Console(bytes(2048), vdc=ScriptedVdc(t1_period=0)).cart.image) == 2048
    with pytest.raises(HilbridgeError, match="empty"):
        Console(b"", vdc=ScriptedVdc(t1_period=0))


@pytest.mark.parametrize("name", ["vdc_regs", "xram", "bank_4in1"])
def test_a_bus_recorder_is_told_what_a_bus_listener_is_told(name: str) -> None:
    """`add_bus_recorder` hands a recorder each access's fields instead of a `BusAccess`: alone (the
    console calls it directly), beside a listener (`_notify`), and after both are removed, the
    accesses and the machine must be those of a listener's console. The carts write the VDC, the
    external RAM and a bank latch, and poll the VDC in skipped loops (`repeat_reads`)."""
    consoles = [Console(load_cartridge(cart_image(name), SPECS[name].slot)) for _ in range(3)]
    told: list[list[BusAccess]] = [[], [], []]
    consoles[0].add_bus_listener(told[0].append)
    consoles[1].add_bus_recorder(lambda *fields: told[1].append(BusAccess(*fields)))
    consoles[2].add_bus_listener(told[2].append)
    consoles[2].add_bus_recorder(lambda *fields: told[2].append(BusAccess(*fields)))
    for console in consoles:
        console.run_frames(6)
    assert len(told[0]) > 1000 and {access.kind for access in told[0]} >= {"R", "W"}
    assert told[1] == told[0]
    assert told[2][::2] == told[2][1::2] == told[0]  # the listener first, then the recorder
    for console, accesses in zip(consoles, told, strict=True):
        console.remove_bus_listener(accesses.append)
        for recorder in list(console._recorders):
            console.remove_bus_recorder(recorder)
        assert console._tell is None
        console.run_frames(2)
    assert consoles[0].state() == consoles[1].state() == consoles[2].state()
