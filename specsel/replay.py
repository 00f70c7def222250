"""Exact replay of greedy drafter selection from per-position acceptance tables.

At temperature 0 the output is the target's greedy continuation whatever drafter is picked (lossless), and a greedy
chain drafter's accepted length from position s is a deterministic function of the verified prefix. So one target
pass over prompt + greedy answer and one training-time-test pass of each drafter give, for every drafter i and start
position s, the accepted drafts `acc[i, s]` of a depth-K chain, its step-0 acceptance `gamma[i, s]` (what the
counterfactual prefill sees) and MetaSD's BD reward `bd[i, s]`. Any selector can then be replayed exactly
(the same learners and delayed-feedback game as the live PoolDecoder), which is how the many-method tables are made;
the live decoder is run for tok/s and checked against the replay (specsel/select_bench.py).

Index rule (EAGLE-3 TTT): step j at sequence index t reads token t+1+j and predicts token t+2+j, so a chain drafted
for position s runs at index t = s - 2. An independent drafter's logits row u - 1 predicts token u.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import torch

from specsel.delayed_feedback import DelayedFeedback, GameConfig


@dataclass
class ReplayRequest:
    id: str
    domain: str
    prompt_len: int
    length: int  # prompt + answer tokens
    acc: torch.Tensor  # [N, length] int: accepted drafts of a chain started at position s (capped at the end)
    gamma: torch.Tensor  # [N, length] float: step-0 greedy acceptance at position s
    bd: torch.Tensor  # [N, length] float: MetaSD BD reward of the chain started at s
    prompt: str = ""

    @property
    def new_tokens(self) -> int:
        return self.length - self.prompt_len


@torch.inference_mode()
def acceptance_tables(target, drafters: list[tuple[str, torch.nn.Module]], prompt_ids: list[int],
                      answer_ids: list[int], k: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, int]:
    """-> (acc [N,T], gamma [N,T], bd [N,T], T). `drafters` = [(kind, model)], kind "eagle3" or "llama".
    The answer is cut where it stops being the target's greedy continuation (batched generation can differ in the
    last bits), so the tables describe the target's own greedy output."""
    device = next(target.parameters()).device
    ids = torch.tensor([prompt_ids + answer_ids], device=device)
    heads = any(kind == "eagle3" for kind, _ in drafters)
    out = target(input_ids=ids, output_hidden_states=heads)
    logits = out.logits[0].float()  # [T,V]; row u-1 predicts token u
    argmax = logits.argmax(-1)
    p0 = len(prompt_ids)
    wrong = (argmax[p0 - 1:-1] != ids[0, p0:]).nonzero()
    t_len = ids.shape[1] if len(wrong) == 0 else p0 + int(wrong[0])
    ids, logits = ids[:, :t_len], logits[:t_len]
    p = logits.softmax(-1)  # [T,V] temperature 1 (BD reward)
    x = ids[0]
    n = len(drafters)
    acc = torch.zeros(n, t_len, dtype=torch.long)
    gamma = torch.zeros(n, t_len)
    bd = torch.zeros(n, t_len)
    s = torch.arange(t_len, device=device)
    for i, (kind, model) in enumerate(drafters):
        match, agree = [], []  # per step j: [T] indexed by start position s
        if kind == "eagle3":
            aux = torch.cat([out.hidden_states[j][:, :t_len] for j in model.config.eagle_aux_hidden_state_layer_ids],
                            -1)
            _, steps = model(aux, ids, torch.ones_like(ids), k)
            dids = model.draft_ids
            for j, lg in enumerate(steps):
                lg = lg[0].float()  # [T,Vd] at index t predicts token t+2+j
                tgt = s + j  # position predicted when the chain starts at s (index t = s-2)
                src = s - 2
                ok = (src >= 0) & (tgt < t_len)
                pred = dids[lg.argmax(-1)]  # [T]
                m = torch.zeros(t_len, dtype=torch.bool, device=device)
                m[ok] = pred[src[ok]] == x[tgt[ok]]
                a = torch.zeros(t_len, device=device)
                q = lg[src[ok]].softmax(-1)  # [n_ok,Vd]
                a[ok] = torch.minimum(p[tgt[ok] - 1][:, dids], q).sum(-1)
                match.append(m)
                agree.append(a)
        else:
            lg = model(input_ids=ids).logits[0].float()  # [T,V] row u-1 predicts u
            m0 = torch.zeros(t_len, dtype=torch.bool, device=device)
            m0[1:] = lg[:-1].argmax(-1) == x[1:]
            a0 = torch.zeros(t_len, device=device)
            a0[1:] = torch.minimum(p[:-1], lg[:-1].softmax(-1)).sum(-1)
            for j in range(k):
                match.append(torch.cat([m0[j:], torch.zeros(j, dtype=torch.bool, device=device)]))
                agree.append(torch.cat([a0[j:], torch.zeros(j, device=device)]))
        # rule: a chain accepts its leading run of matching drafts, and never past the last token
        alive = torch.ones(t_len, dtype=torch.bool, device=device)
        run = torch.zeros(t_len, dtype=torch.long, device=device)
        for m in match:
            alive = alive & m
            run += alive.long()
        acc[i] = torch.minimum(run, (t_len - 1 - s).clamp_min(0)).cpu()
        gamma[i] = match[0].float().cpu()
        # rule: BD averages 1 - TV over the K drafted positions that exist
        n_pos = torch.clamp(t_len - s, max=k).clamp_min(1)
        bd[i] = (torch.stack(agree).sum(0) / n_pos).cpu()
    return acc, gamma, bd, t_len


