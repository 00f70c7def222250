"""Speculative decoding and online drafter selection over a pool (filled by the next issues)."""
