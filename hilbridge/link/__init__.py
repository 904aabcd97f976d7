"""The host side of the adapter link: protocol tables, framing, transports, `Adapter`, discovery.

The protocol is specified in `docs/protocol.md` from the same tables (`messages.tsv`, `codes.tsv`).
"""
