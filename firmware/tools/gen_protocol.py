#!/usr/bin/env python3
"""Generate the firmware's protocol header and tables from the host's data files (stdlib only).

Reads hilbridge/link/messages.tsv, hilbridge/link/codes.tsv, the capture record word's bit fields
hilbridge/link/capture_record.tsv, the mapper registry
hilbridge/machine/mappers.tsv (through its loader, hilbridge/machine/mappers.py, the one parser of it;
it brings the link's mapper codes) and the constants of hilbridge/link/protocol.py and
hilbridge/machine/cartridge.py, so the firmware and the host cannot drift apart: the files written
are build products, never committed.

    gen_protocol.py ROOT OUTDIR   writes OUTDIR/protocol_gen.h, protocol_gen.c, protocol_codec_gen.c
"""

from __future__ import annotations

import csv
import re
import sys
from dataclasses import dataclass
from pathlib import Path

FORMATS = {"B": ("uint8_t", 1), "H": ("uint16_t", 2), "I": ("uint32_t", 4)}
TAILS = ("*", "s")
KINDS = ("command", "event", "reply")
CAPTURE_WORD_FIELDS = ("tag", "delta", "address", "value", "high")  # capture_record.tsv's rows
# The mapper rules firmware/src/cart/cart.c implements, in the order of its enums.
RULES = {
    "bank_select": ("p1_low_bits", "latch_p10", "none"),
    "high_window": ("mirror_800", "mirror_400", "linear"),
    "wrap": ("mask", "modulo"),
    "data_area": ("none", "p11_p2_page"),
}
MAX_SIZES = 4
MAX_LAYOUT_COPIES = 4  # copies of one image in a layout (mappers.tsv `layout` column)


class GenerateError(Exception):
    """A data file does not say what the generator needs; the message names the file."""


@dataclass(frozen=True)
class Field:
    name: str
    format: str

    @property
    def is_tail(self) -> bool:
        return self.format in TAILS


@dataclass(frozen=True)
class Message:
    name: str
    id: int
    kind: str
    request: tuple[Field, ...]
    response: tuple[Field, ...]
    request_text: str
    response_text: str


def read_tsv(path: Path) -> list[dict[str, str]]:
    lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line and line[0] != "#"]
    return list(csv.DictReader(lines, delimiter="\t"))


def parse_fields(text: str, where: str) -> tuple[Field, ...]:
    fields = []
    for item in text.split():
        name, _, fmt = item.partition(":")
        if fmt not in FORMATS and fmt not in TAILS:
            raise GenerateError(f"{where}: bad field format {item!r}")
        fields.append(Field(name, fmt))
    if any(f.is_tail for f in fields[:-1]):
        raise GenerateError(f"{where}: a bytes/string field must come last")
    return tuple(fields)


def load_messages(path: Path) -> list[Message]:
    messages = []
    for row in read_tsv(path):
        where = f"{path}: {row['name']}"
        if row["kind"] not in KINDS:
            raise GenerateError(f"{where}: unknown kind {row['kind']!r}")
        messages.append(
            Message(
                name=row["name"],
                id=int(row["id"], 16),
                kind=row["kind"],
                request=parse_fields(row["request"] or "", where),
                response=parse_fields(row["response"] or "", where),
                request_text=" ".join((row["request"] or "").split()),
                response_text=" ".join((row["response"] or "").split()),
            )
        )
    return messages


def python_constant(path: Path, name: str) -> str:
    """The right-hand side of `NAME = value` at the start of a line of a Python source file."""
    match = re.search(rf"^{name}\s*=\s*(.+?)\s*(#.*)?$", path.read_text(encoding="utf-8"), re.MULTILINE)
    if match is None:
        raise GenerateError(f"{path}: no {name} = ... line")
    return match.group(1)


def python_int(path: Path, name: str) -> int:
    return int(python_constant(path, name), 0)


def c_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def ident(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9]", "_", name)


