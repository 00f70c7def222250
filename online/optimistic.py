"""Optimistic online gradient descent (OnlineSpec Eq. 3): play w_t = w_hat_t - eta * h_t, then
w_hat_{t+1} = w_hat_t - eta * grad f_t(w_t); the hint h_{t+1} is the gradient just seen (the previous gradient).

When consecutive rounds' gradients agree (a stream that stays in one domain) the played weights are already a step
ahead; the regret then depends on the hint error sum ||h_t - grad f_t(w_t)||^2 instead of the horizon.
"""

from __future__ import annotations

import torch

from online.ogd import LossFn, Params, clipped_grads, leaf_copy


def optimistic_update(w_hat: torch.Tensor, grad: torch.Tensor, lr: float) -> tuple[torch.Tensor, torch.Tensor]:
    """-> (w_hat_{t+1}, w_{t+1}) for one tensor."""
    w_hat = w_hat - lr * grad  # rule: the lazy iterate takes the true gradient, seen at the played point
    return w_hat, w_hat - lr * grad  # rule: the next play moves ahead along the hint = this gradient


class OptimisticOGD:
    def __init__(self, params: Params, lr: float, clip: float = 0.5):
        if lr <= 0:
            raise ValueError(f"learning rate must be > 0, got {lr}")
        self.params = leaf_copy(params)  # w_t, the played weights (h_1 = 0, so w_1 = w_hat_1)
        self.w_hat = {k: v.detach().clone() for k, v in self.params.items()}
        self.lr, self.clip = lr, clip
        self.rounds = 0

    def step(self, loss_fn: LossFn) -> float:
        loss = loss_fn(self.params)
        grads = clipped_grads(loss, self.params, self.clip)
        with torch.no_grad():
            for (k, p), g in zip(self.params.items(), grads):
                self.w_hat[k], played = optimistic_update(self.w_hat[k], g, self.lr)
                p.copy_(played)
        self.rounds += 1
        return float(loss.detach())

    def served(self) -> Params:
        return {k: v.detach() for k, v in self.params.items()}

    def state(self) -> dict:
        return {"params": self.served(), "w_hat": self.w_hat, "rounds": self.rounds}

    def load_state(self, state: dict) -> None:
        with torch.no_grad():
            for k, v in state["params"].items():
                self.params[k].copy_(v)
        self.w_hat = {k: v.clone() for k, v in state["w_hat"].items()}
        self.rounds = state["rounds"]
