"""DPO on step preference pairs (Online-LR): the sigmoid loss on summed completion log-probabilities against a
frozen reference copy of the drafter.

loss = -log sigmoid(beta * ((log pi(c|x) - log ref(c|x)) - (log pi(r|x) - log ref(r|x)))), averaged over pairs
(Rafailov et al.; beta 0.1 in OnlineSpec's Online-LR). trl 1.16 computes this inside `DPOTrainer` only, so the loss
is written here and tested against a plain computation of that formula; the per-token log-probabilities use trl's
`selective_log_softmax` (gathers the chosen ids without materialising a full log-softmax copy per row).
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F
from trl.trainer.utils import selective_log_softmax


def completion_logps(model, prompts: list[list[int]], completions: list[list[int]], pad_id: int) -> torch.Tensor:
    """Summed log-probabilities of each completion after its prompt, ids concatenated as they are (no EOS added,
    no re-tokenisation) -> [N]. One right-padded batch; padding is masked out of attention and of the sums."""
    if len(prompts) != len(completions) or not prompts:
        raise ValueError(f"need as many prompts as completions (>= 1), got {len(prompts)} and {len(completions)}")
    if any(not c for c in completions) or any(not p for p in prompts):
        raise ValueError("every prompt and completion needs at least one token")
    seqs = [p + c for p, c in zip(prompts, completions)]
    width = max(map(len, seqs))
    device = next(model.parameters()).device
    ids = torch.full((len(seqs), width), pad_id, dtype=torch.long, device=device)
    attn = torch.zeros_like(ids)
    scored = torch.zeros_like(ids, dtype=torch.bool)  # [N,T] positions whose token is a completion token
    for i, (p, s) in enumerate(zip(prompts, seqs)):
        ids[i, :len(s)] = torch.tensor(s, device=device)
        attn[i, :len(s)] = 1
        scored[i, len(p):len(s)] = True
    # rule: project only the positions that predict a completion token (a step is ~30 of a ~400-token context, and
    # the vocabulary projection dominates a small drafter's cost); decoder + output embedding is transformers' API
    hidden = model.get_decoder()(input_ids=ids, attention_mask=attn).last_hidden_state  # [N,T,H]
    at = scored[:, 1:]  # [N,T-1]: position t predicts token t+1
    logits = model.get_output_embeddings()(hidden[:, :-1][at])  # [M,V], M = completion tokens in the batch
    logp = selective_log_softmax(logits.float(), ids[:, 1:][at])  # [M]
    rows = torch.arange(len(seqs), device=device)[:, None].expand_as(at)[at]  # [M] the pair of each token
    return torch.zeros(len(seqs), device=device, dtype=logp.dtype).index_add(0, rows, logp)  # [N]


def dpo_loss(policy_chosen: torch.Tensor, policy_rejected: torch.Tensor, ref_chosen: torch.Tensor,
             ref_rejected: torch.Tensor, beta: float = 0.1) -> torch.Tensor:
    """Sigmoid DPO loss over [N] summed log-probabilities -> scalar mean."""
    if beta <= 0:
        raise ValueError(f"DPO beta must be > 0, got {beta}")
    margin = (policy_chosen - ref_chosen) - (policy_rejected - ref_rejected)  # [N]
    return -F.logsigmoid(beta * margin).mean()


class PairUpdater:
    """The shared loop of the step drafter's online updates: AdamW (betas 0.9 / 0.95, gradient-norm clip) over a
    round's pairs in mini-batches of `batch`, `epochs` passes; the optimizer's moments carry over between rounds.
    Subclasses give the loss of a mini-batch (`loss`) and what a round fixes before it trains (`prepare`)."""

    def __init__(self, model: torch.nn.Module, pad_id: int, lr: float, epochs: int, batch: int, clip: float = 1.0):
        if not lr > 0 or epochs < 1 or batch < 1:
            raise ValueError(f"lr must be > 0, epochs and batch >= 1 (got lr={lr}, epochs={epochs}, batch={batch})")
        self.model, self.pad_id, self.clip, self.epochs, self.batch = model, pad_id, clip, epochs, batch
        self.opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=lr, betas=(0.9, 0.95))
        self.rounds = 0

    def prepare(self, pairs: list) -> None:
        """Called once per round before training (e.g. DPO's reference scores)."""

    def loss(self, pairs: list, sl: slice) -> torch.Tensor:
        raise NotImplementedError

    def round(self, pairs: list, on_step: Callable[[], None] | None = None) -> list[float]:
        """pairs: objects with prompt / chosen / rejected token ids -> the mean loss of each epoch. `on_step` runs
        after every optimizer step (the trainer process's heartbeat: a round can outlast the hang timeout)."""
        if not pairs:
            return []
        self.model.eval()  # dropout off: the reference and the policy score alike
        self.prepare(pairs)
        means = []
        for _ in range(self.epochs):
            total = 0.0
            for s in range(0, len(pairs), self.batch):
                sl = slice(s, s + self.batch)
                loss = self.loss(pairs, sl)
                self.opt.zero_grad()
                loss.backward()
                if self.clip > 0:
                    torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.clip)
                self.opt.step()
                total += float(loss.detach()) * len(pairs[sl])
                if on_step is not None:
                    on_step()
            means.append(total / len(pairs))
        self.rounds += 1
        return means

    def state(self) -> dict:
        return {"opt": self.opt.state_dict(), "rounds": self.rounds}

    def load_state(self, state: dict) -> None:
        self.opt.load_state_dict(state["opt"])
        self.rounds = state["rounds"]


class DPOUpdater(PairUpdater):
    """Online-LR's update of a step drafter: the sigmoid DPO loss, the reference being a frozen copy of the drafter
    as the round starts (its scores are computed once per round, before any step)."""

    def __init__(self, model: torch.nn.Module, pad_id: int, lr: float = 5e-7, beta: float = 0.1, epochs: int = 3,
                 batch: int = 4, clip: float = 1.0):
        if not beta > 0:
            raise ValueError(f"DPO beta must be > 0, got {beta}")
        super().__init__(model, pad_id, lr, epochs, batch, clip)
        self.beta = beta

    def prepare(self, pairs: list) -> None:
        prompts = [p.prompt for p in pairs]
        with torch.no_grad():  # rule: the reference is the drafter as this round starts
            self.ref_c = completion_logps(self.model, prompts, [p.chosen for p in pairs], self.pad_id)
            self.ref_r = completion_logps(self.model, prompts, [p.rejected for p in pairs], self.pad_id)

    def loss(self, pairs: list, sl: slice) -> torch.Tensor:
        prompts = [p.prompt for p in pairs[sl]]
        return dpo_loss(completion_logps(self.model, prompts, [p.chosen for p in pairs[sl]], self.pad_id),
                        completion_logps(self.model, prompts, [p.rejected for p in pairs[sl]], self.pad_id),
                        self.ref_c[sl], self.ref_r[sl], self.beta)
