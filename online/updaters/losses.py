"""Online distillation losses on served feedback: a drafter's predictions at the committed positions against the
target's top-k distributions that chose those tokens (`online/trainer/feedback.py`).

The teacher is the target's distribution renormalised on what the drafter can emit among the kept tokens (the
EAGLE-3 rule of renormalising on the draft vocabulary, with the dropped tail also left out); minimising the soft
cross-entropy against it is minimising the forward KL from it. `positions`: "all" committed positions, or
"mismatch" (OSD): only where the drafter's current greedy prediction differs from the target's top token.

Parameters come as a dict so an updater can evaluate the loss at any copy of the weights (`functional_call`).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from draftpool.models.kind import DrafterKind, Steps
from online.trainer.feedback import Feedback, TopK, has_teacher, sparse_teacher

STEP_WEIGHT = 0.8  # EAGLE-3: step j weighs 0.8^j


def _masked_soft_ce(logits: torch.Tensor, teacher: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
    """logits [N,Vs], teacher [N,Vs] (-inf where absent), keep [N] bool -> mean soft CE over kept rows (0 if none)."""
    keep = keep & has_teacher(teacher)
    if not keep.any():
        return logits.sum() * 0.0
    p = teacher[keep].softmax(-1)
    return -(p * F.log_softmax(logits[keep].float(), -1)).sum(-1).mean()


def _rows(t: TopK, idx: torch.Tensor) -> TopK:
    return TopK(t.logp[idx], t.ids[idx])


def columns_index(steps: Steps, vocab: int) -> torch.Tensor:
    """[V] int64: the logit column of each target token (-1 where the drafter cannot emit it)."""
    if steps.columns is None:
        return torch.arange(vocab)
    index = torch.full((vocab,), -1, dtype=torch.long, device=steps.columns.device)
    index[steps.columns] = torch.arange(steps.columns.numel(), device=steps.columns.device)
    return index


def request_steps(kind: DrafterKind, model: torch.nn.Module, params: dict[str, torch.Tensor] | None, fb: Feedback,
                  depth: int, response_only: bool) -> Steps:
    """The drafter's teacher-forced steps over one served request (with `params` in place of its weights); with
    `response_only` only the rows that predict generated tokens."""
    tokens = fb.tokens[None]  # [1,T]
    feats = None
    if kind.aux_layers(model) is not None:
        feats = fb.aux().to(next(iter(params.values())).dtype if params else torch.float32)  # [1,T,3H]; last is pad
    response = (torch.arange(tokens.shape[1]) >= fb.prompt_len)[None].long()  # [1,T]
    return kind.steps(model, feats, tokens, torch.ones_like(tokens), depth,
                      loss_mask=response if response_only else None, params=params)


def distill_loss(kind: DrafterKind, model: torch.nn.Module, params: dict[str, torch.Tensor], fb: Feedback,
                 steps: int = 3, positions: str = "all") -> torch.Tensor:
    """The drafter's distillation loss on one served request: per draft step (a next-token drafter has one) the soft
    cross-entropy of its predictions of the generated tokens against the feedback rows that chose them, step j
    weighted 0.8^j. (EAGLE-3 heads: the training-time test on served feedback; it needs fb.feats.)"""
    P = fb.prompt_len
    s = request_steps(kind, model, params, fb, steps, response_only=True)
    response = (torch.arange(fb.tokens.numel()) >= P)[None].long()  # [1,T]
    total = s.logits[0].new_zeros(())
    for j, logits in enumerate(s.logits):  # [N_j,Vs] at the rows t whose token t+offset+j is generated
        t = s.mask(response, j)[0].nonzero()[:, 0]  # [N_j]
        teacher_rows = _rows(fb.target, t + s.predicts(j) - P)
        teacher = sparse_teacher(teacher_rows, columns_index(s, kind.vocab_size(model)), logits.shape[-1])
        keep = torch.ones(len(t), dtype=torch.bool)
        if positions == "mismatch":
            keep = s.target_ids(logits.argmax(-1)) != teacher_rows.ids[:, 0]
        total = total + STEP_WEIGHT**j * _masked_soft_ce(logits, teacher, keep)
    return total


def check_positions(positions: str) -> None:
    if positions not in ("all", "mismatch"):
        raise ValueError(f"positions must be all or mismatch, got {positions!r}")
