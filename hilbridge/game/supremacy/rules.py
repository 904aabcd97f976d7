"""Pure Supremacy rule functions: the market price index, salaries, production caps, loans and dice.

Each function is one rule clause, named after it in the rule register (docs/rules/supremacy.md), and
takes the numbers it needs as arguments so a test can set up any position in one line.
Money is in millions of dollars.
"""

from __future__ import annotations

from collections.abc import Sequence

SET_OF_SUPPLIES = {"grain": 1, "oil": 1, "mineral": 1}
"""S-4.C.conv.B: "One set of supplies consists of: one grain, one oil and one mineral unit"."""


def market_price(scale: Sequence[int], step: int) -> int:
    """S-0.board.market: the price index under the market meter ($M); step 0 is the Bull Pen."""
    return scale[step]


def sell_to_market(scale: Sequence[int], step: int, units: int, pricing: str = "pre_sale") -> tuple[int, int]:
    """S-3.C: proceeds of selling `units` and the meter's new step (each unit moves it one step down).

    SUP-A1: ``pre_sale`` pays every unit at the price before the sale (the seed's example);
    ``per_unit`` pays each unit at the meter's position before that unit moves.
    """
    if units < 0:
        raise ValueError("units must not be negative")
    new_step = max(0, step - units)
    if pricing == "pre_sale":
        return units * scale[step], new_step
    proceeds = sum(scale[max(0, step - i)] for i in range(units))
    return proceeds, new_step


def buy_from_market(
    scale: Sequence[int], step: int, units: int, pricing: str = "pre_sale"
) -> tuple[int, int]:
    """S-7.C: cost of buying `units` and the meter's new step (one step up per unit, to the Bear Pit)."""
    if units < 0:
        raise ValueError("units must not be negative")
    top = len(scale) - 1
    new_step = min(top, step + units)
    if pricing == "pre_sale":
        return units * scale[step], new_step
    return sum(scale[min(top, step + i)] for i in range(units)), new_step


def salary_bill(companies: int, military_units: int, company_salary: int = 50, unit_salary: int = 10) -> int:
    """S-1.A: $50M per resource company and $10M per army or navy on the board. Nuke and L-star
    cards are not counted (reading SUP-A19 in docs/rules/supremacy.md: the clause prices "Resource
    Companies" and "Armies and Navies" only)."""
    return companies * company_salary + military_units * unit_salary


def interest_due(loans: int, loan_unit: int, interest_per_unit: int) -> int:
    """S-1.B (placeholder rate): interest on the loans outstanding, per cycle."""
    return (loans // loan_unit) * interest_per_unit


def store_production(stock: int, produced: int, cap: int) -> tuple[int, int]:
    """S-2.A: add production to the supply centre; "any surplus units are regarded as lost".

    Returns (new stock, units lost).
    """
    new_stock = min(cap, stock + produced)
    return new_stock, stock + produced - new_stock


def conventional_dice(
    attacker_firepower: int,
    defender_firepower: int,
    attacker_lstars: int,
    defender_lstars: int,
    defender_paid_supplies: bool,
    tie: str = "none",
) -> tuple[int, int]:
    """S-4.C.conv.C: (attacker dice, defender dice).

    Attacker 1, defender 2 (1 if he removed no set of supplies); +1 to the side with more fire power;
    +1 to the side with more L-stars. SUP-A4: on equal counts ``tie="none"`` gives the extra die
    to neither side, ``tie="defender"`` to the defender.
    """
    attacker, defender = 1, 2 if defender_paid_supplies else 1
    for mine, theirs in ((attacker_firepower, defender_firepower), (attacker_lstars, defender_lstars)):
        if mine > theirs:
            attacker += 1
        elif theirs > mine or tie == "defender":
            defender += 1
    return attacker, defender


def kills(rolls: Sequence[int]) -> int:
    """S-4.C.conv.D: one enemy army or navy removed for every three points rolled."""
    return sum(rolls) // 3


def screen_hits(rolls: Sequence[int], champion: bool) -> int:
    """S-4.C.strat.D: nukes destroyed by L-star dice: 1-5 for the defender, 1-3 for a champion."""
    best = 3 if champion else 5
    return sum(1 for roll in rolls if 1 <= roll <= best)
