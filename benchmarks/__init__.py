"""Benchmarks: decoding speed, selection, online adaptation, data generation, the router (not installed)."""