class Layout:
    """C names and offsets for one direction of one message."""

    def __init__(self, message: Message, direction: str):
        self.message = message
        self.direction = direction
        self.fields = message.request if direction == "request" else message.response
        self.fixed = [f for f in self.fields if not f.is_tail]
        self.tail = self.fields[-1] if self.fields and self.fields[-1].is_tail else None
        self.offsets = {}
        offset = 0
        for f in self.fixed:
            self.offsets[f.name] = offset
            offset += FORMATS[f.format][1]
        self.size = offset
        self.type = f"hb_{message.name.lower()}_{direction}"
        self.macro = f"HB_{message.name}_{direction.upper()}"

    def struct(self) -> str:
        members = [f"    {FORMATS[f.format][0]} {f.name};" for f in self.fixed]
        if self.tail is not None:
            pointer = "const uint8_t *" if self.tail.format == "*" else "const char *"
            members.append(f"    {pointer}{self.tail.name};")
            members.append(f"    size_t {self.tail.name}_length;")
        if not members:
            members.append("    uint8_t unused; /* no fields */")
        return f"typedef struct {self.type} {{\n" + "\n".join(members) + f"\n}} {self.type};\n"

    def macros(self) -> list[str]:
        lines = [f"#define {self.macro}_FIXED_SIZE {self.size}u"]
        lines.append(f"#define {self.macro}_HAS_TAIL {int(self.tail is not None)}")
        lines += [f"#define {self.macro}_{f.name.upper()}_OFFSET {self.offsets[f.name]}u" for f in self.fixed]
        if self.tail is not None:
            lines.append(f"#define {self.macro}_{self.tail.name.upper()}_OFFSET {self.size}u")
        return lines

    def prototypes(self) -> list[str]:
        return [
            f"void hb_pack_{self.type[3:]}(hb_reply *out, const {self.type} *values);",
            f"int hb_unpack_{self.type[3:]}(const uint8_t *payload, size_t length, {self.type} *values);",
        ]

    def pack(self) -> str:
        body = [f"void hb_pack_{self.type[3:]}(hb_reply *out, const {self.type} *values)", "{"]
        if self.fixed or self.tail is not None:
            body.append("    uint8_t *p = out->payload;")
        if not self.fixed and self.tail is None:
            body.append("    (void)values;")
        if self.size:
            body.append(f"    if (out->room < {self.size}u) {{ out->length = 0; return; }}")
        for f in self.fixed:
            body.append(f"    put_{f.format}(p + {self.offsets[f.name]}u, values->{f.name});")
        if self.tail is None:
            body.append(f"    out->length = {self.size}u;")
        else:
            name = self.tail.name
            body += [
                f"    size_t tail = values->{name}_length;",
                f"    if (tail > out->room - {self.size}u) tail = out->room - {self.size}u;",
                f"    if (tail) __builtin_memmove(p + {self.size}u, values->{name}, tail);",
                f"    out->length = {self.size}u + tail;",
            ]
        body.append("    out->error = 0;")
        body.append("}")
        return "\n".join(body) + "\n"

    def unpack(self) -> str:
        body = [
            f"int hb_unpack_{self.type[3:]}(const uint8_t *payload, size_t length, {self.type} *values)",
            "{",
        ]
        if not self.fixed and self.tail is None:
            body.append("    (void)payload;")
        body.append("    __builtin_memset(values, 0, sizeof *values);")
        if self.size:
            body.append(f"    if (length < {self.size}u) return -1;")
        if self.tail is None:
            body.append(f"    if (length > {self.size}u) return 1;")
        for f in self.fixed:
            body.append(
                f"    values->{f.name} = ({FORMATS[f.format][0]})"
                f"get_{f.format}(payload + {self.offsets[f.name]}u);"
            )
        if self.tail is not None:
            cast = "" if self.tail.format == "*" else "(const char *)"
            body.append(f"    values->{self.tail.name} = {cast}(payload + {self.size}u);")
            body.append(f"    values->{self.tail.name}_length = length - {self.size}u;")
        body.append("    return 0;")
        body.append("}")
        return "\n".join(body) + "\n"


