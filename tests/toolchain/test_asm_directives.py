"""The asl dialect: labels, data, addresses, symbols, conditionals, macros, sections, files.

Expected bytes are worked out by hand from the MCS-48 encodings and asl's documented behaviour;
the asl-specific cases (marked "asl:") were checked against asl 1.42 itself.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hilbridge.toolchain.assembler import AssemblyError, assemble, assemble_text


def image(text: str, **options) -> bytes:
    return assemble_text(text, "test.a48", **options).image


def test_labels_with_and_without_colon_and_forward_references():
    result = assemble_text(
        "\torg 400h\nstart:\tjmp later\nloop\tdjnz r2,loop\n  indented: nop\nlater\tjmp start\n"
    )
    assert result.origin == 0x400
    assert result.image == bytes([0x84, 0x05, 0xEA, 0x02, 0x00, 0x84, 0x00])
    assert result.symbols["START"] == 0x400
    assert result.symbols["INDENTED"] == 0x404


def test_symbols_are_case_insensitive_unless_asked():
    assert image("Value equ 12h\n\tmov a,#VALUE\n") == bytes([0x23, 0x12])
    with pytest.raises(AssemblyError, match="'VALUE' is not defined"):
        image("Value equ 12h\n\tmov a,#VALUE\n", case_sensitive=True)


def test_org_and_image_covers_lowest_to_highest_byte_with_fill():
    result = assemble_text("\torg 410h\n\tdb 1\n\torg 400h\n\tdb 2\n", fill=0xAA)
    assert result.origin == 0x400
    assert result.image == bytes([2]) + bytes([0xAA] * 15) + bytes([1])


def test_db_strings_numbers_and_dup():
    assert image("\tdb \"AB\",0,1+2,'C'\n") == b"AB\x00\x03C"
    assert image("\tdb 3 dup (7)\n") == b"\x07\x07\x07"
    assert image("\tbyt 1\n\tbyte 2\n\tfcb 3\n\tdefb 4\n") == b"\x01\x02\x03\x04"


def test_dw_is_little_endian_and_character_constants_pack():
    # asl: dw 'AB' is the number 4142h, stored low byte first; "CD" is two words.
    assert image("\tdw 1234h\n") == b"\x34\x12"
    assert image("\tdw 'AB'\n") == b"\x42\x41"
    assert image('\tdw "CD"\n') == b"C\x00D\x00"


def test_current_address_dollar_and_star():
    assert image("\torg 410h\n\tdw $, *+1\n") == bytes([0x10, 0x04, 0x11, 0x04])


def test_equ_cannot_change_but_set_can():
    assert image("x set 1\n\tdb x\nx set 2\n\tdb x\nx := 3\n\tdb x\n") == b"\x01\x02\x03"
    with pytest.raises(AssemblyError, match="already defined"):
        image("x equ 1\nx equ 2\n")
    with pytest.raises(AssemblyError, match="already defined"):
        image("a1 nop\na1 nop\n")


def test_ds_reserves_without_writing():
    result = assemble_text("\torg 0\n\tdb 1\n\tds 3\n\tdb 2\n", fill=0)
    assert result.image == b"\x01\x00\x00\x00\x02"


def test_align():
    assert assemble_text("\torg 401h\n\talign 4\nhere nop\n").symbols["HERE"] == 0x404


def test_phase_and_dephase_keep_load_address():
    result = assemble_text("\torg 400h\n\tphase 80h\nx\tjmp x\n\tdephase\ny\tnop\n")
    assert result.origin == 0x400
    assert result.image == bytes([0x04, 0x80, 0x00])
    assert result.symbols["X"] == 0x80
    assert result.symbols["Y"] == 0x402


def test_conditionals_with_elseif_and_nesting():
    source = """
v equ 2
    if v == 1
    db 1
    elseif v == 2
    if 0
    db 9
    else
    db 2
    endif
    else
    db 3
    endif
    ifdef v
    db 4
    endif
    ifndef nothing
    db 5
    endif
"""
    assert image(source) == b"\x02\x04\x05"


def test_if_on_a_forward_reference_settles():
    assert image("\tif later > 0\n\tdb 1\n\tendif\nlater equ 5\n") == b"\x01"


def test_macro_parameters_defaults_and_local_labels():
    source = """
twice macro reg,n=3
    mov reg,#n
again djnz reg,again
    endm
    org 0
    twice r2,5
    twice r3
"""
    assert image(source) == bytes([0xBA, 0x05, 0xEA, 0x02, 0xBB, 0x03, 0xEB, 0x06])


def test_macro_equ_is_global_and_arguments_are_upper_cased():
    # asl: EQU/LABEL inside a macro define global symbols; arguments outside quotes become upper case.
    source = """
named macro name
name_at label $
    db "name"
    endm
    org 10h
    named foo
    jmp foo_at
