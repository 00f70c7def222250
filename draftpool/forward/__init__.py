"""The target forward at the bottom of the stack (used by decoding, self-distillation and the feature cache):
the lean forward and its probe, packed linears, the KV-cache slot forward, sampling transforms and timing."""