def header(root: Path, messages: list[Message], codes: list[dict[str, str]], mappers: list[dict]) -> str:
    protocol_py = root / "hilbridge/link/protocol.py"
    cartridge_py = root / "hilbridge/machine/cartridge.py"
    word_path = root / "hilbridge/link/capture_record.tsv"
    word = {row["field"]: row for row in read_tsv(word_path)}
    if tuple(word) != CAPTURE_WORD_FIELDS:
        raise GenerateError(f"{word_path}: the fields are not {', '.join(CAPTURE_WORD_FIELDS)}")
    version = python_constant(root / "hilbridge/__init__.py", "__version__").strip("\"'")
    major, minor, patch = (int(part) for part in re.findall(r"\d+", version)[:3])
    out = [
        "/* Generated by firmware/tools/gen_protocol.py from hilbridge/link/messages.tsv, codes.tsv and",
        " * hilbridge/machine/mappers.tsv. Do not edit: edit the tables. */",
        "#ifndef HILBRIDGE_PROTOCOL_GEN_H",
        "#define HILBRIDGE_PROTOCOL_GEN_H",
        "",
        "#include <stddef.h>",
        "#include <stdint.h>",
        "",
        f"#define HB_PROTOCOL_VERSION {python_int(protocol_py, 'PROTOCOL_VERSION')}u",
        f'#define HB_PROTOCOL_VERSION_TEXT "{python_int(protocol_py, "PROTOCOL_VERSION")}"',
        f"#define HB_PROTOCOL_MAX_PAYLOAD {python_int(protocol_py, 'MAX_PAYLOAD')}u",
        f"#define HB_REPLY_BIT 0x{python_int(protocol_py, 'REPLY_BIT'):02X}u",
        f"#define HB_HEADER_SIZE {python_int(protocol_py, 'HEADER_SIZE')}u",
        f"#define HB_CRC_SIZE {python_int(protocol_py, 'CRC_SIZE')}u",
        f"#define HB_CRC_RESIDUE 0x{python_int(protocol_py, 'CRC_RESIDUE'):08X}u",
        f"#define HB_PACKAGE_VERSION {c_string(version)}",
        f"#define HB_PACKAGE_VERSION_MAJOR {major}u",
        f"#define HB_PACKAGE_VERSION_MINOR {minor}u",
        f"#define HB_PACKAGE_VERSION_PATCH {patch}u",
        "",
        "enum hb_message_kind { HB_KIND_COMMAND, HB_KIND_EVENT, HB_KIND_REPLY };",
        "",
        "/* Message ids */",
    ]
    out += [f"#define HB_MSG_{m.name} 0x{m.id:02X}u" for m in messages]
    out.append(f"#define HB_MESSAGE_COUNT {len(messages)}u")
    out.append("")
    tables = {}
    for row in codes:
        tables.setdefault(row["table"], []).append(row)
    prefixes = {"error": "HB_ERROR_", "capability": "HB_CAPABILITY_", "strobe": "HB_STROBE_"}
    prefixes.update({"mapper": "HB_MAPPER_", "capture": "HB_CAPTURE_"})
    for table, rows in tables.items():
        prefix = prefixes.get(table, f"HB_{table.upper()}_")
        suffix = "_BIT" if table == "capability" else ""
        out.append(f"/* {table} codes */")
        out += [f"#define {prefix}{ident(r['name']).upper()}{suffix} {int(r['value'])}u" for r in rows]
        out.append("")
    capability_mask = sum(1 << int(r["value"]) for r in tables.get("capability", []))
    out.append(f"#define HB_CAPABILITIES_ALL 0x{capability_mask:08X}u")
    out.append(f"#define HB_CODE_COUNT {len(codes)}u")
    out.append("")
    out.append("/* One capture record word in a CAPTURE_CHUNK (u32 little-endian; capture_record.tsv) */")
    out.append("#define HB_CAPTURE_WORD_SIZE 4u")
    for name in CAPTURE_WORD_FIELDS:
        lsb, bits = int(word[name]["lsb"]), int(word[name]["bits"])
        if lsb + bits > 32:
            raise GenerateError(f"{word_path}: {name} does not fit the 32-bit word")
        out.append(f"#define HB_CAPTURE_WORD_{name.upper()}_LSB {lsb}u")
        out.append(f"#define HB_CAPTURE_WORD_{name.upper()}_BITS {bits}u")
    out.append("")
    out.append("/* The cartridge connector (cartridge.py) */")
    for name in ("CART_P1_MASK", "CART_P2_MASK", "PROGRAM_START", "PROGRAM_END", "NOT_DRIVEN"):
        out.append(f"#define HB_{name} 0x{python_int(cartridge_py, name):X}u")
    out.append("")
    out += [
        "/* A reply or event payload being built: `room` bytes at `payload`. */",
        "typedef struct hb_reply {",
        "    uint8_t *payload;",
        "    size_t room;",
        "    size_t length;",
        "    uint8_t error; /* 0, or the HB_ERROR_* code of an ERROR reply */",
        "} hb_reply;",
        "",
        "/* Fill `out` with an ERROR reply: code and detail text. */",
        "void hb_reply_error(hb_reply *out, uint8_t code, const char *detail);",
        "",
    ]
    for m in messages:
        for direction in ("request", "response"):
            layout = Layout(m, direction)
            out.append(layout.struct())
            out += layout.macros()
            out += layout.prototypes()
            out.append("")
    out += [
        "struct adapter_core;",
        "/* Handlers, one per command, implemented by the core: fill `reply` (pack or hb_reply_error). */",
    ]
    out += [
        f"void hb_on_{m.name.lower()}(struct adapter_core *core, const hb_{m.name.lower()}_request *request, "
        "hb_reply *reply);"
        for m in messages
        if m.kind == "command"
    ]
    out += [
        "",
        "/* Unpack a request frame's payload and call its handler; UNKNOWN_MESSAGE or BAD_REQUEST as the",
        " * Python side (hilbridge.link.protocol.parse_host_frame) refuses it. */",
        "void hb_dispatch(struct adapter_core *core, uint8_t type, const uint8_t *payload, size_t length,",
        "                 hb_reply *reply);",
        "",
        "/* The tables themselves, for tests that compare them with the Python side. */",
        "typedef struct hb_message_info {",
        "    const char *name;",
        "    uint8_t id;",
        "    uint8_t kind;",
        '    const char *request;  /* fields as in messages.tsv, e.g. "p1:B p2:B" */',
        "    const char *response;",
        "} hb_message_info;",
        "extern const hb_message_info HB_MESSAGE_TABLE[HB_MESSAGE_COUNT];",
        "",
        "typedef struct hb_code_info {",
        "    const char *table;",
        "    const char *name;",
        "    uint32_t value;",
        "} hb_code_info;",
        "extern const hb_code_info HB_CODE_TABLE[HB_CODE_COUNT];",
        "",
    ]
    out += mapper_declarations(mappers)
    out.append("#endif")
    return "\n".join(out) + "\n"