"""
    result = assemble_text(source)
    assert result.symbols["FOO_AT"] == 0x10
    assert result.image == b"FOO" + bytes([0x04, 0x10])


def test_bang_forces_the_instruction_over_a_macro():
    # KTAA's trick: a JMP macro that keeps the target in the current bank (no SEL MBx added).
    source = "jmp macro t\n\t!jmp t | 800h\n\tendm\n\torg 900h\n\tjmp 200h\n"
    assert image(source) == bytes([0x44, 0x00])


def test_exitm_leaves_the_macro():
    assert image("m macro\n\tdb 1\n\texitm\n\tdb 2\n\tendm\n\tm\n") == b"\x01"


def test_rept_irp_irpc():
    assert image("\trept 3\n\tnop\n\tendm\n") == b"\x00\x00\x00"
    assert image("\tirp v,1,2,3\n\tdb v*2\n\tendm\n") == b"\x02\x04\x06"
    assert image("\tirpc c,\"xy\"\n\tdb 'c'\n\tendm\n") == b"xy"
    assert image("\trept 2\nl1 nop\n\tjmp l1\n\tendm\n") == bytes([0x00, 0x04, 0x00, 0x00, 0x04, 0x03])


def test_while():
    assert image("n set 0\n\twhile n < 3\n\tdb n\nn set n+1\n\tendm\n") == b"\x00\x01\x02"


def test_sections_scope_symbols_and_public_exports():
    source = """
    org 0
    section one
    public shared
loop nop
    jmp loop
shared nop
    endsection one
    section two
loop nop
    jmp loop
    endsection two
    jmp shared
"""
    result = assemble_text(source)
    assert result.image == bytes([0x00, 0x04, 0x00, 0x00, 0x00, 0x04, 0x04, 0x04, 0x03])
    assert "LOOP" not in result.symbols
    assert result.symbols["SHARED"] == 3


def test_composed_dot_labels_and_temporary_dollar_labels():
    source = """
    org 0
first nop
.loop djnz r0,.loop
second nop
.loop djnz r1,.loop
$$x jmp $$x
    jmp first.loop
"""
    assert image(source) == bytes([0x00, 0xE8, 0x01, 0x00, 0xE9, 0x04, 0x04, 0x06, 0x04, 0x01])


def test_function_and_builtin_functions():
    source = 'sq function x,x*x\n\tdb sq(3), hi(1234h), lo(1234h), high(0abcdh), strlen("hello")\n'
    assert image(source) == bytes([9, 0x12, 0x34, 0xAB, 5])


def test_builtin_bitfuncs_include():
    assert image('\tinclude "bitfuncs.inc"\n\tdb mask(2,3), getbit(4,2)\n') == bytes([0x1C, 1])


def test_codepage_and_charset_translate_strings_and_character_constants():
    source = """
    codepage videopac
    charset 'A',10h
    charset '0','9',0
    db "A0", 'A'
    codepage standard
    db "A"
"""
    assert image(source) == bytes([0x10, 0x00, 0x10, 0x41])


def test_reg_alias():
    assert image("count reg r5\n\tmov count,#1\n\tdjnz count,$\n") == bytes([0xBD, 1, 0xED, 0x02])


def test_relaxed_switches_leading_zero_octal():
    # asl: without RELAXED, 017 is decimal; with RELAXED ON it is C octal.
    assert image("\tdb 017\n\trelaxed on\n\tdb 017\n") == bytes([17, 15])


def test_number_formats():
    assert image("\tdb 0FFh, 10110b, 17o, 17q, $1F, %101, @17, 0x10, 'a'\n") == bytes(
        [0xFF, 0x16, 0x0F, 0x0F, 0x1F, 0x05, 0x0F, 0x10, 0x61]
    )


def test_message_warning_and_error_directives():
    result = assemble_text('\tmessage "hello ", 1+1\n\twarning "careful"\n')
    assert "hello 2" in result.warnings
    assert any("warning: careful" in warning for warning in result.warnings)
    with pytest.raises(AssemblyError, match="stop here"):
        image('\terror "stop here"\n')


def test_end_stops_assembly():
    assert image("\tdb 1\n\tend\n\tdb 2\n") == b"\x01"


def test_auto_bank_select_like_asl_and_strict_mode():
    result = assemble_text("\torg 400h\n\tcall 900h\n")
    assert result.image == bytes([0xF5, 0x34, 0x00])
    assert any("SEL MB1" in warning for warning in result.warnings)
    with pytest.raises(AssemblyError, match="outside the current 2K bank"):
        assemble_text("\torg 400h\n\tcall 900h\n", auto_bank_select=False)


def test_conditional_jump_page_is_that_of_the_operand_byte():
    # At 4FFh the operand byte sits at 500h, so the target must be in page 500h.
    assert image("\torg 4ffh\n\tjz 510h\n") == bytes([0xC6, 0x10])
    with pytest.raises(AssemblyError, match="outside the current page 0x0400-0x04ff"):
        image("\torg 4f0h\n\tjz 510h\n")


def test_include_binclude_and_search_path(tmp_path: Path):
    (tmp_path / "inc").mkdir()
    (tmp_path / "inc" / "defs.h").write_text("value equ 42\n")
    (tmp_path / "blob.bin").write_bytes(bytes(range(8)))
    main = tmp_path / "main.a48"
    main.write_text('\tinclude "defs.h"\n\tdb value\n\tbinclude "blob.bin",2,3\n')
    result = assemble(main, include_dirs=[tmp_path / "inc"])
    assert result.image == bytes([42, 2, 3, 4])


def test_defines_from_the_caller():
    assert image("\tif debug\n\tdb 1\n\tendif\n", defines={"DEBUG": 1}) == b"\x01"


def test_listing_has_address_bytes_and_source():
    listing = assemble_text("\torg 400h\nstart\tmov a,#12h\n").listing
    assert "0400  23 12" in listing
    assert "start\tmov a,#12h" in listing


def test_nameless_temporary_labels():
    source = """
    org 0
