"""Scenarios generated from the operation registry (parity.ops): `ops.<operation>[layout=...,dtype=...]`.

By default one (layout, dtype) variant of each operation, drawn with a fixed seed; PARITY_OPS=full runs the whole
product (the nightly workflow does), PARITY_OPS=N draws N per operation (README, "Operation registry")."""
from parity.ops import generate

generate()
