"""Save-state encoding: versioned, deterministic bytes (the same machine state gives the same bytes).

Layout: the magic ``HBSTATE\\0``, a big-endian u16 format version, the CRC32 of the payload, then
the payload: zlib-compressed JSON of plain data (dicts, lists, ints, bools, strings; `bytes` as
``{"$bytes": hex}``) with sorted keys. A wrong magic, version or checksum is a `HilbridgeError`.

A checksum only says the bytes are the ones written, not that a hilbridge wrote them: `check_fields`
checks every field against the shape of a fresh machine's own state and the values of
`state_fields.tsv` before anything is loaded, so a hand-made state is refused as a whole.
"""

from __future__ import annotations

import json
import re
import struct
import zlib
from importlib import resources
from typing import Any

from hilbridge.errors import HilbridgeError

MAGIC = b"HBSTATE\0"
VERSION = 2
"""Bumped whenever the meaning of saved fields changes. 2: the event counter is folded lazily (the
value and ``t1_history`` cover the T1 samples before ``timer_base`` only); a version-1 state, whose
counter was folded per instruction, would count its samples twice under that rule."""
OLDER_VERSIONS = {1: "its event counter was folded per instruction; loading it would count T1 twice"}
"""Why each older format cannot be loaded (none can be converted exactly)."""
_HEADER = struct.Struct(">8sHI")


def _to_plain(value: Any) -> Any:
    if isinstance(value, bytes | bytearray):
        return {"$bytes": bytes(value).hex()}
    if isinstance(value, dict):
        return {str(key): _to_plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_to_plain(item) for item in value]
    if isinstance(value, bool | int | str | float) or value is None:
        return value
    if hasattr(value, "tolist"):  # numpy arrays from the video side
        return {"$array": _to_plain(value.tolist())}
    raise TypeError(f"cannot save a {type(value).__name__} in a state")


def _from_plain(value: Any) -> Any:
    if isinstance(value, dict):
        if set(value) == {"$bytes"}:
            return bytes.fromhex(value["$bytes"])
        if set(value) == {"$array"}:
            return _from_plain(value["$array"])
        return {key: _from_plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_from_plain(item) for item in value]
    return value


def encode_state(fields: dict[str, Any]) -> bytes:
    text = json.dumps(_to_plain(fields), sort_keys=True, separators=(",", ":"))
    payload = zlib.compress(text.encode("utf-8"), 6)
    return _HEADER.pack(MAGIC, VERSION, zlib.crc32(payload)) + payload