def enum(name: str, values: tuple[str, ...]) -> str:
    members = ", ".join(f"HB_{name.upper()}_{v.upper()}" for v in values)
    return f"enum hb_{name} {{ {members} }};"


def mapper_declarations(mappers: list[dict]) -> list[str]:
    return [
        "/* Cartridge mapper types (mappers.tsv); protocol_id 0 = not uploadable over the link. */",
        *(enum(column, values) for column, values in RULES.items()),
        f"#define HB_MAPPER_MAX_SIZES {MAX_SIZES}u",
        f"#define HB_LAYOUT_MAX_COPIES {MAX_LAYOUT_COPIES}u",
        "typedef struct hb_mapper_type {",
        "    const char *name;",
        "    uint8_t protocol_id;",
        "    uint8_t size_count;",
        "    uint32_t sizes[HB_MAPPER_MAX_SIZES];",
        "    uint32_t bank_size;",
        "    uint8_t bank_select;  /* enum hb_bank_select */",
        "    uint8_t high_window;  /* enum hb_high_window */",
        "    uint32_t program_offset;",
        "    uint8_t wrap;         /* enum hb_wrap */",
        "    uint8_t data_area;    /* enum hb_data_area */",
        "    /* layout: an image of layout_image_size bytes sits at each of the copy offsets (later copies",
        "       on top) of a zero-filled bank space of layout_space_size bytes; 0 = no layout. */",
        "    uint32_t layout_image_size;",
        "    uint32_t layout_space_size;",
        "    uint8_t layout_copy_count;",
        "    uint32_t layout_copies[HB_LAYOUT_MAX_COPIES];",
        "} hb_mapper_type;",
        f"#define HB_MAPPER_TYPE_COUNT {len(mappers)}u",
        "extern const hb_mapper_type HB_MAPPER_TYPES[HB_MAPPER_TYPE_COUNT];",
        f"#define HB_MAX_IMAGE_SIZE {max(s for m in mappers for s in m['sizes'])}u",
        f'#define HB_MAX_IMAGE_SIZE_TEXT "{max(s for m in mappers for s in m["sizes"])}"',
        "",
    ]


