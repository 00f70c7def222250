"""The decode layer's error and warning: `SpecError` (a bad decoding setup or request) and `ReducedPrecisionWarning`
(speculative greedy decoding that is not token-exact in a 16-bit dtype)."""

from __future__ import annotations


class ReducedPrecisionWarning(UserWarning):
    """Speculative greedy decoding in bf16 / fp16: not token-exact against plain decoding in the same dtype."""


class SpecError(ValueError):
    """A bad decoding setup or request."""