def decode_state(data: bytes) -> dict[str, Any]:
    if len(data) < _HEADER.size:
        raise HilbridgeError("not a hilbridge save state (too short)")
    magic, version, crc = _HEADER.unpack_from(data)
    if magic != MAGIC:
        raise HilbridgeError("not a hilbridge save state (wrong magic bytes)")
    if version in OLDER_VERSIONS:
        raise HilbridgeError(
            f"save state format version {version} was written by an older hilbridge and cannot be "
            f"loaded ({OLDER_VERSIONS[version]}); save the state again with this version ({VERSION})"
        )
    if version != VERSION:
        raise HilbridgeError(f"save state format version {version} is not supported (expected {VERSION})")
    payload = data[_HEADER.size :]
    if zlib.crc32(payload) != crc:
        raise HilbridgeError("the save state is corrupt (checksum mismatch)")
    try:
        fields = json.loads(zlib.decompress(payload).decode("utf-8"))
    except (zlib.error, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise HilbridgeError(f"the save state is corrupt ({error})") from None
    return _from_plain(fields)


COUNTER_MAX = 1 << 48  # integer fields without a rule are counters: cycles, frames, ticks
MAX_LIST = 100_000  # items in a variable-length list (the renderer's pending spans)
VARIABLE_LISTS: dict[str, list[Any]] = {
    # path → the shape of one item; these lists are empty or not in a fresh machine's state
    "vdc.renderer.spans": [0, 0, "00", False],
}
_HEX = re.compile(r"(?:[0-9a-f]{2})*")
_NOT_HEX = str.maketrans("", "", "0123456789abcdef")


def _is_hex(text: str) -> bool:
    """Whether `_HEX` matches all of `text`: an even number of lowercase hex digits. Deleting the
    digits in C is many times faster than the regex on a state's long strings (checked at every
    load, the model's and the value's)."""
    return len(text) % 2 == 0 and not text.translate(_NOT_HEX)


def _load_rules() -> list[tuple[re.Pattern[str], tuple[int, int] | frozenset[int]]]:
    text = resources.files(__package__).joinpath("state_fields.tsv").read_text(encoding="utf-8")
    rows = [line.split("\t") for line in text.splitlines() if line and not line.startswith("#")]
    rules: list[tuple[re.Pattern[str], tuple[int, int] | frozenset[int]]] = []
    for path, values in rows[1:]:
        pattern = re.compile(re.escape(path).replace(r"\*", r"\d+"))
        if ".." in values:
            low, high = values.split("..")
            rules.append((pattern, (int(low), int(high))))
        else:
            rules.append((pattern, frozenset(int(value) for value in values.split(","))))
    return rules


_RULES = _load_rules()


def _integer_problem(path: str, value: int) -> str | None:
    for pattern, allowed in _RULES:
        if pattern.fullmatch(path):
            if isinstance(allowed, tuple):
                low, high = allowed
                return None if low <= value <= high else f"{path} = {value} is not in {low}..{high}"
            return None if value in allowed else f"{path} = {value} is not one of {sorted(allowed)}"
    return None if 0 <= value <= COUNTER_MAX else f"{path} = {value} is not in 0..{COUNTER_MAX}"


def _problems(value: Any, model: Any, path: str) -> list[str]:
    """What is wrong with `value` where a state has `model` (one of the machine's own values)."""
    where = path or "the state"
    if isinstance(model, dict):
        if not isinstance(value, dict):
            return [f"{where} must be an object"]
        found = [f"{path}.{key}".lstrip(".") + " is missing" for key in model if key not in value]
        found += [f"{path}.{key}".lstrip(".") + " is not a state field" for key in value if key not in model]
        for key in model:
            if key in value:
                found += _problems(value[key], model[key], f"{path}.{key}".lstrip("."))
        return found
    if isinstance(model, bool):
        return [] if isinstance(value, bool) else [f"{where} must be true or false"]
    if isinstance(model, int):
        if isinstance(value, bool) or not isinstance(value, int):
            return [f"{where} must be an integer"]
        problem = _integer_problem(path, value)
        return [problem] if problem else []
    if isinstance(model, bytes):
        if not isinstance(value, bytes) or len(value) != len(model):
            return [f"{where} must be {len(model)} bytes"]
        return []
    if isinstance(model, str):
        if not isinstance(value, str):
            return [f"{where} must be a string"]
        if _is_hex(model) and (len(value) != len(model) or not _is_hex(value)):
            return [f"{where} must be {len(model) // 2} bytes in hex"]
        return [] if len(value) <= max(64, len(model)) else [f"{where} is too long"]
    if isinstance(model, list):
        if not isinstance(value, list):
            return [f"{where} must be a list"]
        item = VARIABLE_LISTS.get(path)
        if item is not None:
            if len(value) > MAX_LIST:
                return [f"{where} has {len(value)} items, more than {MAX_LIST}"]
            return [
                problem
                for n, element in enumerate(value)
                for problem in _span_problems(element, item, f"{path}.{n}")
            ]
        if len(value) != len(model):
            return [f"{where} must have {len(model)} items"]
        return [
            problem
            for n, pair in enumerate(zip(value, model, strict=True))
            for problem in _problems(*pair, f"{path}.{n}")
        ]
    return [f"{where}: unexpected value"]


def _span_problems(value: Any, item: list[Any], path: str) -> list[str]:
    if not isinstance(value, list) or len(value) != len(item):
        return [f"{path} must be a list of {len(item)} items"]
    found = []
    for n, (element, model) in enumerate(zip(value, item, strict=True)):
        if isinstance(model, str):
            if not isinstance(element, str) or not _is_hex(element) or len(element) > 8192:
                found.append(f"{path}.{n} must be bytes in hex")
        else:
            found += _problems(element, model, f"{path}.{n}")
    return found


def check_fields(fields: Any, template: dict[str, Any]) -> None:
    """Refuse a decoded state whose fields differ in shape from `template` or leave their allowed values.

    `template` is the state of a fresh machine of the same kind: every key, type and fixed length.
    """
    problems = _problems(fields, template, "")
    if problems:
        more = f" (and {len(problems) - 1} more problems)" if len(problems) > 1 else ""
        raise HilbridgeError(f"the save state is not valid: {problems[0]}{more}")
