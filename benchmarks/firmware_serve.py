"""The bus engines' figures from their PIO programs run in pioemu on the fixture cartridges.

Serve: latency in PIO cycles and in ns at 125 MHz per mapper (pioemu's count, the 2-cycle input
synchroniser and the DMA model of tests/firmware/pio_harness.py included, typical buffer delays
added), against the 8048's budget for the cartridge (tRD2), measured in the same run from the same
timing table. Capture: records per second of console time the sniff engine delivered with zero
drops, against the console's own rate of slot accesses on the same cartridge and window, and the
link bytes per second the compressed stream needs against USB full speed's bulk rate.

    python benchmarks/firmware_serve.py [--region ntsc|pal] [--accesses 300]

Needs rp2040-pio-emulator and adafruit-circuitpython-pioasm (see .ci/run) and gcc.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests" / "firmware"), str(ROOT / "tests")]

USB_FULL_SPEED_BULK = 1_216_000  # bytes/s: 19 bulk packets of 64 bytes per 1 ms frame, at best
RECORD_BYTES = 9


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--region", choices=("ntsc", "pal"), default="ntsc")
    parser.add_argument("--accesses", type=int, default=300)
    args = parser.parse_args()

    import test_pio_serve as serve_tests
    import test_pio_sniff as sniff_tests
    from bus_waves import Layout, slot_accesses
    from c_build import BUS_SOURCES, shared_library
    from cart_fixtures import SERVED, image, program_for, serve_tables

    from hilbridge.machine.bus import FETCH, WRITE

    layout = Layout.load(args.region)
    budget_ns = layout.delays["tRD2"] * 8
    cycle_s = layout.cycle / 125e6
    print(f"serve latency ({args.region}, /PSEN edge to data at the slot; 8048 allows {budget_ns:.0f} ns):")
    for name, mapper in SERVED:
        accesses = slot_accesses(image(name), mapper, args.region, 5000)[: args.accesses]
        shown = [a for a in accesses if a.kind in (FETCH, WRITE)]
        answers = [a.value if a.kind == FETCH else None for a in shown]
        result = serve_tests.serve(shown, args.region, program_for(image(name), mapper),
                                   serve_tables(image(name), mapper), answers)  # fmt: skip
        worst = max(result.latencies) + serve_tests.SYNC_CYCLES
        ns = worst * 8 + serve_tests.BUFFER_NS
        print(f"  {mapper:9} {name:14} {worst:3} PIO cycles  {ns:4} ns  = {ns / budget_ns:.2f} of the budget"
              f"  ({result.answered} fetches)")  # fmt: skip

    gcc = shutil.which("gcc")
    if gcc is None:
        print("capture: gcc not found, skipped")
        return 0
    with tempfile.TemporaryDirectory() as directory:
        library = shared_library(gcc, [BUS_SOURCES / "sniff_decode.c"], Path(directory), "sniff")
        print(f"capture ({args.region}, records per second of console time):")
        for name, mapper in SERVED:
            accesses = slot_accesses(image(name), mapper, args.region, 4000)[: args.accesses]
            events, _samples, _offsets = sniff_tests.sniff(accesses, args.region)
            records = sniff_tests.decode(library, events, round(layout.cycle * 256))
            seconds = (accesses[-1].cycle - accesses[0].cycle + 1) * cycle_s
            console_rate = len(accesses) / seconds
            captured = len(events) / seconds
            link = len(records) * RECORD_BYTES / seconds
            print(f"  {mapper:9} {name:14} console {console_rate:8.0f}/s  captured {captured:8.0f}/s"
                  f" = {captured / console_rate:.2f}, drops {len(accesses) - len(events)};"
                  f"  records {len(records) / seconds:8.0f}/s need {link / 1e3:6.0f} kB/s"
                  f" = {link / USB_FULL_SPEED_BULK:.2f} of USB full speed")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
