"""Errors of the adapter link. All are `HilbridgeError`s: the CLI prints them and exits 2."""

from __future__ import annotations

from hilbridge.errors import HilbridgeError


class LinkError(HilbridgeError):
    """Anything that went wrong talking to an adapter."""


class FramingError(LinkError):
    """A frame that is not valid COBS, is too long, or fails its CRC: dropped, the link resynchronises."""


class ProtocolError(LinkError):
    """A frame with a valid CRC whose message id or payload does not match the message table."""


class LinkTimeout(LinkError):
    """The adapter did not answer a request, even after all retransmissions."""


class LinkDisconnected(LinkError):
    """The transport is gone (cable pulled, socket closed, pty hung up)."""


class DeviceNotFound(LinkError):
    """No adapter answers to the device name the user gave."""


class VersionMismatch(LinkError):
    """Host and adapter speak different protocol versions."""


class DeviceError(LinkError):
    """The adapter answered a request with an ERROR message."""

    def __init__(self, code: int, name: str, detail: str, request: str):
        super().__init__(f"adapter refused {request}: {name} ({code}): {detail}")
        self.code = code
        self.name = name
        self.detail = detail
