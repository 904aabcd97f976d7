"""MAME 0.251 as an independent oracle: run test cartridges on it and compare bus traces and frames."""
