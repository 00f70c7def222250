"""Sampling keyed by seed and position (Gumbel-max coupling): a seeded answer that does not depend on the drafts.

A token at sequence position `pos` is argmax(log p + G), G [V] standard Gumbel noise drawn from (seed, pos) alone.
That is an exact sample of p (the Gumbel-max trick), and it is the same token whoever proposed it: the target's
verification accepts a draft token exactly when it equals this keyed sample, so the output is plain keyed sampling
token for token, whatever drafted and however many drafts were accepted. A drafter that draws its own tokens with
the same noise (argmax(log q + G)) agrees with the target whenever the two argmaxes meet: acceptance
P[argmax(log p + G) = argmax(log q + G)] >= (1 - TV) / (1 + TV), below rejection sampling's 1 - TV (the price of
reproducibility; docs/online.md has the measured one).
"""

from __future__ import annotations

import torch

_MASK = (1 << 63) - 1
_TINY = torch.finfo(torch.float32).tiny


def key(seed: int, pos: int) -> int:
    """(seed, position) -> a 63-bit generator seed (splitmix64's finaliser: nearby positions give unrelated keys)."""
    z = (seed * 0x9E3779B97F4A7C15 + (pos + 1) * 0xBF58476D1CE4E5B9) & ((1 << 64) - 1)
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & ((1 << 64) - 1)
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & ((1 << 64) - 1)
    return (z ^ (z >> 31)) & _MASK


class KeyedNoise:
    """The Gumbel noise of one seeded request. `choose(probs, pos)`: the keyed sample at a position; `draw(probs)`:
    the keyed sample at `cursor`, then the cursor moves one on (a drafter's chain: the loop sets the cursor to the
    position of its first draft)."""

    def __init__(self, seed: int, device: torch.device | str = "cpu", keep: int = 64):
        self.seed, self.device, self.keep = seed, torch.device(device), keep
        self.cursor = 0
        self._noise: dict[tuple[int, int], torch.Tensor] = {}  # (pos, V) -> [V]: a cycle asks for a position twice

    def gumbel(self, pos: int, vocab: int) -> torch.Tensor:
        """[vocab] standard Gumbel noise of this seed at `pos` (float32)."""
        noise = self._noise.get((pos, vocab))
        if noise is None:
            gen = torch.Generator(device=self.device).manual_seed(key(self.seed, pos))
            u = torch.rand(vocab, generator=gen, device=self.device).clamp_(min=_TINY)
            noise = -torch.log(-torch.log(u))  # rule: G = -log(-log U), U uniform in (0, 1)
            if len(self._noise) >= self.keep:
                self._noise.pop(next(iter(self._noise)))
            self._noise[(pos, vocab)] = noise
        return noise

    def choose(self, probs: torch.Tensor, pos: int) -> int:
        """probs [V] -> the keyed sample at `pos`: argmax(log p + G) (a token of zero probability never wins)."""
        p = probs.float().to(self.device)
        return int((p.log() + self.gumbel(pos, p.shape[-1])).argmax())

    def draw(self, probs: torch.Tensor) -> int:
        """probs [V] -> the keyed sample at the cursor; the cursor moves on."""
        tok = self.choose(probs, self.cursor)
        self.cursor += 1
        return tok
