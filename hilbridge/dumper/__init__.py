"""Dumping cartridges through an adapter (`dump_cartridge`) and loading images into its emulation."""
