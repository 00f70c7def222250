"""Drafter training: EAGLE-3 heads, independent Llama drafters, losses, the accelerate loop, eval and export."""