def load_registry(root: Path):
    """The mapper registry of the tree at `root`, read by its own loader (hilbridge/machine/mappers.py)."""
    sys.path.insert(0, str(root))
    try:
        from hilbridge.errors import HilbridgeError

        try:
            from hilbridge.machine.mappers import DEFAULT_REGISTRY
        except HilbridgeError as error:
            raise GenerateError(str(error)) from None
    finally:
        sys.path.remove(str(root))
    return DEFAULT_REGISTRY


def load_mappers(root: Path) -> list[dict]:
    """The emulated mappers as the C table holds them; the firmware implements the rules in RULES.

    A mapper whose rules cart.c lacks stays out of the table, and may not have a protocol id (the
    adapter would accept an upload it cannot serve).
    """
    registry = load_registry(root)
    mappers = []
    for m in registry.mappers.values():
        where = f"{registry.source}: {m.name}"
        lacking = (
            [value for column, value in m.rules() if value not in RULES[column]] if m.emulated else ["-"]
        )
        if lacking:
            if m.protocol_id is not None:
                raise GenerateError(
                    f"{where}: protocol id {m.protocol_id}, but cart.c lacks {', '.join(lacking)}"
                )
            continue
        if len(m.sizes) > MAX_SIZES:
            raise GenerateError(f"{where}: more than {MAX_SIZES} sizes")
        if len(m.layouts) > 1:
            raise GenerateError(f"{where}: the firmware takes one layout per mapper")
        layout = (0, 0, [])
        for size, (offsets, space) in m.layouts.items():
            if not 0 < len(offsets) <= MAX_LAYOUT_COPIES:
                raise GenerateError(f"{where}: layout of 1-{MAX_LAYOUT_COPIES} copies")
            if any(offset + size > space for offset in offsets) or space & (space - 1):
                raise GenerateError(f"{where}: layout copies must fit a power-of-two space")
            layout = (size, space, list(offsets))
        mappers.append(
            {
                "mapper": m.name,
                "protocol_id": m.protocol_id or 0,
                "sizes": list(m.sizes),
                "bank_size": m.bank_size,
                "bank_select": m.bank_select,
                "high_window": m.high_window,
                "program_offset": m.program_offset,
                "wrap": m.wrap,
                "data_area": m.data_area,
                "layout": layout,
                "note": m.note,
            }
        )
    return mappers


def mapper_codes(mappers: list[dict]) -> list[dict[str, str]]:
    """The link's `mapper` code table: the registry's protocol ids (as hilbridge.link.protocol.CODES)."""
    return [
        {"table": "mapper", "name": m["mapper"], "value": str(m["protocol_id"]), "meaning": m["note"]}
        for m in mappers
        if m["protocol_id"]
    ]


SOURCE_HELPERS = """\
static void put_B(uint8_t *p, uint32_t v) { p[0] = (uint8_t)v; }
static void put_H(uint8_t *p, uint32_t v) { p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); }
static void put_I(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); p[2] = (uint8_t)(v >> 16); p[3] = (uint8_t)(v >> 24);
}
static uint32_t get_B(const uint8_t *p) { return p[0]; }
static uint32_t get_H(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8; }
static uint32_t get_I(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Detail text helpers (no stdio on the firmware). */
static size_t text_put(char *out, size_t at, size_t room, const char *text)
{
    while (*text && at + 1 < room) out[at++] = *text++;
    out[at] = 0;
    return at;
}

static size_t text_decimal(char *out, size_t at, size_t room, uint32_t value)
{
    char digits[11];
    size_t n = 0;
    do { digits[n++] = (char)('0' + value % 10u); value /= 10u; } while (value);
    while (n && at + 1 < room) out[at++] = digits[--n];
    out[at] = 0;
    return at;
}

void hb_reply_error(hb_reply *out, uint8_t code, const char *detail)
{
    hb_error_response values;
    size_t length = 0;
    while (detail[length] && length < 200u) length++;
    values.code = code;
    values.detail = detail;
    values.detail_length = length;
    hb_pack_error_response(out, &values);
    out->error = code;
}

static void refuse_length(hb_reply *reply, const char *name, size_t length, int sign)
{
    char text[80];
    size_t at = text_put(text, 0, sizeof text, name);
    at = text_put(text, at, sizeof text, ": payload of ");
    at = text_decimal(text, at, sizeof text, (uint32_t)length);
    text_put(text, at, sizeof text, sign < 0 ? " bytes is too short" : " bytes is too long");
    hb_reply_error(reply, HB_ERROR_BAD_REQUEST, text);
}

static void refuse_type(hb_reply *reply, uint8_t type)
{
    static const char hex[] = "0123456789ABCDEF";
    char text[] = "unknown request type 0x??";
    text[sizeof text - 3] = hex[type >> 4];
    text[sizeof text - 2] = hex[type & 15u];
    hb_reply_error(reply, HB_ERROR_UNKNOWN_MESSAGE, text);
}
"""


