"""Assembler speed on a generated 13,000-line program, in lines per second.

The program looks like a bank-switched Videopac cartridge: equates, macros, 128-byte aligned
routines with local labels, forward calls, data tables, comments and conditional debugging
code, each 2K window PHASEd to 0400h. The
reference, measured in the same run, is Python's own `compile()` of a Python file with the same
number of lines (one assignment with a small expression per line); the ratio printed is
(assembler time) / (compile time). The target is "well under a second" for the whole program.

    python benchmarks/asm_speed.py [--lines 13000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import time

from hilbridge.toolchain.assembler import assemble_text

HEADER = """\
; generated benchmark program
\tcpu\t8048
\tinclude\t"bitfuncs.inc"
copy\tmacro\tsrc,dst,n
\tmov\tr0,#src
\tmov\tr1,#dst
\tmov\tr2,#n
.again\tmov\ta,@r0
\tmov\t@r1,a
\tinc\tr0
\tinc\tr1
\tdjnz\tr2,.again
\tendm
"""

BLOCK = """\
; routine {k}: reads table {k}, loops, calls the next routine
\talign\t128
blk{k}:\tmov\tr0,#var{v}
\tmov\ta,@r0\t\t; load the variable
\tadd\ta,#lo(tab{k})
\tmovp\ta,@a
\tmov\tr2,#count{v} & 0fh
.loop\tdjnz\tr2,.loop
\tjnz\tskip{k}
\tcall\tsub{k}
\tcopy\t20h,30h,{n}
skip{k}:\tanl\ta,#mask(0,4)
\torl\tP1,#{v}
\tjb{b}\tsub{k}
\tmov\ta,#hi($)
sub{k}:\tret
tab{k}:\tdb\t{k} & 0ffh, 2, 3, 4, "AB"
\tdw\tblk{k}
\tif\tdebug
\tmov\ta,#{v}\t\t; debugging code, not assembled
\tcall\tsub{k}
\tdb\t"debug",0
\telse
level\tset\t{k} # 5
\tendif

; ---------------------------------------------------------------
; end of routine {k}
"""


def generate(lines: int) -> str:
    parts = [HEADER, "debug\tequ\t0\n"]
    parts.extend(f"var{i}\tequ\t{0x20 + i:03X}h\ncount{i}\tequ\tvar{i} * 2 + 1\n" for i in range(64))
    total = sum(part.count("\n") for part in parts)
    k = 0
    window = 0
    while total < lines:
        if k % 15 == 0:
            if window:
                parts.append("\tdephase\n")
            parts.append(f"\torg\t0{window * 0x800:X}h\n\tphase\t400h\n")
            window += 1
            total += 2
        block = BLOCK.format(k=k, v=k % 64, n=1 + k % 7, b=k % 8)
        parts.append(block)
        total += block.count("\n")
        k += 1
    parts.append("\tdephase\n")
    return "".join(parts)


def reference_python(lines: int) -> str:
    return "".join(f"value_{i} = ({i} * 3 + 0x20) & 0xFF  # line {i}\n" for i in range(lines))


def best_of(repeat: int, action) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        action()
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=13_000)
    parser.add_argument("--repeat", type=int, default=3)
    arguments = parser.parse_args()
    source = generate(arguments.lines)
    line_count = source.count("\n")
    python_source = reference_python(line_count)

    # Cold: a fresh process's first assembly (nothing cached); warm runs reuse the parse caches.
    start = time.perf_counter()
    result = assemble_text(source, "benchmark.a48")
    cold = time.perf_counter() - start
    warm = best_of(arguments.repeat, lambda: assemble_text(source, "benchmark.a48"))
    reference = best_of(arguments.repeat, lambda: compile(python_source, "reference.py", "exec"))

    print(f"program: {line_count} lines, {len(result.image)} bytes, {result.passes} passes")
    print(f"assemble (first run): {cold:.3f} s = {line_count / cold:,.0f} lines/s")
    print(f"assemble (best of {arguments.repeat}): {warm:.3f} s = {line_count / warm:,.0f} lines/s")
    print(f"reference compile() of {line_count} Python lines: {reference:.3f} s")
    print(f"ratio assemble/compile: first run {cold / reference:.2f}, best {warm / reference:.2f}")


if __name__ == "__main__":
    main()
