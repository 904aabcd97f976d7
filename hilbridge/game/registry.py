"""The rulesets hilbridge can play, by name.

Each ruleset lives in its own package that exposes a module attribute ``RULESET`` (an instance of
`hilbridge.game.core.Ruleset`); the table below says where. A ruleset is imported only when asked
for, so a half-written ruleset never breaks the others.
"""

from __future__ import annotations

import importlib

from hilbridge.errors import HilbridgeError
from hilbridge.game.core import Ruleset

RULESET_MODULES: dict[str, str] = {
    "conquest": "hilbridge.game.conquest",
    "supremacy": "hilbridge.game.supremacy",
}

_REGISTERED: dict[str, Ruleset] = {}


def register(ruleset: Ruleset) -> None:
    """Make a ruleset available by its name (tests and plug-ins; built-ins use RULESET_MODULES)."""
    _REGISTERED[ruleset.name] = ruleset


def get_ruleset(name: str) -> Ruleset:
    if name in _REGISTERED:
        return _REGISTERED[name]
    module_name = RULESET_MODULES.get(name)
    if module_name is None:
        known = ", ".join(sorted({*RULESET_MODULES, *_REGISTERED}))
        raise HilbridgeError(f"unknown game {name!r} (known: {known})")
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise HilbridgeError(f"the {name} rules are not available in this build ({error})") from None
    ruleset: Ruleset = module.RULESET
    _REGISTERED[name] = ruleset
    return ruleset
