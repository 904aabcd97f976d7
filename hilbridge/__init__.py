"""hilbridge: hardware-in-the-loop test and bridge tool for the Magnavox Odyssey² / Philips Videopac."""

__version__ = "0.1.0"
