"""Shipped prompt sets, one module per domain, each with `prompts() -> list[str]`."""
