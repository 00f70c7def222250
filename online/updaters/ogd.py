"""Online gradient descent on a drafter: w <- w - eta * d_t, d_t the gradient (sgd) or Adam's direction.

One step per feedback round on f_t = the distillation loss of that round's feedback. The optimizer's state (Adam
moments, step count) lives as long as the updater: it is never rebuilt between rounds, so there is no warm-up restart
and no lost momentum. Parameters are a dict name -> tensor; the loss is a function of that dict (use
`torch.func.functional_call` to run a module on it), which lets the ensemble keep several copies of one model.
"""

from __future__ import annotations

import copy
from collections.abc import Callable

import torch

from online.updaters.vocab import remap_rows

Params = dict[str, torch.Tensor]
LossFn = Callable[[Params], torch.Tensor]


def leaf_copy(params: Params) -> Params:
    """Detached float copies that require grad: the updater's own weights."""
    return {k: v.detach().clone().float().requires_grad_(True) for k, v in params.items()}


def clipped_grads(loss: torch.Tensor, params: Params, clip: float) -> list[torch.Tensor]:
    """Gradients of `loss` w.r.t. params, scaled so that their global L2 norm is <= clip (clip <= 0: unclipped)."""
    grads = torch.autograd.grad(loss, list(params.values()), allow_unused=True)
    grads = [torch.zeros_like(p) if g is None else g for g, p in zip(grads, params.values())]
    if clip > 0:
        norm = torch.sqrt(sum((g.float() ** 2).sum() for g in grads))
        scale = min(1.0, clip / (float(norm) + 1e-12))
        grads = [g * scale for g in grads]
    return grads


class OGD:
    """optimizer 'sgd' (the textbook OGD step) or 'adam' (the paper's EAGLE setting: betas 0.9 / 0.95)."""

    def __init__(self, params: Params, lr: float, optimizer: str = "adam", betas: tuple[float, float] = (0.9, 0.95),
                 clip: float = 0.5):
        if lr <= 0:
            raise ValueError(f"learning rate must be > 0, got {lr}")
        if optimizer not in ("sgd", "adam"):
            raise ValueError(f"optimizer must be sgd or adam, got {optimizer!r}")
        self.params = leaf_copy(params)
        self.lr, self.clip = lr, clip
        self.opt = (torch.optim.Adam(self.params.values(), lr=lr, betas=betas) if optimizer == "adam"
                    else torch.optim.SGD(self.params.values(), lr=lr))
        self.rounds = 0

    def step(self, loss_fn: LossFn, epochs: int = 1) -> float:
        """f_t -> `epochs` updates on it (passes over the round's records; OnlineSpec's EAGLE-3 setting is 2);
        returns f_t at the weights the round started from, w_t."""
        first = None
        for _ in range(epochs):
            loss = loss_fn(self.params)
            grads = clipped_grads(loss, self.params, self.clip)
            for p, g in zip(self.params.values(), grads):
                p.grad = g
            self.opt.step()
            first = float(loss.detach()) if first is None else first
        self.rounds += 1
        return first

    def served(self) -> Params:
        return {k: v.detach() for k, v in self.params.items()}

    @torch.no_grad()
    def remap(self, key: str, index: torch.Tensor, fill: torch.Tensor) -> None:
        """Rows of `key` to a new draft vocabulary (online/updaters/vocab.py): kept rows move with their optimizer
        state, new rows (index -1) start at `fill` with zero moments."""
        p = self.params[key]
        st = self.opt.state.get(p, {})
        for name, v in list(st.items()):
            if torch.is_tensor(v) and v.shape == p.shape:
                st[name] = remap_rows(v, index, torch.zeros_like(v))
        p.copy_(remap_rows(p, index, fill))

    def state(self) -> dict:
        params = {k: v.clone() for k, v in self.served().items()}
        return {"params": params, "opt": copy.deepcopy(self.opt.state_dict()), "rounds": self.rounds}

    def load_state(self, state: dict) -> None:
        with torch.no_grad():
            for k, v in state["params"].items():
                self.params[k].copy_(v)
        self.opt.load_state_dict(state["opt"])
        self.rounds = state["rounds"]
