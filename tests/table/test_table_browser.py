"""Two players at the web table in two real browsers (Debian's chromium, headless, via Selenium).

They play a Supremacy blind bid and a battle; neither page's DOM nor any response its browser
received holds the other player's secret bid (nor the seed); a screenshot of the map is kept; after
a server restart both pages go on from the save. A Conquest battle fought on the emulated console
(`serve --console sim`) is confirmed by its two players in their browsers; a corrected one is
entered in one player's browser and confirmed in the other's.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from conftest import require_tool
from table_games import conquest_at_battle, saved, supremacy_at_attack_bid

pytest.importorskip("selenium")
from selenium import webdriver
from selenium.common.exceptions import WebDriverException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

pytestmark = pytest.mark.slow
HOMES = {"ann": "Western U.S.A.", "bob": "Venezuela"}  # each next to the vacant Central America
WAIT = 30.0


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Server:
    """`hilbridge game serve` in a subprocess, restartable on the same port."""

    def __init__(self, save: Path, port: int, log: Path, options: tuple[str, ...] = ()):
        self.save, self.port, self.log, self.options = save, port, log, options
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        command = [sys.executable, "-c", "from hilbridge.cli.main import main; main()"]
        command += ["game", "serve", str(self.save), "--port", str(self.port), "--no-qr", *self.options]
        with self.log.open("ab") as out:
            self.process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{self.port}/", timeout=2)
            except urllib.error.HTTPError:
                return  # the server answers (403 without a token)
            except OSError:
                time.sleep(0.2)
        raise AssertionError(f"the table did not start: {self.log.read_text()}")

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def start_browser(chromium: str, driver: str) -> webdriver.Chrome:
    """A headless chromium that records the body of every response it receives (performance log)."""
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for argument in (
        "--headless=new",
        "--no-sandbox",
        "--disable-dev-shm-usage",
        "--window-size=1500,1000",
    ):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"performance": "ALL"})
    return webdriver.Chrome(service=Service(executable_path=driver), options=options)


@pytest.fixture(scope="module")
def browsers() -> Iterator[list[webdriver.Chrome]]:
    """Two browsers, one per player, shared by the tests (each start costs about 1.5 s); every table
    is served on its own port, so no page sees another test's cookies or storage."""
    chromium = require_tool("chromium", "chromium-browser")
    driver = require_tool("chromedriver")
    started: list[webdriver.Chrome] = []
    try:
        for _ in range(2):
            started.append(start_browser(chromium, driver))
        yield started
    finally:
        for browser in started:
            browser.quit()


class Page:
    """One player's page in one of the `browsers`, recording the body of every response it receives."""

    def __init__(self, url: str, driver: webdriver.Chrome):
        self.driver = driver
        self.driver.get_log("performance")  # what an earlier page received is not this page's
        self.received: list[str] = []
        self.driver.get(url)

    def close(self) -> None:
        """Leave the page, so its live updates stop before its table's server does."""
        self.driver.get("about:blank")

    def collect(self) -> None:
        for entry in self.driver.get_log("performance"):
            message = json.loads(entry["message"])["message"]
            if message["method"] != "Network.responseReceived":
                continue
            try:
                body = self.driver.execute_cdp_cmd(
                    "Network.getResponseBody", {"requestId": message["params"]["requestId"]}
                )
            except WebDriverException:
                continue  # the event stream (still open) and evicted bodies
            self.received.append(body["body"])

    def text(self, element: str) -> str:
        return self.driver.find_element(By.ID, element).text

    def wait(self, condition: Callable[[], bool], what: str) -> None:
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline:
            try:
                if condition():
                    return
            except WebDriverException:
                pass
            time.sleep(0.2)
        raise AssertionError(f"timed out waiting for {what}; status {self.text('status')!r}")

    def wait_log(self, text: str) -> None:
        self.wait(lambda: text in self.text("log"), f"{text!r} in the log")

    def my_turn(self) -> bool:
        return self.text("status").startswith("Your move")

    def labels(self) -> list[str]:
        return [button.text for button in self.driver.find_elements(By.CSS_SELECTOR, "#moves button")]

    def click_move(self, label: str) -> None:
        """Press the move button `label` (retried while a live update redraws the buttons)."""
        revision = self.revision()

        def press() -> bool:
            buttons = self.driver.find_elements(By.CSS_SELECTOR, "#moves button")
            button = next((b for b in buttons if b.text == label), None)
            if button is None:
                return False
            button.click()
            return True

        self.wait(press, f"a {label!r} button")
        self.wait(lambda: self.revision() != revision, f"the page to move on after {label!r}")

    def revision(self) -> str:
        return self.driver.find_element(By.TAG_NAME, "body").get_attribute("data-revision") or ""

    def attack(self, origin: str, target: str, units: int) -> None:
        revision = self.revision()
        form = self.driver.find_element(By.CSS_SELECTOR, "form[data-kind=attack]")
        Select(form.find_element(By.NAME, "from")).select_by_value(origin)
        Select(form.find_element(By.NAME, "to")).select_by_value(target)
        Select(form.find_element(By.NAME, "mode")).select_by_value("direct")
        count = form.find_element(By.NAME, "units")
        count.clear()
        count.send_keys(str(units))
        form.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
        self.wait(lambda: self.revision() != revision, "the attack to be made")


