"""Verification rules: greedy chain, lossless rejection-sampled chain, greedy tree.

Each returns how many draft tokens are accepted and the next token the target emits after them (the correction at
the first rejection, or the bonus token when everything was accepted).
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from draftpool.forward.sampling import sample


def verify_chain_greedy(draft: list[int], choice: Callable[[int], int]) -> tuple[int, int]:
    """draft [K] token ids; choice(i) = the target's argmax at row i (0 = root, i = after draft i) -> (accepted, next).

    `choice` is asked only along the accepted prefix, so the caller can compute logits lazily.
    """
    n = 0
    # rule: accept the longest prefix where the draft equals the target's argmax
    while n < len(draft) and draft[n] == choice(n):
        n += 1
    return n, choice(n)


def verify_chain_sampling(draft: torch.Tensor, q: torch.Tensor, p: torch.Tensor,
                          generator: torch.Generator | None) -> tuple[int, int]:
    """Speculative sampling: draft [K] drawn from q [K,V]; target distribution p [K+1,V] -> (accepted, next).

    The emitted tokens are distributed exactly as sampling from p one token at a time.
    """
    k = draft.numel()
    q, draft = q.to(p.device), draft.to(p.device)
    idx = torch.arange(k, device=p.device)
    p_d, q_d = p[idx, draft], q[idx, draft]  # [K] probability of each draft token under p and q
    u = torch.rand(k, generator=generator, dtype=p.dtype, device=generator.device if generator else p.device)
    u = u.to(p.device)
    # rule: accept token i with probability min(1, p_i / q_i), i.e. when u * q_i < p_i
    ok = (u * q_d < p_d).long()
    n = int(ok.cumprod(0).sum())
    if n == k:
        # rule: all accepted -> the bonus token comes from p after the last draft token
        return n, int(sample(p[k], generator))
    # rule: first rejection -> sample from the residual max(0, p - q), renormalised
    residual = (p[n] - q[n]).clamp_min(0)
    total = residual.sum()
    dist = residual / total if total > 0 else p[n]  # p == q leaves no residual: rejection was impossible there
    return n, int(sample(dist, generator))


def verify_tree_greedy(tokens: list[int], parents: list[int], choice: Callable[[int], int]) -> tuple[list[int], int]:
    """Longest accepted root-to-leaf path of a draft tree under greedy verification.

    tokens [N] and parents [N] (-1 = child of the root) list the draft nodes, parents before children;
    choice(i) is the target's argmax at the root (i = 0) and at node i-1 (i >= 1), asked only along the path.
    Returns the accepted node indices in path order (0-based over the nodes) and the next token.
    """
    children: dict[int, dict[int, int]] = {}
    for i, (tok, par) in enumerate(zip(tokens, parents)):
        children.setdefault(par, {}).setdefault(tok, i)  # first (highest-ranked) child wins on a duplicate token
    path, node = [], -1
    while True:
        want = choice(node + 1)
        # rule: follow the child whose token equals the target's choice; stop where none does
        nxt = children.get(node, {}).get(want)
        if nxt is None:
            return path, want
        path.append(nxt)
        node = nxt
