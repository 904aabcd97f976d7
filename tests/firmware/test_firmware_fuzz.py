"""Fuzzing the emulated chip: random, truncated and CRC-valid-but-wrong frames over USB CDC into the
firmware booted in rp2040js. Every frame that docs/protocol.md says is answered gets its reply (an
ERROR with the expected code where the frame is wrong), the dropped ones are counted in frames_bad,
and the firmware stays responsive: the HELLO after them and a new session are answered."""

from __future__ import annotations

import random
import time

import pytest
from firmware_loop import EMULATED_LINK, FLASH_SERIAL, served_firmware
from fuzz_frames import assert_fuzz_replies, fuzz_frames

from hilbridge.link.adapter import Adapter
from hilbridge.link.protocol import (
    MESSAGES,
    PROTOCOL_VERSION,
    FrameDecoder,
    encode_frame,
    pack_fields,
)
from hilbridge.link.transport import SerialTransport

pytestmark = pytest.mark.slow
FRAMES = 300
ERROR_TYPE = MESSAGES["ERROR"].reply_type
HELLO = MESSAGES["HELLO"]


def test_fuzzed_frames_get_the_replies_the_protocol_gives_and_the_chip_stays_responsive():
    data, expected = fuzz_frames(random.Random(1010), FRAMES)
    data += encode_frame(HELLO.id, 77, pack_fields(HELLO.request, {"host_protocol": PROTOCOL_VERSION}))
    with served_firmware() as url:
        transport = SerialTransport(url)
        transport.write(data)
        decoder, replies = FrameDecoder(), []
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline and not any(
            f.seq == 77 and f.type == HELLO.reply_type for f in replies
        ):
            replies += [frame for frame in decoder.feed(transport.read(0.5)) if frame.type & 0x80]
        transport.close()
        assert decoder.bad == 0
        assert_fuzz_replies(replies, expected)
        with Adapter(SerialTransport(url), **EMULATED_LINK) as adapter:
            assert adapter.info.serial == FLASH_SERIAL
            assert adapter.status()["frames_bad"] >= sum(1 for want in expected if want is None)