@pytest.fixture
def table(tmp_path: Path) -> Iterator[tuple[Server, dict[str, str], int]]:
    game = supremacy_at_attack_bid()
    save = saved(game, tmp_path / "supremacy.json")
    server = Server(save, free_port(), tmp_path / "serve.log")
    server.start()
    tokens = json.loads((tmp_path / "supremacy.json.tokens").read_text())["tokens"]
    try:
        yield server, tokens, game.seed
    finally:
        server.stop()


def finish_stage(pages: dict[str, Page]) -> None:
    """Both players end, decline or pass until the next blind bid."""
    endings = ("end occupy", "end reinforce", "decline", "pass", "end turn")
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        for page in pages.values():
            try:
                labels = page.labels()
                if "bid 0" in labels:
                    return
                ending = next((label for label in labels if label in endings), None)
                if page.my_turn() and ending:
                    page.click_move(ending)
            except WebDriverException:
                pass  # the page was redrawn while we read it: look again
        time.sleep(0.2)
    raise AssertionError("Stage 4 did not end")


def since_last_reveal(lines: list[str]) -> list[str]:
    reveals = [i for i, line in enumerate(lines) if line.startswith("Secret moves revealed")]
    return lines[reveals[-1] + 1 :] if reveals else lines


def assert_hidden(page: Page, owner: str, seed: int) -> None:
    """Nothing `page` shows or received holds `owner`'s pending bid (nor the game's seed): no log
    since the last reveal says more than that he committed, and no answer holds his move."""
    page.collect()
    pending = since_last_reveal([item.text for item in page.driver.find_elements(By.CSS_SELECTOR, "#log li")])
    assert f"{owner} committed a secret move." in pending
    assert not any("secret move:" in line or f"{owner}: bid" in line for line in pending)
    for body in [page.driver.page_source, *page.received]:
        assert f'"player":"{owner}","params"' not in body.replace(" ", "")
        assert str(seed) not in body
        try:
            answer = json.loads(body)
        except json.JSONDecodeError:
            continue
        if isinstance(answer, dict):
            lines = since_last_reveal(answer.get("log", []) + answer.get("did", []))
            assert not any(f"{owner}: bid" in line for line in lines)


def test_two_players_bid_blind_and_fight_in_their_browsers(table, browsers, tmp_path):
    server, tokens, seed = table
    base = f"http://127.0.0.1:{server.port}/t/"
    pages = {player: Page(base + tokens[player], browsers[i]) for i, player in enumerate(("ann", "bob"))}
    try:
        for page in pages.values():
            page.wait(page.my_turn, "the Stage 4 blind bid")

        # Stage 4 blind bid: ann commits first; bob's page learns only that she committed.
        pages["ann"].click_move("bid 1")
        pages["bob"].wait_log("ann committed a secret move.")
        assert "Your secret move: bid cubes=1." in pages["ann"].text("log")
        assert_hidden(pages["bob"], "ann", seed)
        pages["bob"].click_move("bid 1")
        for page in pages.values():
            page.wait_log("Stage 4 blind bids: ann: 1; bob: 1.")

        # The first in sequence takes the vacant Central America; the second attacks it: dice.
        for page in pages.values():
            page.wait(lambda: any(p.my_turn() for p in pages.values()), "the attack rotation")
        first = next(player for player, page in pages.items() if page.my_turn())
        second = "bob" if first == "ann" else "ann"
        pages[first].attack(HOMES[first], "Central America", 1)
        pages[first].click_move("end occupy")
        pages[second].wait(pages[second].my_turn, "the second attack")
        pages[second].attack(HOMES[second], "Central America", 1)
        for page in pages.values():
            page.wait_log("Battle dice")
        shot = tmp_path / "table-map.png"
        pages[first].driver.save_screenshot(str(shot))
        print(f"screenshot of the map page: {shot}")
        assert shot.stat().st_size > 10_000
        zone = pages[first].driver.find_element(By.CSS_SELECTOR, "g.zone[data-zone='Central America']")
        assert "Central America" in zone.find_element(By.TAG_NAME, "title").get_attribute("textContent")

        # Stage 5 blind bid: this time bob commits first and ann's page must not learn his bid.
        finish_stage(pages)
        pages["bob"].click_move("bid 1")
        pages["ann"].wait_log("bob committed a secret move.")
        assert_hidden(pages["ann"], "bob", seed)

        # A restart: both pages reconnect by themselves and go on from the save.
        boot = pages["ann"].revision().split(".")[0]
        server.stop()
        server.start()
        for page in pages.values():
            page.wait(
                lambda p=page: p.revision().split(".")[0] != boot, "the page to reload after the restart"
            )
        pages["ann"].wait(pages["ann"].my_turn, "ann's bid after the restart")
        pages["ann"].click_move("bid 0")
        for page in pages.values():
            page.wait_log("Stage 5 blind bids: bob: 1; ann: 0.")  # in the order of the commits
    finally:
        for page in pages.values():
            page.close()