# ---------------------------------------------------------------------------------------------------------------------
@dataclass
class Method:
    """How a method picks drafters: a learner factory (full information or bandit), or a fixed arm per request."""

    name: str
    make: Callable[[int, int], object] | None = None  # (n_arms, seed) -> learner
    game: GameConfig | None = None  # full-information learners
    reward: str = "bd"  # bandit learners: bd | be | length
    arm_of: Callable[[ReplayRequest], int] | None = None  # fixed arm per request (single drafter, oracle, router)


@dataclass
class ReplayResult:
    name: str
    tokens: list[int] = field(default_factory=list)  # per request
    forwards: list[int] = field(default_factory=list)  # per request, prefill included
    choices: list[list[int]] = field(default_factory=list)  # per request, per round
    token_arm: list[int] = field(default_factory=list)  # per generated token of the stream: the arm that drafted it

    @property
    def mat(self) -> float:
        return sum(self.tokens) / max(1, sum(self.forwards))

    def mat_of(self, idx: list[int]) -> float:
        return sum(self.tokens[i] for i in idx) / max(1, sum(self.forwards[i] for i in idx))


def replay(stream: list[ReplayRequest], method: Method, n_arms: int, k: int, persistent: bool = False,
           seed: int = 0) -> ReplayResult:
    """Serve the stream with `method`; per-request reset of the learner unless `persistent`."""
    res = ReplayResult(method.name)
    learner = game = None
    for r_idx, req in enumerate(stream):
        if method.arm_of is None and (learner is None or not persistent):
            learner = method.make(n_arms, seed + (0 if persistent else r_idx))
            full = bool(getattr(learner, "full_information", False))
            game = DelayedFeedback(learner, n_arms, k, method.game) if full else None
        fixed = method.arm_of(req) if method.arm_of is not None else None
        if game is not None:
            game.reset_request()
        s = req.prompt_len + 1  # the prefill emitted position prompt_len; drafting starts after it
        forwards, rounds, pending, eval_from = 1, 0, [], s
        choices = []
        res.token_arm.append(-1)  # the prefill's token: no drafter
        while s < req.length:
            if fixed is not None:
                i = fixed
            else:
                i = game.select() if game is not None else learner.select()
            a = int(req.acc[i, s])
            choices.append(i)
            res.token_arm.extend([i] * (a + 1))
            if game is not None:
                pending.append(a)
                if game.wants_evaluation(rounds):
                    game.observe(req.gamma[:, eval_from:s + a + 1], pending)
                    eval_from, pending = s + a + 1, []
            elif fixed is None and method.reward != "none":
                reward = {"bd": float(req.bd[i, s]), "be": a / k, "length": (a + 1) / (k + 1)}[method.reward]
                learner.update(i, reward)
            s += a + 1  # acc is capped so a chunk never runs past the answer
            forwards += 1
            rounds += 1
        if game is not None:
            if pending:
                game.observe(req.gamma[:, eval_from:req.length], pending)
            game.finish_request()
        res.tokens.append(req.new_tokens)
        res.forwards.append(forwards)
        res.choices.append(choices)
    return res


def token_losses(stream: list[ReplayRequest], k: int) -> torch.Tensor:
    """[N, total generated tokens] realised length loss 1 - (acc+1)/(K+1) of each drafter at each generated token
    (the prefill's token gets 0 for all: nobody drafts it)."""
    cols = []
    for req in stream:
        cols.append(torch.zeros(req.acc.shape[0], 1))
        cols.append(1 - (req.acc[:, req.prompt_len + 1:req.length].float() + 1) / (k + 1))
    return torch.cat(cols, dim=1)


def cumulative_regret(res: ReplayResult, losses: torch.Tensor) -> torch.Tensor:
    """[T] regret against the best single drafter in hindsight over the first t tokens:
    sum_{u<=t} f_u[i_u] - min_i sum_{u<=t} f_u[i] (the prefill tokens carry no loss)."""
    arms = torch.tensor(res.token_arm)
    played = torch.where(arms >= 0, losses.gather(0, arms.clamp_min(0)[None])[0], torch.zeros(()))
    return played.cumsum(0) - losses.cumsum(1).min(0).values
