"""Online distillation losses on served feedback: a drafter's predictions at the committed positions against the
target's top-k distributions that chose those tokens (`online/feedback.py`).

The teacher is the target's distribution renormalised on what the drafter can emit among the kept tokens (the
EAGLE-3 rule of renormalising on the draft vocabulary, with the dropped tail also left out); minimising the soft
cross-entropy against it is minimising the forward KL from it. `positions`: "all" committed positions, or
"mismatch" (OSD): only where the drafter's current greedy prediction differs from the target's top token.

Parameters come as a dict so an updater can evaluate the loss at any copy of the weights (`functional_call`).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch.func import functional_call

from online.feedback import Feedback, TopK, has_teacher, sparse_teacher
from training.ttt import shift_left

STEP_WEIGHT = 0.8  # EAGLE-3: step j weighs 0.8^j


def draft_index(t2d: torch.Tensor) -> torch.Tensor:
    """t2d [V] bool -> [V] int64: the draft id of each target token (draft ids keep the target order), -1 if none."""
    return torch.where(t2d, t2d.long().cumsum(0) - 1, torch.full_like(t2d, -1, dtype=torch.long))


def _masked_soft_ce(logits: torch.Tensor, teacher: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
    """logits [N,Vs], teacher [N,Vs] (-inf where absent), keep [N] bool -> mean soft CE over kept rows (0 if none)."""
    keep = keep & has_teacher(teacher)
    if not keep.any():
        return logits.sum() * 0.0
    p = teacher[keep].softmax(-1)
    return -(p * F.log_softmax(logits[keep].float(), -1)).sum(-1).mean()


def _rows(t: TopK, idx: torch.Tensor) -> TopK:
    return TopK(t.logp[idx], t.ids[idx])


def eagle3_loss(head: torch.nn.Module, params: dict[str, torch.Tensor], fb: Feedback, steps: int = 3,
                positions: str = "all") -> torch.Tensor:
    """Training-time-test loss of an EAGLE-3 head on one served request (needs fb.feats).

    Step j at index t reads x_{t+1+j} and predicts x_{t+2+j}; its teacher is feedback row t+2+j-P."""
    tokens = fb.tokens[None]  # [1,T]
    T, P = tokens.shape[1], fb.prompt_len
    dtype = next(iter(params.values())).dtype
    aux = fb.aux().to(dtype)  # [1,T,3H]; last is pad
    response = (torch.arange(T) >= P)[None].long()  # [1,T]
    _, step_logits = functional_call(head, params, (aux, tokens, torch.ones_like(tokens), steps),
                                     {"loss_mask": response}, strict=False)
    to_draft = draft_index(head.t2d)
    total = aux.new_zeros(())
    for j, logits in enumerate(step_logits):  # [N_j,Vd] at indices t with x_{t+2+j} a response token
        t = shift_left(response, 2 + j)[0].nonzero()[:, 0]  # [N_j]
        teacher_rows = _rows(fb.target, t + 2 + j - P)
        teacher = sparse_teacher(teacher_rows, to_draft, logits.shape[-1])
        keep = torch.ones(len(t), dtype=torch.bool)
        if positions == "mismatch":
            keep = head.draft_ids[logits.argmax(-1)] != teacher_rows.ids[:, 0]
        total = total + STEP_WEIGHT**j * _masked_soft_ce(logits, teacher, keep)
    return total


def llama_loss(model: torch.nn.Module, params: dict[str, torch.Tensor], fb: Feedback,
               positions: str = "all") -> torch.Tensor:
    """Next-token distillation of an independent drafter on one served request: logits row u-1 predicts token u."""
    tokens = fb.tokens[None]
    P = fb.prompt_len
    logits = functional_call(model, params, (), {"input_ids": tokens}, strict=False).logits[0, P - 1:-1]  # [T-P,V]
    teacher = sparse_teacher(fb.target, torch.arange(logits.shape[-1]), logits.shape[-1])
    keep = torch.ones(logits.shape[0], dtype=torch.bool)
    if positions == "mismatch":
        keep = logits.argmax(-1) != fb.target.ids[:, 0]
    return _masked_soft_ce(logits, teacher, keep)


def check_positions(positions: str) -> None:
    if positions not in ("all", "mismatch"):
        raise ValueError(f"positions must be all or mismatch, got {positions!r}")
