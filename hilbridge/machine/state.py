"""Save-state encoding: versioned, deterministic bytes (the same machine state gives the same bytes).

Layout: the magic ``HBSTATE\\0``, a big-endian u16 format version, the CRC32 of the payload, then
the payload: zlib-compressed JSON of plain data (dicts, lists, ints, bools, strings; `bytes` as
``{"$bytes": hex}``) with sorted keys. A wrong magic, version or checksum is a `HilbridgeError`.
"""

from __future__ import annotations

import json
import struct
import zlib
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
