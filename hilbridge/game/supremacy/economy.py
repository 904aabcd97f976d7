"""Supremacy's economy: salaries and loans (Stage 1), production (Stage 2), the market and trades
(Stages 3 and 7), and the card searches of research and prospecting."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from hilbridge.game.core import (
    Action,
    State,
    event,
)
from hilbridge.game.supremacy import rules
from hilbridge.game.supremacy.base import ARMY, NAVY, SupremacyBase, _amounts, _illegal
from hilbridge.game.supremacy.board import RESOURCES


class EconomyRules(SupremacyBase):
    """Stages 1, 2, 3 and 7, and turning over deck cards (S-6.E, S-7.E)."""

    def _legal_salaries(self, state: State, player: str) -> list[Action]:
        """Paying, borrowing, and, when the bill is more than the cash, the cuts that make it payable.

        Leaving a company idle or disbanding a unit while the bill is payable stays legal
        (`is_legal` accepts it) but is not offered: nobody needs it, and it floods random play.
        """
        actions = []
        if self._salary_bill(state, player) <= state["cash"][player]:
            actions.append(Action.new("pay_salaries", player, {}))
        if state["loans"][player] + state["options"]["loan_unit"] <= state["options"]["loan_limit"]:
            actions.append(Action.new("borrow", player, {}))
        if actions and actions[0].kind == "pay_salaries":
            return actions
        for zone, forces in sorted(state["units"].items()):
            force = forces.get(player)
            if force:
                for kind, index in (("army", ARMY), ("navy", NAVY)):
                    if force[index] and not (
                        kind == "navy" and force[ARMY] > (force[NAVY] - 1) * self._capacity(state)
                    ):
                        actions.append(Action.new("disband", player, {"zone": zone, "kind": kind}))
        actions += [
            Action.new("idle", player, {"card": c})
            for c in self._companies(state, player)
            if c not in state["idle"]
        ]
        return actions

    def _legal_loans(self, state: State, player: str) -> list[Action]:
        options = state["options"]
        due = rules.interest_due(
            state["loans"][player], options["loan_unit"], options["loan_interest_per_unit"]
        )
        actions = []
        if not state["interest_paid"]:
            if due <= state["cash"][player]:
                actions.append(Action.new("pay_interest", player, {}))
            if state["loans"][player] + options["loan_unit"] <= options["loan_limit"]:
                actions.append(Action.new("borrow", player, {}))
            if not actions:
                actions.append(Action.new("declare_bankruptcy", player, {}))
            return actions
        if state["loans"][player] and state["cash"][player] >= options["loan_unit"]:
            actions.append(Action.new("repay", player, {}))
        actions.append(Action.new("end_loans", player, {}))
        return actions

    def _legal_sell(self, state: State, player: str) -> list[Action]:
        actions = [Action.new("pass", player, {})]
        for r in RESOURCES:
            have = state["supplies"][player][r]
            for units in _amounts(have):
                actions.append(Action.new("sell", player, {"resource": r, "units": units}))
        return actions

    def _legal_buy(self, state: State, player: str) -> list[Action]:
        actions = [Action.new("pass", player, {})]
        scale = state["options"]["market_scale"]
        for r in RESOURCES:
            if state["supplies"][player][r] < self._cap(state, r):
                cost, _ = rules.buy_from_market(
                    scale, state["market"][r], 1, state["options"]["sale_pricing"]
                )
                if cost <= state["cash"][player]:
                    actions.append(Action.new("buy", player, {"resource": r, "units": 1}))
        return actions

    def _legal_trade(self, state: State, player: str) -> list[Action]:
        """Representative offers: to each other player, one unit of the resource the seller holds most
        of, at the market price. Any other terms are legal too (`is_legal` checks them)."""
        actions = [Action.new("pass", player, {})]
        kind = "offer_sell" if state["stage"] == 3 else "offer_buy"
        for other in state["players"]:
            if other == player or not state["alive"][other]:
                continue
            seller, buyer = (player, other) if kind == "offer_sell" else (other, player)
            stock = state["supplies"][seller]
            for r in (max(RESOURCES, key=lambda item: stock[item]),):
                price = rules.market_price(state["options"]["market_scale"], state["market"][r])
                params = {"with": other, "resource": r, "units": 1, "price": price}
                if self._trade_problem(state, seller, buyer, r, 1, price) is None:
                    actions.append(Action.new(kind, player, params))
        return actions

    def _legal_respond(self, state: State, player: str) -> list[Action]:
        offer = state["offer"]
        actions = [Action.new("decline", player, {})]
        if (
            self._trade_problem(
                state, offer["seller"], offer["buyer"], offer["resource"], offer["units"], offer["price"]
            )
            is None
        ):
            actions.append(Action.new("accept", player, {}))
        return actions

    def _legal_prospect(self, state: State, player: str) -> list[Action]:
        actions = [Action.new("end_turn", player, {})]
        if self._may_prospect(state, player):
            for r in RESOURCES:
                if self._search_problem(state, player, r, state["options"]["card_flip_cost"]) is None:
                    actions.append(Action.new("prospect", player, {"resource": r}))
        return actions

    def _salary_bill(self, state: State, player: str) -> int:
        """Companies only: held nuke and L-star cards draw no salary (SUP-A19, docs/rules/supremacy.md)."""
        options = state["options"]
        companies = [c for c in self._companies(state, player) if c not in state["idle"]]
        return rules.salary_bill(
            len(companies),
            self._units_total(state, player),
            options["company_salary"],
            options["unit_salary"],
        )

    def _do_borrow(self, state: State, player: str, params: dict[str, Any]) -> None:
        """S-1.B (placeholder): take a loan of one loan unit from the bank, up to the loan limit."""
        if state["phase"] not in ("salaries", "loans"):
            raise _illegal("loans are taken in Stage 1")
        options = state["options"]
        if state["loans"][player] + options["loan_unit"] > options["loan_limit"]:
            raise _illegal(f"{player} would owe more than the loan limit ${options['loan_limit']}M")
        state["loans"][player] += options["loan_unit"]
        self._receive(state, player, options["loan_unit"])
        state["events"].append(event("borrow", player=player, amount=options["loan_unit"]))

    def _do_disband(self, state: State, player: str, params: dict[str, Any]) -> None:
        """S-1.A: unpaid military forces are removed from the board (the player picks which)."""
        if state["phase"] != "salaries":
            raise _illegal("units are disbanded when salaries are due")
        zone, kind = params.get("zone"), params.get("kind")
        index = {"army": ARMY, "navy": NAVY}.get(kind)
        if index is None or self._force(state, zone, player)[index] < 1:
            raise _illegal(f"{player} has no {kind} in {zone}")
        force = self._force(state, zone, player)
        if kind == "navy" and force[ARMY] > (force[NAVY] - 1) * self._capacity(state):
            raise _illegal("that navy is convoying armies")
        self._add_units(state, zone, player, -(index == ARMY), -(index == NAVY))
        state["events"].append(event("disband", player=player, zone=zone, unit=kind))

    def _do_idle(self, state: State, player: str, params: dict[str, Any]) -> None:
        """S-1.A: a company whose salary is not paid produces nothing in Stage 2."""
        card = params.get("card")
        if (
            state["phase"] != "salaries"
            or card not in self._companies(state, player)
            or card in state["idle"]
        ):
            raise _illegal(f"{card!r} is not one of {player}'s paid companies")
        state["idle"].append(card)
        state["events"].append(event("idle", player=player, card=card))

    def _do_pay_salaries(self, state: State, player: str, params: dict[str, Any]) -> None:
        bill = self._salary_bill(state, player)
        self._pay(state, player, bill, "salaries")
        state["events"].append(event("salaries", player=player, amount=bill))
        state["interest_paid"] = False
        if state["loans"][player]:
            self._set_phase(state, "loans", player)
        else:
            self._next_in_stage1(state)

    def _do_pay_interest(self, state: State, player: str, params: dict[str, Any]) -> None:
        options = state["options"]
        if state["phase"] != "loans" or state["interest_paid"]:
            raise _illegal("interest is paid once, in Stage 1 Phase B")
        due = rules.interest_due(
            state["loans"][player], options["loan_unit"], options["loan_interest_per_unit"]
        )
        self._pay(state, player, due, "interest")
        state["interest_paid"] = True
        state["events"].append(event("interest", player=player, amount=due))

    def _do_repay(self, state: State, player: str, params: dict[str, Any]) -> None:
        """S-1.B: principal is paid back in billion-dollar amounts."""
        unit = state["options"]["loan_unit"]
        if state["phase"] != "loans" or not state["interest_paid"] or state["loans"][player] < unit:
            raise _illegal("principal is repaid after the interest, in $1B amounts")
        self._pay(state, player, unit, "loan principal")
        state["loans"][player] -= unit
        state["events"].append(event("repay", player=player, amount=unit))

    def _do_end_loans(self, state: State, player: str, params: dict[str, Any]) -> None:
        if state["phase"] != "loans" or not state["interest_paid"]:
            raise _illegal("the interest must be paid first")
        self._next_in_stage1(state)

    def _do_declare_bankruptcy(self, state: State, player: str, params: dict[str, Any]) -> None:
        """S-10.bankrupt (placeholder): a player who can neither pay his interest nor borrow is out."""
        if state["phase"] != "loans" or self._legal_loans(state, player) != [
            Action("declare_bankruptcy", player)
        ]:
            raise _illegal("bankruptcy is declared only when the interest cannot be paid or borrowed")
        state["events"].append(event("bankrupt", player=player))
        self._eliminate(state, player, captor=None)
        self._check_victory(state)
        if state["phase"] != "over":
            self._next_in_stage1(state)

    def _next_in_stage1(self, state: State) -> None:
        order = [p for p in state["players"] if state["alive"][p]]
        current = state["turn"]
        later = (
            order[order.index(current) + 1 :]
            if current in order
            else [p for p in order if state["players"].index(p) > state["players"].index(current)]
        )
        if later:
            self._set_phase(state, "salaries", later[0])
        else:
            self._production(state)
            self._start_bid(state, 3)

    def _production(self, state: State) -> None:
        """S-2.A: each paid company's units go to the supply centre; units over the cap are lost."""
        state["stage"] = 2
        cap = state["options"]["supply_cap"]
        for card_id, holder in state["cards"].items():
            card = self.board.cards[card_id]
            if holder is None or card.kind != "company" or card_id in state["idle"]:
                continue
            stock = state["supplies"][holder][card.resource]
            new_stock, lost = rules.store_production(stock, card.units, cap)
            state["supplies"][holder][card.resource] = new_stock
            state["stock_bank"][card.resource] -= new_stock - stock
            state["events"].append(
                event("production", player=holder, card=card_id, stored=new_stock - stock, lost=lost)
            )
        state["idle"] = []

    def _do_sell_sell(self, state: State, player: str, params: dict[str, Any]) -> None:
        """S-3.C: sell any number of one resource; paid by the bank, the market meter moves down."""
        resource, units = params.get("resource"), params.get("units")
        if resource not in RESOURCES or not isinstance(units, int) or units < 1:
            raise _illegal("a sale names a resource and a positive number of units")
        if state["supplies"][player][resource] < units:
            raise _illegal(f"{player} has only {state['supplies'][player][resource]} {resource}")
        options = state["options"]
        proceeds, step = rules.sell_to_market(
            options["market_scale"], state["market"][resource], units, options["sale_pricing"]
        )
        state["supplies"][player][resource] -= units
        state["stock_bank"][resource] += units
        state["market"][resource] = step
        self._receive(state, player, proceeds)
        state["events"].append(
            event("sell", player=player, resource=resource, units=units, proceeds=proceeds)
        )
        self._advance_rotation(state, player, drop=False)

    def _do_buy_buy(self, state: State, player: str, params: dict[str, Any]) -> None:
        """S-7.C: buy from the market; the meter moves up one step per unit, to the Bear Pit."""
        resource, units = params.get("resource"), params.get("units")
        if resource not in RESOURCES or not isinstance(units, int) or units < 1:
            raise _illegal("a purchase names a resource and a positive number of units")
        if state["supplies"][player][resource] + units > self._cap(state, resource):
            raise _illegal(f"{player}'s supply centre holds at most {self._cap(state, resource)} {resource}")
        options = state["options"]
        cost, step = rules.buy_from_market(
            options["market_scale"], state["market"][resource], units, options["sale_pricing"]
        )
        self._pay(state, player, cost, f"{units} {resource}")
        state["supplies"][player][resource] += units
        state["stock_bank"][resource] -= units
        state["market"][resource] = step
        state["bought"].append(player)
        state["events"].append(event("buy", player=player, resource=resource, units=units, cost=cost))
        self._advance_rotation(state, player, drop=False)

    def _trade_problem(
        self, state: State, seller: str, buyer: str, resource: str, units: int, price: int
    ) -> str | None:
        if not isinstance(buyer, str) or not isinstance(seller, str):
            return "name the other player"
        if (
            seller == buyer
            or buyer not in state["alive"]
            or not state["alive"].get(buyer)
            or not state["alive"].get(seller)
        ):
            return "a trade needs two different players in the game"
        if resource not in RESOURCES or not isinstance(units, int) or units < 1:
            return "a trade names a resource and a positive number of units"
        if not isinstance(price, int) or price < 0:
            return "the price is a whole number of $M, zero or more"
        if state["supplies"][seller][resource] < units:
            return f"{seller} has too few {resource}"
        if state["supplies"][buyer][resource] + units > self._cap(state, resource):
            return f"{buyer}'s supply centre is too full"
        if state["cash"][buyer] < price:
            return f"{buyer} cannot pay ${price}M"
        return None

    def _make_offer(self, state: State, player: str, params: dict[str, Any], selling: bool) -> None:
        if state["phase"] != "trade" or selling != (state["stage"] == 3):
            raise _illegal("players sell to each other in Stage 3 Phase D and buy in Stage 7 Phase D")
        other = params.get("with")
        seller, buyer = (player, other) if selling else (other, player)
        problem = self._trade_problem(
            state, seller, buyer, params.get("resource"), params.get("units"), params.get("price")
        )
        if problem:
            raise _illegal(problem)
        state["offer"] = {
            "from": player,
            "seller": seller,
            "buyer": buyer,
            "resource": params["resource"],
            "units": params["units"],
            "price": params["price"],
        }
        state["events"].append(event("offer", **state["offer"]))
        self._set_phase(state, "respond", other)

    def _do_offer_sell(self, state: State, player: str, params: dict[str, Any]) -> None:
        """S-3.D: sell to another player on any terms; the market price is not affected."""
        self._make_offer(state, player, params, selling=True)

    def _do_offer_buy(self, state: State, player: str, params: dict[str, Any]) -> None:
        """S-7.D: buy from another player on any terms."""
        self._make_offer(state, player, params, selling=False)

    def _do_respond_accept(self, state: State, player: str, params: dict[str, Any]) -> None:
        offer = state["offer"]
        problem = self._trade_problem(
            state, offer["seller"], offer["buyer"], offer["resource"], offer["units"], offer["price"]
        )
        if problem:
            raise _illegal(problem)
        state["supplies"][offer["seller"]][offer["resource"]] -= offer["units"]
        state["supplies"][offer["buyer"]][offer["resource"]] += offer["units"]
        state["cash"][offer["buyer"]] -= offer["price"]
        state["cash"][offer["seller"]] += offer["price"]
        if state["stage"] == 7:
            state["bought"].append(offer["buyer"])
        state["events"].append(event("trade", **offer))
        self._close_offer(state)

    def _do_respond_decline(self, state: State, player: str, params: dict[str, Any]) -> None:
        state["events"].append(event("declined", player=player))
        self._close_offer(state)

    def _close_offer(self, state: State) -> None:
        proposer = state["offer"]["from"]
        state["offer"] = None
        state["phase"] = "trade"
        self._advance_rotation(state, proposer, drop=False)

    def _search_problem(self, state: State, player: str, wanted: str, cost: int) -> str | None:
        if state["cash"][player] < cost:
            return "not enough money to turn over a card"
        if not self._keepable_in_deck(state, player, wanted, ()):
            return f"no {wanted} card that you could keep is left in the deck"
        return None

    def _keepable_in_deck(self, state: State, player: str, wanted: str, flipped: Collection[str]) -> bool:
        """Is a card of `wanted` that `player` could keep still in the deck (neither held nor among the
        `flipped`)? Only the cards of that resource are looked at: no other card can match."""
        held = state["cards"]
        return any(
            self._search_match(state, player, c, wanted)
            for c in self._cards_of.get(wanted, ())
            if c not in held and c not in flipped
        )

    def _search_match(self, state: State, player: str, card_id: str, wanted: str) -> bool:
        card = self.board.cards[card_id]
        if card.resource != wanted:
            return False
        if card.kind == "weapon":
            return True
        return card.territory not in state["clouds"] and self._occupant(state, card.territory) in (
            None,
            player,
        )

    def _do_prospect_prospect(self, state: State, player: str, params: dict[str, Any]) -> None:
        """S-7.E (placeholder): turn over cards at $200M each; keep the first company of that resource
        whose territory is not nuked and not held by another player."""
        resource = params.get("resource")
        if resource not in RESOURCES or not self._may_prospect(state, player):
            raise _illegal("prospect for grain, oil or mineral, once per Stage 7")
        self._start_search(state, player, resource)
        state["prospected"].append(player)

    def _may_prospect(self, state: State, player: str) -> bool:
        """S-DPS.double7: with one cube a player buys or prospects; with two (double seven) both."""
        if player in state["prospected"]:
            return False
        return state["bids"].get(player, 0) >= 2 or player not in state["bought"]

    def _start_search(self, state: State, player: str, wanted: str) -> None:
        cost = state["options"]["card_flip_cost"]
        problem = self._search_problem(state, player, wanted, cost)
        if problem:
            raise _illegal(problem)
        state["search"] = {"player": player, "wanted": wanted, "flipped": [], "return_to": state["phase"]}
        self._pay(state, player, cost, "turning over a card")
        state["phase"] = "search"

    def _chance_search(self, state: State, action: Action) -> None:
        search = state["search"]
        card = action.params.get("card")
        if (
            action.kind != "draw"
            or card not in self.board.cards
            or card in state["cards"]
            or card in search["flipped"]
        ):
            raise _illegal(f"{card!r} is not in the deck")
        player, wanted = search["player"], search["wanted"]
        state["events"].append(event("flip", player=player, card=card))
        cost = state["options"]["card_flip_cost"]
        if self._search_match(state, player, card, wanted):
            state["cards"][card] = player
            state["events"].append(event("found", player=player, card=card))
        else:
            search["flipped"].append(card)
            if state["cash"][player] >= cost and self._keepable_in_deck(
                state, player, wanted, set(search["flipped"])
            ):
                self._pay(state, player, cost, "turning over a card")
                return
            state["events"].append(event("search_ends", player=player, found=False))
        state["phase"] = search["return_to"]
        state["turn"] = player
        state["search"] = None
