"""OSD-LR: token-level distillation of the step drafter on the target's steps (the baseline Online-LR is compared
with). A round is supervised fine-tuning on the same pairs DPO sees: cross-entropy of the target's step (the
chosen completion: the target's greedy tokens, i.e. hard-label distillation of its argmax) after the exact context,
averaged over the step's tokens. The rejected step is not used. OnlineSpec's SFT setting: one epoch per round at
the DPO learning rate."""

from __future__ import annotations

import torch

from online.lookahead.dpo import PairUpdater, completion_logps


class SFTUpdater(PairUpdater):
    def __init__(self, model: torch.nn.Module, pad_id: int, lr: float = 5e-7, epochs: int = 1, batch: int = 4,
                 clip: float = 1.0):
        super().__init__(model, pad_id, lr, epochs, batch, clip)

    def loss(self, pairs: list, sl: slice) -> torch.Tensor:
        chosen = [p.chosen for p in pairs[sl]]
        logp = completion_logps(self.model, [p.prompt for p in pairs[sl]], chosen, self.pad_id)  # [N] summed
        lengths = torch.tensor([len(c) for c in chosen], dtype=logp.dtype, device=logp.device)
        return -(logp / lengths).mean()  # rule: mean token NLL of each step, then over steps
