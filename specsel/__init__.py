"""Speculative decoding (`specsel.decoding`) and online drafter selection over a pool (`specsel.selection`)."""