def source(messages: list[Message], codes: list[dict[str, str]], mappers: list[dict]) -> str:
    out = [
        "/* Generated by firmware/tools/gen_protocol.py. Do not edit. */",
        '#include "protocol_gen.h"',
        "",
        SOURCE_HELPERS,
    ]
    for m in messages:
        for direction in ("request", "response"):
            layout = Layout(m, direction)
            out.append(layout.pack())
            out.append(layout.unpack())
    out += [
        "void hb_dispatch(struct adapter_core *core, uint8_t type, const uint8_t *payload, size_t length,",
        "                 hb_reply *reply)",
        "{",
        "    int fit;",
        "    switch (type) {",
    ]
    for m in messages:
        if m.kind != "command":
            continue
        low = m.name.lower()
        out += [
            f"    case HB_MSG_{m.name}: {{",
            f"        hb_{low}_request request;",
            f"        fit = hb_unpack_{low}_request(payload, length, &request);",
            f"        if (fit) refuse_length(reply, {c_string(m.name)}, length, fit);",
            f"        else hb_on_{low}(core, &request, reply);",
            "        return;",
            "    }",
        ]
    out += ["    default:", "        refuse_type(reply, type);", "        return;", "    }", "}", ""]
    kinds = {"command": "HB_KIND_COMMAND", "event": "HB_KIND_EVENT", "reply": "HB_KIND_REPLY"}
    out.append("const hb_message_info HB_MESSAGE_TABLE[HB_MESSAGE_COUNT] = {")
    out += [
        f"    {{{c_string(m.name)}, 0x{m.id:02X}u, {kinds[m.kind]}, {c_string(m.request_text)}, "
        f"{c_string(m.response_text)}}},"
        for m in messages
    ]
    out += ["};", "", "const hb_code_info HB_CODE_TABLE[HB_CODE_COUNT] = {"]
    out += [f"    {{{c_string(r['table'])}, {c_string(r['name'])}, {int(r['value'])}u}}," for r in codes]
    out += ["};", "", "const hb_mapper_type HB_MAPPER_TYPES[HB_MAPPER_TYPE_COUNT] = {"]
    for m in mappers:
        sizes = ", ".join(f"{s}u" for s in m["sizes"])
        out.append(
            f"    {{{c_string(m['mapper'])}, {m['protocol_id']}u, {len(m['sizes'])}u, {{{sizes}}}, "
            f"{int(m['bank_size'])}u, HB_BANK_SELECT_{m['bank_select'].upper()}, "
            f"HB_HIGH_WINDOW_{m['high_window'].upper()}, {int(m['program_offset'])}u, "
            f"HB_WRAP_{m['wrap'].upper()}, HB_DATA_AREA_{m['data_area'].upper()}, "
            f"{m['layout'][0]}u, {m['layout'][1]}u, {len(m['layout'][2])}u, "
            f"{{{', '.join(f'{o}u' for o in m['layout'][2]) or '0u'}}}}},"
        )
    out += ["};", ""]
    return "\n".join(out)