-   nop
-   djnz r2,-
    jnz --
    jz +
    jc ++
+   nop
/   nop
+   jmp -
"""
    # '-' and '/' are found backwards (newest first), '+' and '/' forwards (nearest first).
    assert image(source) == bytes(
        [0x00, 0xEA, 0x01, 0x96, 0x00, 0xC6, 0x09, 0xF6, 0x0A, 0x00, 0x00, 0x04, 0x0A]
    )


def test_labels_spelled_like_registers_are_jump_targets():
    # asl: a JMP/CALL/Jcc operand is always an expression, so labels named f0, a or t work.
    assert image("\torg 0\n\tcall f0\nf0\tret\n\tjz t\nt\tnop\n") == bytes(
        [0x14, 0x02, 0x83, 0xC6, 0x05, 0x00]
    )


def test_intel_binary_zero_and_c_prefixes():
    assert image("\tdb 0b, 01b, 0x1b, 1bh\n") == bytes([0, 1, 0x1B, 0x1B])


def test_assemble_accepts_text_directly():
    assert assemble("\torg 10h\n\tjmp $\n").image == bytes([0x04, 0x10])


def test_runaway_repetition_is_stopped_with_an_error(monkeypatch):
    monkeypatch.setattr("hilbridge.toolchain.assembler.MAX_LINES_PER_PASS", 20_000)
    with pytest.raises(AssemblyError, match="endless REPT"):
        image("\trept 100000\n\trept 100\n\tnop\n\tendm\n\tendm\n")


def test_question_mark_data_reserves_space():
    result = assemble_text("\torg 0\n\tdb 1\n\tdb ?,?\n\tdw ?\nafter\tdb 2\n", fill=0xEE)
    assert result.symbols["AFTER"] == 5
    assert result.image == bytes([1, 0xEE, 0xEE, 0xEE, 0xEE, 2])


def test_backslash_escapes_as_asl():
    # asl: \h is ', \i is ", \x up to two hex digits, \0.. octal, \ddd decimal.
    assert image('\tdb "a\\nb\\\\c\\"d\\h\\i"\n') == b'a\nb\\c"d\'"'
    assert image('\tdb "\\x41\\65\\0101\\t"\n') == b"AAA\t"
    with pytest.raises(AssemblyError, match="larger than 255"):
        image('\tdb "\\999"\n')


def test_predefined_symbols():
    assert image("\tdb true, false, momcpu >> 8, momline\n\tif mompass > 0\n\tdb 1\n\tendif\n") == bytes(
        [1, 0, 0x80, 1, 1]
    )


def test_macro_keyword_arguments_defaults_and_extra_arguments():
    # asl: name=value binds by name; a parameter may be the mnemonic; extra arguments are allowed.
    source = """
ypos0 equ 21h
pc macro char, color, dir, count, ypos=ypos0
  mov r4,#ypos
  mov r5,#char
  mov r6,#color
  rept count
  dir r5
  endm
  endm
  org 0
  pc char=12, color=7, dir=inc, count=3
  pc char=20h, color=1, dir=dec, count=1, ypos=29h
  pc 1,2,inc,0,5,6
"""
    expected = "bc21bd0cbe071d1d1dbc29bd20be01cdbc05bd01be02"  # checked against asl 1.42
    assert image(source).hex() == expected
    with pytest.raises(AssemblyError, match="has no parameter 'colour'"):
        image(source + "  pc colour=1\n")
    with pytest.raises(AssemblyError, match="positional argument cannot follow"):
        image(source + "  pc char=1, 2\n")
