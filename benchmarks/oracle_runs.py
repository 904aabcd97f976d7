"""CPU seconds of the oracle's traced runs as the MAME comparison tests make them, by phase.

    PYTHONPATH=. python benchmarks/oracle_runs.py [--repeat 3] [--region ntsc|pal] [CART_NAME ...]

Phases, each timed with process_time (CPU, not wall) and printed as the median of `--repeat` runs:
`emulator` is `run_emulator` with the cart's traced-run options (tests/fixture_runs.py), `mame` is
`run_mame` read from the MAME-run cache (restore, parse, pixel conversion), `compare` is the
acceptance test's `compare_runs`. The MAME runs must be in the cache
($HILBRIDGE_MAME_CACHE, default as the tests set it): run the oracle tests once first. The machine's
load average is printed first and last: figures taken under load are only comparable within the run.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from fixture_runs import SPECS, cart_image, traced_run_options  # noqa: E402

from hilbridge.oracle.emulator import run_emulator  # noqa: E402
from hilbridge.oracle.mame import run_mame  # noqa: E402
from hilbridge.oracle.run_cache import use_default_folder  # noqa: E402
from hilbridge.oracle.trace import compare_runs  # noqa: E402

T = TypeVar("T")
DEFAULT_CARTS = ("cpu_alu", "vdc_regs", "video_midframe", "video_objects")


def cpu_seconds(work: Callable[[], T]) -> tuple[float, T]:
    started = time.process_time()
    result = work()
    return time.process_time() - started, result


def measure(name: str, region: str) -> dict[str, float]:
    """One round of the three phases for a cart and region."""
    options = traced_run_options(name)
    image = cart_image(name)
    emulator_seconds, ours = cpu_seconds(lambda: run_emulator(image, region=region, **options))
    mame_seconds, theirs = cpu_seconds(lambda: run_mame(image, region=region, state=True, **options))
    if not theirs.from_cache:
        raise SystemExit(f"{name} {region}: MAME run not cached; run the oracle tests once first")

    compare_seconds, (_, mismatch) = cpu_seconds(lambda: compare_runs(ours.trace, theirs.trace))
    if mismatch is not None:
        raise SystemExit(f"{name} {region}: the runs differ\n{mismatch.report()}")
    return {"emulator": emulator_seconds, "mame": mame_seconds, "compare": compare_seconds}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("carts", nargs="*", default=DEFAULT_CARTS)
    parser.add_argument("--region", choices=("ntsc", "pal"), default="ntsc")
    parser.add_argument("--repeat", type=int, default=3)
    arguments = parser.parse_args()
    use_default_folder()
    print(f"load average {os.getloadavg()[0]:.2f}; CPU seconds, medians of {arguments.repeat}")
    print(f"{'cart':<18}{'emulator':>10}{'mame':>10}{'compare':>10}{'total':>10}")
    unknown = [name for name in arguments.carts if name not in SPECS]
    if unknown:
        raise SystemExit(f"unknown cart {unknown[0]!r}; choose from {', '.join(sorted(SPECS))}")
    measured: dict[str, list[dict[str, float]]] = {name: [] for name in arguments.carts}
    for _ in range(arguments.repeat):  # the carts in turn, so that no round finds its own memory warm
        for name in arguments.carts:
            measured[name].append(measure(name, arguments.region))
    for name, rounds in measured.items():
        medians = {phase: statistics.median(r[phase] for r in rounds) for phase in rounds[0]}
        total = statistics.median(sum(r.values()) for r in rounds)
        figures = "".join(f"{medians[phase]:>10.2f}" for phase in ("emulator", "mame", "compare"))
        print(f"{name:<18}{figures}{total:>10.2f}")
    print(f"load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
