"""Assemble firmware/pio/*.pio with adafruit_pioasm into one C header (opcodes, wrap, side-set,
public labels and the state-machine register values of firmware/pio/engines.tsv).

The programs name pins by their pins.tsv symbols (`wait 0 gpio PSEN_N`) and may `.define NAME
VALUE` constants, as the official pioasm allows; adafruit_pioasm knows neither, so this script
substitutes both before assembling. Tests use `assemble(name)` to run the same opcodes in pioemu.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gen_pins import load_pins, pin_numbers

FIRMWARE = Path(__file__).resolve().parent.parent
PIO_DIR = FIRMWARE / "pio"
ENGINES_TSV = PIO_DIR / "engines.tsv"
PROGRAMS = ("serve", "serve_movx", "serve_rally", "rally_latch", "sniff", "dump")
# programs loaded in place of another (never needed together): o2_rally has no MOVX data ROM, and
# dumping isolates the console that sniffing listens to
REPLACES = {"serve_rally": "serve", "rally_latch": "serve_movx", "dump": "sniff"}
ENGINE_FIELDS = (
    "program", "pio", "sm", "in_base", "out_base", "out_count", "jmp_pin", "sideset", "in_shift",
    "autopush", "push_threshold", "out_shift", "autopull", "pull_threshold", "join",
)  # fmt: skip
_DEFINE = re.compile(r"^\s*\.define\s+(?:PUBLIC\s+)?([A-Za-z_]\w*)\s+(\S+)")
_WORD = re.compile(r"\b[A-Za-z_]\w*\b")


@dataclass(frozen=True, slots=True)
class Engine:
    """One row of engines.tsv with pin symbols resolved to GPIO numbers."""

    program: str
    pio: int
    sm: int
    in_base: int
    out_base: int
    out_count: int
    jmp_pin: int
    sideset_base: int | None
    in_shift_right: bool
    autopush: bool
    push_threshold: int
    out_shift_right: bool
    autopull: bool
    pull_threshold: int
    join: str


@dataclass(frozen=True, slots=True)
class Assembled:
    name: str
    opcodes: list[int]
    wrap_target: int
    wrap: int
    sideset_count: int  # pins, without the enable bit
    sideset_opt: bool
    public_labels: dict[str, int]
    engine: Engine


def symbols() -> dict[str, int]:
    """Pin symbols (GPIO numbers) and their _ACTIVE/_IDLE levels, from pins.tsv."""
    table: dict[str, int] = {}
    for pin in load_pins():
        table[pin.symbol] = pin.gpio
        if pin.active != "-":
            active = 1 if pin.active == "high" else 0
            table[f"{pin.symbol}_ACTIVE"] = active
            table[f"{pin.symbol}_IDLE"] = 1 - active
    return table


def preprocess(text: str, known: dict[str, int]) -> str:
    """Drop comments, apply `.define`s and pin symbols: plain adafruit_pioasm input."""
    defines = dict(known)
    out: list[str] = []
    for line in text.splitlines():
        code = line.split(";")[0].rstrip()
        match = _DEFINE.match(code)
        if match:
            defines[match.group(1)] = int(match.group(2), 0)
            continue
        if code.strip().startswith("."):
            out.append(code)
            continue
        out.append(_WORD.sub(lambda word: str(defines.get(word.group(0), word.group(0))), code))
    return "\n".join(out) + "\n"


def load_engines() -> dict[str, Engine]:
    pins = pin_numbers(load_pins())

    def pin(value: str) -> int:
        return pins[value] if value in pins else int(value)

    engines: dict[str, Engine] = {}
    rows = [line for line in ENGINES_TSV.read_text(encoding="utf-8").splitlines() if line and line[0] != "#"]
    if tuple(rows[0].split("\t")) != ENGINE_FIELDS:
        raise ValueError(f"{ENGINES_TSV}: header must be {' '.join(ENGINE_FIELDS)}")
    for line in rows[1:]:
        row = dict(zip(ENGINE_FIELDS, line.split("\t"), strict=True))
        engines[row["program"]] = Engine(
            program=row["program"],
            pio=int(row["pio"]),
            sm=int(row["sm"]),
            in_base=pin(row["in_base"]),
            out_base=pin(row["out_base"]),
            out_count=int(row["out_count"]),
            jmp_pin=pin(row["jmp_pin"]),
            sideset_base=None if row["sideset"] == "-" else pin(row["sideset"]),
            in_shift_right=row["in_shift"] == "r",
            autopush=row["autopush"] == "1",
            push_threshold=int(row["push_threshold"]),
            out_shift_right=row["out_shift"] == "r",
            autopull=row["autopull"] == "1",
            pull_threshold=int(row["pull_threshold"]),
            join=row["join"],
        )
    return engines


def assemble(name: str) -> Assembled:
    import adafruit_pioasm

    source = preprocess((PIO_DIR / f"{name}.pio").read_text(encoding="utf-8"), symbols())
    program = adafruit_pioasm.Program(source)
    kwargs = program.pio_kwargs
    opcodes = list(program.assembled)
    return Assembled(
        name=name,
        opcodes=opcodes,
        wrap_target=kwargs.get("wrap_target", 0),
        wrap=kwargs.get("wrap", len(opcodes) - 1),
        sideset_count=kwargs.get("sideset_pin_count", 0),
        sideset_opt=bool(kwargs.get("sideset_enable", 0)),
        public_labels=dict(program.public_labels),
        engine=load_engines()[name],
    )


def _registers(program: Assembled, offset: int) -> dict[str, int]:
    """EXECCTRL, SHIFTCTRL and PINCTRL values (RP2040 datasheet 3.7), program loaded at `offset`."""
    engine = program.engine
    execctrl = (
        (engine.jmp_pin << 24) | ((offset + program.wrap) << 12) | ((offset + program.wrap_target) << 7)
    )
    if program.sideset_opt:
        execctrl |= 1 << 30  # SIDE_EN
    shiftctrl = (
        (engine.join == "rx") << 31
        | (engine.join == "tx") << 30
        | (engine.pull_threshold & 31) << 25
        | (engine.push_threshold & 31) << 20
        | engine.out_shift_right << 19
        | engine.in_shift_right << 18
        | engine.autopull << 17
        | engine.autopush << 16
    )
    sideset_bits = program.sideset_count + program.sideset_opt
    pinctrl = (
        sideset_bits << 29
        | (engine.out_count & 63) << 20
        | engine.in_base << 15
        | (engine.sideset_base or 0) << 10
        | engine.out_base
    )
    return {"EXECCTRL": execctrl, "SHIFTCTRL": shiftctrl, "PINCTRL": pinctrl}


def c_header(programs: list[Assembled]) -> str:
    lines = [
        "/* Generated by firmware/tools/gen_pio.py from firmware/pio and engines.tsv: do not edit. */",
        "#ifndef HILBRIDGE_PIO_GEN_H",
        "#define HILBRIDGE_PIO_GEN_H",
        "",
        "#include <stdint.h>",
        "",
    ]
    offsets: dict[int, int] = {}
    loaded: dict[str, int] = {}
    for program in programs:
        upper = program.name.upper()
        block = program.engine.pio
        if program.name in REPLACES:
            offset = loaded[REPLACES[program.name]]
        else:
            offset = offsets.get(block, 0)
            offsets[block] = offset + len(program.opcodes)
            loaded[program.name] = offset
        if offset + len(program.opcodes) > 32:
            raise ValueError(f"PIO{block} holds more than 32 instructions")
        opcodes = ", ".join(f"0x{opcode:04x}" for opcode in program.opcodes)
        lines += [
            f"static const uint16_t pio_{program.name}_program[] = {{{opcodes}}};",
            f"#define PIO_{upper}_LENGTH {len(program.opcodes)}u",
            f"#define PIO_{upper}_PIO {block}u",
            f"#define PIO_{upper}_SM {program.engine.sm}u",
            f"#define PIO_{upper}_OFFSET {offset}u /* load address in its PIO's instruction memory */",
        ]
        for label, address in sorted(program.public_labels.items()):
            lines.append(f"#define PIO_{upper}_LABEL_{label.upper()} {offset + address}u")
        for register, value in _registers(program, offset).items():
            lines.append(f"#define PIO_{upper}_{register} 0x{value:08x}u")
        lines.append("")
    lines += ["#endif", ""]
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: gen_pio.py OUT.h", file=sys.stderr)
        return 2
    try:
        header = c_header([assemble(name) for name in PROGRAMS])
    except ImportError:
        print("gen_pio.py: pip install --no-deps adafruit-circuitpython-pioasm", file=sys.stderr)
        return 2
    except (ValueError, RuntimeError, SyntaxError) as error:
        print(f"gen_pio.py: {error}", file=sys.stderr)
        return 2
    Path(argv[1]).write_text(header, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
