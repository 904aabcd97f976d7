"""The check's outputs: a text summary, JSON, a side-by-side PNG with a diff mask, one HTML page.

The HTML report is self-contained (the pictures are embedded as data: URIs), so it can be mailed
or attached to a CI run as one file.
"""

from __future__ import annotations

import base64
import html
import io
import json
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from hilbridge.check.engine import CheckResult, Divergence
from hilbridge.errors import HilbridgeError, SourceLocation
from hilbridge.files import write_atomic
from hilbridge.machine.palette import RF_PALETTE
from hilbridge.toolchain.disasm import decode

DISASSEMBLY_CONTEXT = 6  # instructions shown before and after the PC
DIFF_COLOUR = (255, 0, 255)
SCALE = 2
STYLE = (
    "body{font-family:sans-serif;margin:2em;max-width:1100px}"
    "pre{background:#f6f8fa;padding:.6em;overflow-x:auto}"
    "img{max-width:100%;image-rendering:pixelated}"
    "td,th{padding:.2em .8em;text-align:left;vertical-align:top}"
    ".verdict{font-size:1.4em;font-weight:bold}"
)


def disassembly_around(program: bytes, pc: int, context: int = DISASSEMBLY_CONTEXT) -> list[str]:
    """Lines of the program around `pc` ("=>" marks it), decoded from the start of its 256-byte page
    so that instruction boundaries line up as the CPU ran them (mostly: data in code can misalign)."""
    start = pc & ~0xFF
    if start < 0x400 <= pc:
        start = 0x400
    lines = decode(program[start : min(len(program), start + 0x200)], start)
    at = next(
        (index for index, line in enumerate(lines) if line.address <= pc < line.address + len(line.data)), 0
    )
    out = []
    for line in lines[max(0, at - context) : at + context + 1]:
        code = " ".join(f"{byte:02X}" for byte in line.data)
        operands = ", ".join(line.operand_texts({}))
        mark = "=>" if line.address <= pc < line.address + len(line.data) else "  "
        out.append(f"{mark} {line.address:03X}  {code:<6} {line.mnemonic} {operands}".rstrip())
    return out


def _rgb(frame: np.ndarray) -> np.ndarray:
    return RF_PALETTE.astype(np.uint8).reshape(-1, 3)[frame & 0x0F]


def side_by_side(expected: np.ndarray, actual: np.ndarray, scale: int = SCALE) -> Image.Image:
    """The emulator's picture, the console's, and a mask of the differing pixels, left to right."""
    differs = expected != actual
    mask = np.zeros((*expected.shape, 3), np.uint8)
    mask[differs] = DIFF_COLOUR
    gap = np.full((expected.shape[0], 4, 3), 128, np.uint8)
    strip = np.concatenate([_rgb(expected), gap, _rgb(actual), gap, mask], axis=1)
    image = Image.fromarray(np.ascontiguousarray(strip), mode="RGB")
    return image.resize((image.width * scale, image.height * scale), Image.NEAREST)


def png_bytes(image: Image.Image) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


def divergence_dict(divergence: Divergence) -> dict[str, Any]:
    program = divergence.program
    data = {
        "frame": divergence.frame,
        "cycle": divergence.cycle,
        "frame_cycle": divergence.frame_cycle,
        "kind": divergence.kind,
        "address": divergence.address,
        "expected": divergence.expected,
        "actual": divergence.actual,
        "detail": divergence.detail,
        "pc": divergence.pc,
        "pc_source": divergence.pc_source,
        "disassembly": disassembly_around(program, divergence.pc) if divergence.pc is not None else [],
        "expected_events": divergence.expected_window,
        "actual_events": divergence.actual_window,
        "picture_frame": divergence.picture_frame,
    }
    if divergence.expected_picture is not None and divergence.actual_picture is not None:
        data["pixels_differing"] = int(
            np.count_nonzero(divergence.expected_picture != divergence.actual_picture)
        )
    return data


def result_dict(result: CheckResult) -> dict[str, Any]:
    """Everything the check found, as plain JSON data."""
    header = result.header
    return {
        "verdict": result.verdict,
        "summary": result.summary(),
        "frames_requested": result.frames_requested,
        "frames_compared": result.frames_compared,
        "first_frame": result.first_frame,
        "last_frame": result.last_frame,
        "marker": result.marker,
        "marker_text": result.marker_text,
        "tolerance_cycles": result.tolerance,
        "region": result.region,
        "kinds": list(result.kinds),
        "source": {
            "source": header.source if header else "",
            "adapter": header.adapter if header else "",
            "cart_sha1": header.cart_sha1 if header else "",
            "mapper": header.mapper if header else "",
            "bios": header.bios if header else "",
        },
        "pictures": result.pictures,
        "pictures_compared": result.pictures_compared,
        "pictures_off": result.pictures_off,
        "gaps": result.gaps.ranges,
        "not_visible_on_the_slot": result.unseen.ranges,
        "input_free": result.input_free.ranges,
        "notes": result.notes,
        "seconds": round(result.seconds, 3),
        "divergence": divergence_dict(result.divergence) if result.divergence else None,
    }


