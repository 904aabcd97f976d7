"""Events as sentences (templates in `messages.json`), for the web table's log and the CLI."""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import cache
from importlib import resources
from typing import Any

HIDDEN_FIELDS = ("step", "kind", "visible_to")


@cache
def templates(game: str) -> dict[str, str]:
    text = resources.files("hilbridge.table").joinpath("messages.json").read_text("utf-8")
    data = json.loads(text)
    return {**data["common"], **data.get(game, {})}


def _plain(value: Any) -> str:
    if isinstance(value, list):
        return ", ".join(_plain(item) for item in value) or "-"
    if isinstance(value, dict):
        if set(value) == {"kind", "player", "params"}:
            details = " ".join(f"{k}={_plain(v)}" for k, v in value["params"].items())
            return f"{value['kind']} {details}".strip()
        return "; ".join(f"{k}: {_plain(v)}" for k, v in value.items())
    return "nobody" if value is None else str(value)


def describe_event(game: str, item: Mapping[str, Any]) -> str:
    """One event as a sentence; an event without a template shows its kind and fields. A battle
    result that says where it came from (the console's record or screen, or a manual entry and
    why) says so in the sentence, so the log shows who decided each battle."""
    fields = {key: _plain(value) for key, value in item.items() if key not in HIDDEN_FIELDS}
    template = templates(game).get(item["kind"])
    if template is not None:
        try:
            sentence = template.format_map(fields)
        except (KeyError, IndexError, ValueError):
            pass
        else:
            if "source" in fields and "{source}" not in template:
                sentence += f" Result from {fields['source']}."
            return sentence
    return " ".join([item["kind"], *(f"{key}={value}" for key, value in fields.items())])
