"""Decoding: the one decode loop, the target runner, the drafters, sampling and verification rules."""