@contextmanager
def console_battle_in_browsers(
    tmp_path: Path, game, browsers: list[webdriver.Chrome]
) -> Iterator[tuple[dict[str, Page], str, dict[str, str]]]:
    """A web table at `game`'s console battle, fought on `sim`, with the two battle players' pages
    open in their own browsers: (pages by player, the table's base URL, the tokens)."""
    battle = game.state["battle"]
    save = saved(game, tmp_path / "conquest.json")
    server = Server(save, free_port(), tmp_path / "serve.log", ("--console", "sim"))
    server.start()
    tokens = json.loads((tmp_path / "conquest.json.tokens").read_text())["tokens"]
    base = f"http://127.0.0.1:{server.port}/t/"
    pages: dict[str, Page] = {}
    try:
        for browser, player in zip(browsers, (battle["attacker"], battle["defender"]), strict=True):
            pages[player] = Page(base + tokens[player], browser)
        yield pages, base, tokens
    finally:
        for page in pages.values():
            page.close()
        server.stop()


def test_a_battle_on_the_emulated_console_is_confirmed_in_both_players_browsers(tmp_path, browsers):
    game = conquest_at_battle()
    battle = game.state["battle"]
    players = (battle["attacker"], battle["defender"])
    other = next(p for p in game.setup["players"] if p not in players)
    with console_battle_in_browsers(tmp_path, game, browsers) as (pages, base, tokens):
        for page in pages.values():
            page.wait(lambda p=page: p.driver.find_elements(By.ID, "confirm-yes"), "the console's result")
        shot = tmp_path / "table-console-battle.png"
        pages[players[0]].driver.save_screenshot(str(shot))
        print(f"screenshot of the console battle's confirmation: {shot}")
        said = pages[players[0]].text("bridge")
        assert "The console says:" in said and "Correct?" in said
        with urllib.request.urlopen(base + tokens[other] + "/state", timeout=5) as answer:
            onlooker = answer.read().decode()
        assert "The console says" not in onlooker and '"state":"confirm"' in onlooker.replace(" ", "")
        for page in pages.values():  # retried: the other's confirmation redraws the page
            page.wait(lambda p=page: p.driver.find_element(By.ID, "confirm-yes").click() is None, "a click")
        for page in pages.values():
            page.wait_log("Result from console sim: ram record #1.")
            page.wait(lambda p=page: p.text("battle") == "", "the battle prompt to go")


def test_a_corrected_battle_is_entered_in_one_browser_and_confirmed_in_the_other(tmp_path, browsers):
    game = conquest_at_battle()
    attacker, defender = game.state["battle"]["attacker"], game.state["battle"]["defender"]
    with console_battle_in_browsers(tmp_path, game, browsers) as (pages, _, _):
        first, second = pages[attacker], pages[defender]
        first.wait(lambda: first.driver.find_elements(By.ID, "confirm-yes"), "the console's result")
        first.driver.find_element(By.ID, "confirm-no").click()

        def enter() -> bool:
            form = first.driver.find_element(By.CSS_SELECTOR, "#bridge form[data-kind=battle]")
            Select(form.find_element(By.NAME, "winner")).select_by_value(defender)
            form.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
            return True

        first.wait(enter, "the manual entry form")
        first.wait(lambda: "You entered: " + defender + " wins" in first.text("entry"), "the own entry")
        second.wait(
            lambda: f"{attacker} entered: {defender} wins" in second.text("entry"), "the other's entry"
        )
        assert "Battle for" not in second.text("log")  # nothing applied before the confirmation
        second.driver.find_element(By.ID, "entry-yes").click()
        said = f"Result from manual entry by {attacker}, confirmed by {defender}: the players corrected"
        for page in pages.values():
            page.wait_log(said)
            page.wait(lambda p=page: p.text("battle") == "", "the battle prompt to go")