def text_report(result: CheckResult) -> str:
    """What the CLI prints: the verdict line, then the details that explain it."""
    lines = [result.summary(), f"frames cut at {result.marker_text}"]
    lines += [f"gap: {text}" for text in result.gaps.text()]
    lines += [f"not visible on the slot: {text}" for text in result.unseen.text()]
    if result.pictures_off:
        lines.append(f"pictures not compared: {result.pictures_off}")
    lines += [f"note: {note}" for note in result.notes]
    free = result.input_free.text()
    if free:
        lines.append(
            "input-free (nothing held; a real console's controls are not on the slot): " + "; ".join(free)
        )
    divergence = result.divergence
    if divergence is not None:
        lines.append(f"detail: {divergence.detail}")
        if divergence.pc is not None:
            lines.append(f"emulator PC {divergence.pc:03X}h ({divergence.pc_source}):")
            lines += ["  " + line for line in disassembly_around(divergence.program, divergence.pc)]
        lines.append("last bus events, emulator | console:")
        width = max((len(text) for text in divergence.expected_window), default=0)
        for index in range(max(len(divergence.expected_window), len(divergence.actual_window))):
            mine = divergence.expected_window[index] if index < len(divergence.expected_window) else ""
            theirs = divergence.actual_window[index] if index < len(divergence.actual_window) else ""
            lines.append(f"  {mine:<{width}} | {theirs}")
        lines.append(f"  {divergence.expected:<{width}} | {divergence.actual}   <- first difference")
    return "\n".join(lines)


def _data_uri(data: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(data).decode("ascii")


def html_report(result: CheckResult, title: str) -> str:
    """One self-contained page: verdict, frame ranges, divergence with disassembly and pictures."""
    data = result_dict(result)
    esc = html.escape
    colour = {"equal": "#1a7f37", "diverged": "#cf222e"}.get(result.verdict, "#9a6700")
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'>",
        f"<title>hilbridge check: {esc(title)}</title>",
        f"<style>{STYLE}</style></head><body>",
        f"<h1>hilbridge check: {esc(title)}</h1>",
        f"<p class='verdict' style='color:{colour}'>{esc(result.summary())}</p>",
        "<table>",
    ]
    rows = [
        ("frames compared", f"{result.frames_compared} of {result.frames_requested}"),
        ("frame marker", result.marker_text),
        ("region", result.region),
        ("captured", ", ".join(result.kinds)),
        ("source", f"{data['source']['source']} {data['source']['adapter']}".strip()),
        ("cycle tolerance", str(result.tolerance)),
        ("pictures", f"{result.pictures}: {result.pictures_compared} compared pixel by pixel"),
    ]
    if result.pictures_off:
        rows.append(("pictures not compared", result.pictures_off))
    rows += [("gap", text) for text in result.gaps.text()]
    rows += [("not visible on the slot", text) for text in result.unseen.text()]
    rows += [("input-free", text) for text in result.input_free.text()]
    rows += [("note", note) for note in result.notes]
    parts += [f"<tr><th>{esc(name)}</th><td>{esc(value)}</td></tr>" for name, value in rows]
    parts.append("</table>")
    divergence = result.divergence
    if divergence is not None:
        info = data["divergence"]
        parts.append("<h2>First divergence</h2><table>")
        for name in ("frame", "cycle", "frame_cycle", "kind", "expected", "actual", "detail"):
            parts.append(f"<tr><th>{esc(name)}</th><td>{esc(str(info[name]))}</td></tr>")
        parts.append("</table>")
        if divergence.pc is not None:
            parts.append(f"<h3>Emulator PC {divergence.pc:03X}h ({esc(divergence.pc_source)})</h3>")
            parts.append("<pre>" + esc("\n".join(info["disassembly"])) + "</pre>")
        if divergence.expected_picture is not None and divergence.actual_picture is not None:
            image = side_by_side(divergence.expected_picture, divergence.actual_picture)
            parts.append(
                f"<h3>Video frame {divergence.picture_frame}: emulator | console | differing pixels</h3>"
                f"<img alt='pictures' src='{_data_uri(png_bytes(image))}'>"
            )
        parts.append("<h3>Last bus events</h3><table><tr><th>emulator</th><th>console</th></tr>")
        for index in range(max(len(divergence.expected_window), len(divergence.actual_window))):
            mine = divergence.expected_window[index] if index < len(divergence.expected_window) else ""
            theirs = divergence.actual_window[index] if index < len(divergence.actual_window) else ""
            parts.append(f"<tr><td><code>{esc(mine)}</code></td><td><code>{esc(theirs)}</code></td></tr>")
        parts.append(
            f"<tr><td><code><b>{esc(divergence.expected)}</b></code></td>"
            f"<td><code><b>{esc(divergence.actual)}</b></code></td></tr></table>"
        )
    parts.append("</body></html>")
    return "\n".join(parts)


def write_report(result: CheckResult, directory: str | Path, title: str) -> Path:
    """Write report.html, report.json and (at a divergence with pictures) pictures.png into
    `directory`; returns the HTML file's path."""
    folder = Path(directory)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        divergence = result.divergence
        if (
            divergence is not None
            and divergence.expected_picture is not None
            and divergence.actual_picture is not None
        ):
            image = side_by_side(divergence.expected_picture, divergence.actual_picture)
            write_atomic(folder / "pictures.png", png_bytes(image))
        write_atomic(folder / "report.json", json.dumps(result_dict(result), indent=2).encode())
        page = folder / "report.html"
        write_atomic(page, html_report(result, title).encode("utf-8"))
    except OSError as error:
        raise HilbridgeError(
            f"cannot write the report: {error.strerror or error}", SourceLocation(str(folder))
        ) from None
    return page
