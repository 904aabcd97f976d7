"""The issue's full fuzz of the emulated chip: 10,000 random, truncated and CRC-valid-but-wrong frames
over USB CDC into the firmware booted in rp2040js, streamed in pieces while the chip answers (no
waiting for replies), ~30 s on one core. Every answerable frame gets the reply docs/protocol.md gives,
each dropped one is counted in frames_bad, and the chip answers the HELLO after them and a new
session."""

from __future__ import annotations

import random
import time

import pytest
from firmware_loop import EMULATED_LINK, FLASH_SERIAL, firmware_chip
from fuzz_frames import assert_fuzz_replies, fuzz_frames

from hilbridge.link.adapter import Adapter
from hilbridge.link.protocol import MESSAGES, PROTOCOL_VERSION, FrameDecoder, encode_frame, pack_fields
from hilbridge.link.transport import SerialTransport

pytestmark = pytest.mark.slow
FRAMES = 10_000
PIECE = 4096  # bytes written at a time: frames cut anywhere, the next piece sent while replies arrive
HELLO = MESSAGES["HELLO"]


def test_ten_thousand_fuzzed_frames_get_the_protocols_replies_and_the_chip_stays_responsive():
    data, expected = fuzz_frames(random.Random(20261202), FRAMES)
    data += encode_frame(HELLO.id, 77, pack_fields(HELLO.request, {"host_protocol": PROTOCOL_VERSION}))
    url = firmware_chip().url
    transport = SerialTransport(url)
    decoder, replies = FrameDecoder(), []
    deadline = time.monotonic() + 600
    for at in range(0, len(data), PIECE):
        transport.write(data[at : at + PIECE])
        replies += [frame for frame in decoder.feed(transport.read(0.0)) if frame.type & 0x80]
    while time.monotonic() < deadline and not any(
        f.seq == 77 and f.type == HELLO.reply_type for f in replies
    ):
        replies += [frame for frame in decoder.feed(transport.read(0.5)) if frame.type & 0x80]
    transport.close()
    assert decoder.bad == 0
    assert_fuzz_replies(replies, expected)
    with Adapter(SerialTransport(url), **EMULATED_LINK) as adapter:
        assert adapter.info.serial == FLASH_SERIAL
        assert adapter.status()["frames_bad"] == sum(1 for want in expected if want is None)
