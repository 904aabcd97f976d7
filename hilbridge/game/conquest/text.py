"""The Conquest board as text, for `hilbridge game show` and `play`."""

from __future__ import annotations

from typing import Any


def _record(halves: int) -> str:
    return f"{halves // 2}" + ("½" if halves % 2 else "")


def describe_state(view: dict[str, Any]) -> str:
    board = view["board"]
    lines: list[str] = []
    zones: dict[str, list[str]] = {}
    for country, zone in board["zones"].items():
        zones.setdefault(zone, []).append(country)
    homelands = {country: player for player, country in view["homeland"].items() if player in view["active"]}
    for zone, countries in zones.items():
        lines.append(f"{zone}:")
        for country in countries:
            owner = view["owner"][country]
            ally = view["ally_of"].get(country)
            if owner:
                status = f"occupied by {owner}" + (" (HOMELAND)" if homelands.get(country) == owner else "")
            elif ally:
                status = f"allied with {ally}"
            else:
                status = "unoccupied"
            lines.append(f"  {country:<22} {board['values'][country]:>2}  {status}")
    lines.append("")
    lines.append(f"{'player':<12} {'homeland':<16} {'PBU chips':>10} {'record':>7}  alliance")
    for player in view["players"]:
        allies = next((g for g in view["alliances"] if player in g), [])
        status = "" if player in view["active"] else "  (out)"
        partners = ", ".join(p for p in allies if p != player)
        lines.append(
            f"{player:<12} {view['homeland'][player]:<16} {view['chips'][player]:>10} "
            f"{_record(view['record'][player]):>7}  {partners}{status}"
        )
    lines.append(f"WARCHEST/bank: {view['bank']} PBU")
    from hilbridge.game.conquest.rules import HOMELAND_ATTACK_PBU_PER_VALUE

    options = view["options"]
    lines.append(
        f"costs per country value: occupy {options['unoccupied_cost_per_value']} PBU, "
        f"ally {options['ally_cost_per_value']} PBU, attack {options['attack_cost_per_value']} PBU, "
        f"attack a HOMELAND {HOMELAND_ATTACK_PBU_PER_VALUE} PBU"
    )
    lines.append("")
    phase = view["phase"]
    if phase == "over":
        lines.append(f"Game over. Winner: {', '.join(view['winners'])}")
    elif view["ladder"] is not None:
        duel = view["ladder"]["duel"]
        lines.append(
            f"END GAME. Ladder holder: {view['ladder']['holder']}; "
            f"waiting: {', '.join(view['ladder']['waiting']) or 'nobody'}"
        )
        if duel:
            energy = ", ".join(f"{p} {units}" for p, units in duel["energy"].items())
            lines.append(
                f"Battle {duel['number']}: {duel['attacker']} attacks {duel['defender']}; energy: {energy}"
            )
            banned = ", ".join(f"{p} may not use {w}" for p, w in duel["banned"].items())
            if banned:
                lines.append(f"Lost weapon: {banned}")
    else:
        stage = "FINAL ROUND" if view["final_round"] is not None else f"round {view['round']}"
        lines.append(f"{stage}; {view['turn']} to play")
        if view["battle"]:
            battle = view["battle"]
            lines.append(f"Battle for {battle['country']}: {battle['attacker']} attacks {battle['defender']}")
        if view["offer"]:
            lines.append(f"{view['offer']['from']} offers {view['offer']['to']} an alliance")
    return "\n".join(lines)