def codec_source(messages: list[Message]) -> str:
    """Pack and unpack any message from an array of field values (tests only: not in the firmware)."""
    out = [
        "/* Generated by firmware/tools/gen_protocol.py. Do not edit. Test support only. */",
        '#include "protocol_codec_gen.h"',
        "",
    ]
    pack = [
        "int hb_codec_pack(uint8_t id, int response, const uint32_t *values, const uint8_t *tail,",
        "                  size_t tail_length, hb_reply *out)",
        "{",
        "    (void)values; (void)tail; (void)tail_length;",
        "    switch (id * 2 + (response ? 1 : 0)) {",
    ]
    unpack = [
        "int hb_codec_unpack(uint8_t id, int response, const uint8_t *payload, size_t length,",
        "                    uint32_t *values, const uint8_t **tail, size_t *tail_length)",
        "{",
        "    int fit;",
        "    *tail = 0; *tail_length = 0; (void)values;",
        "    switch (id * 2 + (response ? 1 : 0)) {",
    ]
    for m in messages:
        for index, direction in enumerate(("request", "response")):
            layout = Layout(m, direction)
            key = m.id * 2 + index
            pack.append(f"    case {key}: {{")
            pack.append(f"        {layout.type} v;")
            pack.append("        __builtin_memset(&v, 0, sizeof v);")
            for i, f in enumerate(layout.fixed):
                pack.append(f"        v.{f.name} = ({FORMATS[f.format][0]})values[{i}];")
            if layout.tail is not None:
                cast = "" if layout.tail.format == "*" else "(const char *)"
                pack.append(f"        v.{layout.tail.name} = {cast}tail;")
                pack.append(f"        v.{layout.tail.name}_length = tail_length;")
            pack.append(f"        hb_pack_{layout.type[3:]}(out, &v);")
            pack.append(f"        return {len(layout.fixed)};")
            pack.append("    }")
            unpack.append(f"    case {key}: {{")
            unpack.append(f"        {layout.type} v;")
            unpack.append(f"        fit = hb_unpack_{layout.type[3:]}(payload, length, &v);")
            unpack.append("        if (fit) return fit < 0 ? -1 : -2;")
            for i, f in enumerate(layout.fixed):
                unpack.append(f"        values[{i}] = v.{f.name};")
            if layout.tail is not None:
                unpack.append(f"        *tail = (const uint8_t *)v.{layout.tail.name};")
                unpack.append(f"        *tail_length = v.{layout.tail.name}_length;")
            unpack.append(f"        return {len(layout.fixed)};")
            unpack.append("    }")
    pack += ["    default:", "        return -3;", "    }", "}", ""]
    unpack += ["    default:", "        return -3;", "    }", "}", ""]
    return "\n".join(out + pack + unpack)


CODEC_HEADER = """\
/* Generated by firmware/tools/gen_protocol.py. Do not edit. Test support only. */
#ifndef HILBRIDGE_PROTOCOL_CODEC_GEN_H
#define HILBRIDGE_PROTOCOL_CODEC_GEN_H
#include "protocol_gen.h"
/* Pack message `id` (request, or response when `response`) from its fixed fields in order and its
 * tail; returns the number of fixed fields, -3 for an unknown id. */
int hb_codec_pack(uint8_t id, int response, const uint32_t *values, const uint8_t *tail,
                  size_t tail_length, hb_reply *out);
/* Unpack: the number of fixed fields, -1 too short, -2 too long, -3 unknown id. */
int hb_codec_unpack(uint8_t id, int response, const uint8_t *payload, size_t length, uint32_t *values,
                    const uint8_t **tail, size_t *tail_length);
#endif
"""


def write_if_changed(path: Path, text: str) -> None:
    """Keep the timestamp of an unchanged file so make does not rebuild what depends on it."""
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
        return 2
    root, outdir = Path(argv[1]), Path(argv[2])
    try:
        messages = load_messages(root / "hilbridge/link/messages.tsv")
        mappers = load_mappers(root)
        codes = read_tsv(root / "hilbridge/link/codes.tsv") + mapper_codes(mappers)
        files = {
            "protocol_gen.h": header(root, messages, codes, mappers),
            "protocol_gen.c": source(messages, codes, mappers),
            "protocol_codec_gen.h": CODEC_HEADER,
            "protocol_codec_gen.c": codec_source(messages),
        }
    except (GenerateError, OSError, KeyError, ValueError) as error:
        print(f"gen_protocol.py: {error}", file=sys.stderr)
        return 1
    outdir.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        write_if_changed(outdir / name, text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
