"""Optimistic online gradient descent (OnlineSpec Eq. 3): play w_t = w_hat_t - eta * h_t, then
w_hat_{t+1} = w_hat_t - eta * d_t with d_t the step direction at the played point; the hint h_{t+1} = d_t (the
previous direction).

Direction `sgd`: d_t = grad f_t(w_t), the textbook Eq. 3. Direction `adam` (default, like OGD's): d_t = Adam's
bias-corrected m_t / (sqrt(v_t) + 1e-8) of the clipped gradients, moments kept for the updater's lifetime. That is
Eq. 3 with a diagonal preconditioner, the same update as Optimistic Adam (Daskalakis et al. 2018,
w_{t+1} = w_t - 2 eta d_t + eta d_{t-1}). Without it the plain step on a drafter is ~1e-4 of Adam's at the same rate
(clipped gradients are tiny per weight): at rates where Adam learns, plain Eq. 3 does not move; at rates where it
moves, it is unstable.

When consecutive rounds' directions agree (a stream that stays in one domain) the played weights are already a step
ahead; the regret then depends on the hint error sum ||h_t - d_t||^2 instead of the horizon.
"""

from __future__ import annotations

import torch

from online.updaters.ogd import LossFn, Params, clipped_grads, leaf_copy
from online.updaters.vocab import remap_rows


def optimistic_update(w_hat: torch.Tensor, direction: torch.Tensor, lr: float) -> tuple[torch.Tensor, torch.Tensor]:
    """-> (w_hat_{t+1}, w_{t+1}) for one tensor."""
    w_hat = w_hat - lr * direction  # rule: the lazy iterate takes the direction seen at the played point
    return w_hat, w_hat - lr * direction  # rule: the next play moves ahead along the hint = this direction


def adam_direction(m: torch.Tensor, v: torch.Tensor, grad: torch.Tensor, t: int, betas: tuple[float, float],
                   eps: float = 1e-8) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Adam's moments after gradient number t (1-based) -> (m_t, v_t, d_t); all tensors of one shape."""
    b1, b2 = betas
    m = b1 * m + (1 - b1) * grad  # rule: first moment, an EMA of gradients
    v = b2 * v + (1 - b2) * grad * grad  # rule: second moment, an EMA of squared gradients
    return m, v, (m / (1 - b1**t)) / ((v / (1 - b2**t)).sqrt() + eps)  # rule: bias-corrected ratio


class OptimisticOGD:
    def __init__(self, params: Params, lr: float, optimizer: str = "adam", betas: tuple[float, float] = (0.9, 0.95),
                 clip: float = 0.5):
        if lr <= 0:
            raise ValueError(f"learning rate must be > 0, got {lr}")
        if optimizer not in ("sgd", "adam"):
            raise ValueError(f"optimizer must be sgd or adam, got {optimizer!r}")
        self.params = leaf_copy(params)  # w_t, the played weights (h_1 = 0, so w_1 = w_hat_1)
        self.w_hat = {k: v.detach().clone() for k, v in self.params.items()}
        self.lr, self.clip, self.optimizer, self.betas = lr, clip, optimizer, betas
        self.m = {k: torch.zeros_like(v) for k, v in self.w_hat.items()} if optimizer == "adam" else {}
        self.v = {k: torch.zeros_like(v) for k, v in self.w_hat.items()} if optimizer == "adam" else {}
        self.rounds = 0
        self.t = 0  # updates taken (Adam's bias correction); rounds * epochs

    def step(self, loss_fn: LossFn, epochs: int = 1) -> float:
        """f_t -> `epochs` optimistic updates on it (each pass one play and one hint); returns f_t(w_t)."""
        first = None
        for _ in range(epochs):
            loss = loss_fn(self.params)
            grads = clipped_grads(loss, self.params, self.clip)
            self.t += 1
            with torch.no_grad():
                for (k, p), g in zip(self.params.items(), grads):
                    d = g
                    if self.optimizer == "adam":
                        self.m[k], self.v[k], d = adam_direction(self.m[k], self.v[k], g, self.t, self.betas)
                    self.w_hat[k], played = optimistic_update(self.w_hat[k], d, self.lr)
                    p.copy_(played)
            first = float(loss.detach()) if first is None else first
        self.rounds += 1
        return first

    def served(self) -> Params:
        return {k: v.detach() for k, v in self.params.items()}

    @torch.no_grad()
    def remap(self, key: str, index: torch.Tensor, fill: torch.Tensor) -> None:
        """Rows of `key` to a new draft vocabulary: played and lazy iterates move with their tokens (new rows start
        at `fill`), Adam moments too (new rows: zero)."""
        self.params[key].copy_(remap_rows(self.params[key], index, fill))
        self.w_hat[key] = remap_rows(self.w_hat[key], index, fill)
        for d in (self.m, self.v):
            if key in d:
                d[key] = remap_rows(d[key], index, torch.zeros_like(d[key]))

    def state(self) -> dict:
        clone = lambda d: {k: v.clone() for k, v in d.items()}  # noqa: E731
        return {"params": clone(self.served()), "w_hat": clone(self.w_hat), "m": clone(self.m), "v": clone(self.v),
                "rounds": self.rounds, "t": self.t}

    def load_state(self, state: dict) -> None:
        with torch.no_grad():
            for k, v in state["params"].items():
                self.params[k].copy_(v)
        self.w_hat = {k: v.clone() for k, v in state["w_hat"].items()}
        self.m = {k: v.clone() for k, v in state["m"].items()}
        self.v = {k: v.clone() for k, v in state["v"].items()}
        self.rounds, self.t = state["rounds"], state["t"]
