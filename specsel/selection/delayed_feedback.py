"""The online-learning game of HedgeSpec with delayed feedback (App. B.1, QFI-D), token- or chunk-level (App. B.3).

Counterfactual gammas arrive a chunk (or, with batched feedback, several chunks) at a time. The token-level game turns
them into one loss vector per token t, f_t[i] = 1 - EAL(g_t..g_{t+K-1})[i] / (K+1), which is revealed only once the
K positions from t on are verified (a delay of up to 2K tokens); the chunk-level game makes one loss vector per chunk
from that chunk's gammas, censored at its accepted length. Revealed vectors wait in a FIFO queue and are fed to the
base learner, in order, right before its next choice.

Practical options (App. B.5), all off by default; the paper's settings in brackets:
- `hybrid`: the first N loss vectors use the acceptance-probability loss 1 - g_t, then the length loss [first few: 3];
- `token_stride`: skipping updates, a loss vector for every s-th token only [6];
- `warmup_rounds` / `feedback_every`: batched feedback, the counterfactual evaluation runs every round during the
  warm-up, then once every m rounds over all chunks since the last one [6 / 12];
- `settle` (this project's): batched feedback only while the estimate has settled: the evaluation runs every round
  while the learner's largest weight is below `settle`, every `feedback_every` rounds once it is at or above it (no
  verified position goes unevaluated either way: a batched evaluation covers every chunk since the last one).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Literal

import torch

from draftpool.config import ConfigError, field
from specsel.selection.estimators import accept_loss, length_loss


@dataclass
class GameConfig:
    level: Literal["token", "chunk"] = field("token", help="one round per token (with delay) or per chunk")
    loss: Literal["length", "accept"] = field("length", help="acceptance-length loss or acceptance-probability loss")
    hybrid: int = field(0, help="first N loss vectors use the acceptance loss (hybrid losses; paper: 3)")
    token_stride: int = field(1, help="token-level: a loss vector every s tokens (skipping updates; paper: 6)")
    warmup_rounds: int = field(0, help="rounds with a counterfactual evaluation every round (paper: 6)")
    feedback_every: int = field(1, help="after the warm-up, evaluate once every m rounds (paper: 12)")
    settle: float = field(0.0, help="batch the evaluation (feedback_every) only while the learner's largest weight "
                                    "is >= settle (0: always; a learner without weights: always)")

    def validate(self) -> None:
        if self.level not in ("token", "chunk") or self.loss not in ("length", "accept"):
            raise ConfigError(f"game level must be token|chunk and loss length|accept, got {self.level}/{self.loss}")
        if self.hybrid < 0 or self.token_stride < 1 or self.warmup_rounds < 0 or self.feedback_every < 1 or \
                not 0 <= self.settle <= 1:
            raise ConfigError("game: hybrid and warmup_rounds must be >= 0, token_stride and feedback_every >= 1, "
                              "settle in [0, 1]")


class DelayedFeedback:
    """QFI-D around a full-information learner (`select()`, `update(losses)`)."""

    def __init__(self, learner, n_arms: int, k: int, cfg: GameConfig | None = None):
        self.learner, self.n, self.k = learner, n_arms, k
        self.cfg = cfg or GameConfig()
        self.cfg.validate()
        self.queue: deque[list[float]] = deque()
        self.updates = 0  # loss vectors fed to the learner
        self.rounds = 0
        self.reset_request()

    def reset_request(self) -> None:
        """Forget the per-request token window (the learner itself is kept: persistent state across requests)."""
        self.window: torch.Tensor | None = None  # [N, D, m] gammas of positions whose token loss is not yet formed
        self.betas: torch.Tensor | None = None  # [N, D, m] (sampling) realised-token acceptance, same positions
        self.token = 0  # index of the window's first position in the request

    def select(self) -> int:
        # predict phase: catch the learner up with every loss vector revealed so far, in arrival order
        while self.queue:
            self.learner.update(self.queue.popleft())
            self.updates += 1
        self.rounds += 1
        return self.learner.select()

    def wants_evaluation(self, round_index: int) -> bool:
        """Whether round `round_index` (0-based, per request) runs the counterfactual evaluation."""
        c = self.cfg
        if round_index < c.warmup_rounds or c.feedback_every == 1:
            return True
        if c.settle > 0 and not self.settled():
            return True  # rule: while the weights still move, every round's feedback reaches the learner at once
        return (round_index - c.warmup_rounds) % c.feedback_every == 0

    def settled(self) -> bool:
        """The learner's largest weight is at least `settle` (a learner without weights never settles)."""
        probs = getattr(self.learner, "probs", None)
        return probs is not None and max(probs()) >= self.cfg.settle

    def _loss_kind(self) -> str:
        return "accept" if self.cfg.loss == "accept" or self.updates + len(self.queue) < self.cfg.hybrid else "length"

    def observe(self, gammas: torch.Tensor, accepted: list[int], betas: torch.Tensor | None = None) -> None:
        """gammas [N, m]: every drafter's acceptance probability at m consecutive verified positions, which make up
        whole chunks with `accepted` draft tokens each (sum(a + 1) == m); or [N, K, m] per-depth gammas, row j =
        the acceptance of a depth-j draft at each position (the chain's own draft, for heads that draft deeper
        steps from their own state, or model-free drafters' chains). betas [N, m] or, with per-depth gammas,
        [N, K, m] (sampling): min(1, q/p) of the realised tokens, for the unbiased length estimate."""
        gammas = gammas.float().cpu()
        gammas = gammas[:, None] if gammas.dim() == 2 else gammas
        if gammas.shape[0] != self.n or gammas.shape[1] not in (1, self.k) or \
                gammas.shape[2] != sum(a + 1 for a in accepted):
            raise ValueError(f"gammas {tuple(gammas.shape)} do not cover {self.n} drafters (x 1 or {self.k} depths) "
                             f"x chunks {accepted}")
        if betas is not None:
            betas = betas.float().cpu()
            betas = betas[:, None] if betas.dim() == 2 else betas
            if betas.shape != gammas.shape:
                raise ValueError(f"betas {tuple(betas.shape)} must match gammas {tuple(gammas.shape)}")
        if self.cfg.level == "chunk":
            start = 0
            for a in accepted:
                g = gammas[..., start:start + a + 1]  # [N, D, a+1]
                b = None if betas is None else betas[..., start:start + a + 1]
                start += a + 1
                if self._loss_kind() == "accept":
                    self._push(accept_loss(g[:, 0]).mean(-1))
                else:
                    # censored at the chunk's accepted length: g_{a+1} counts as 0 (App. B.3)
                    self._push(self._length_loss(g[..., :a], b, a))
            return
        cat = (lambda old, new: new if old is None else torch.cat([old, new], dim=2))  # noqa: E731
        self.window = cat(self.window, gammas)
        self.betas = None if betas is None else cat(self.betas, betas)
        self._form_token_losses(final=False)

    def _length_loss(self, g: torch.Tensor, b: torch.Tensor | None, k: int) -> torch.Tensor:
        """g, b [N, D, m] (b None when greedy) -> the length loss of a depth-k chain starting at the first position:
        depth j reads row 0 at position j (depth-0 gammas) or row j at position j (per-depth gammas)."""
        n = min(k, g.shape[2])

        def chain(x: torch.Tensor) -> torch.Tensor:  # [N, D, m] -> [N, n]
            d = torch.arange(n, device=x.device)  # depth j at position j (n = 0: a chunk that accepted nothing)
            return x[:, 0, :n] if x.shape[1] == 1 else x[:, d, d]

        return length_loss(chain(g), k, None if b is None else chain(b))

    def finish_request(self) -> None:
        """End of a request: positions whose K-window runs past the end get the truncated estimate (no more tokens
        follow them, so nothing more can be accepted)."""
        if self.cfg.level == "token":
            self._form_token_losses(final=True)
        self.reset_request()

    def _form_token_losses(self, final: bool) -> None:
        k = self.k
        while self.window is not None and self.window.shape[2] > 0:
            kind = self._loss_kind()
            need = 1 if kind == "accept" else k
            if self.window.shape[2] < need and not final:
                return
            if self.token % self.cfg.token_stride == 0:
                if kind == "accept":
                    self._push(accept_loss(self.window[:, 0, 0]))
                else:
                    self._push(self._length_loss(self.window, self.betas, k))
            self.window = self.window[..., 1:]
            self.betas = None if self.betas is None else self.betas[..., 1:]
            self.token += 1

    def _push(self, losses: torch.Tensor) -> None:
        self.queue.append(losses.clamp(0, 1).tolist())
