"""Shipped cartridge profiles (JSON, one per cartridge; docs/bridge.md)."""
