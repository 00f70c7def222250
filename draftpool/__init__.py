"""draftpool: train, select and adapt online pools of speculative-decoding drafters."""

__version__ = "0.1.0"
