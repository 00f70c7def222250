"""Exact replay of greedy drafter selection from per-position acceptance tables.

At temperature 0 the output is the target's greedy continuation whatever drafter is picked (lossless), and a greedy
chain drafter's accepted length from position s is a deterministic function of the verified prefix. So one target
pass over prompt + greedy answer, one free-running training-time-test pass of each drafter (its own drafts after a
miss) and one branch pass of the target over every drafted chain give, for every drafter i and start position s, the
accepted drafts `acc[i, s]` of a depth-K chain, its step-0 acceptance `gamma[i, s]` (what the counterfactual prefill
sees) and MetaSD's BD reward `bd[i, s]` (target vs drafter along the drafted chain, as the live decoder computes
it). Any selector can then be replayed exactly (the same learners and delayed-feedback game as the live
SpecDecoder), which is how the many-method tables are made; the live decoder is run for tok/s and checked against the
replay (benchmarks/select.py).

Index rule (EAGLE-3 TTT): step j at sequence index t reads token t+1+j and predicts token t+2+j, so a chain drafted
for position s runs at index t = s - 2. An independent drafter's logits row u - 1 predicts token u.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import NamedTuple

import torch
from transformers import DynamicCache

from draftpool.models import get_kind
from draftpool.models.kind import DrafterKind, Steps, shift_left
from draftpool.pool import Member
from draftpool.target import cache_kw
from online.trainer.feedback import greedy_prefix_len
from specsel.selection.delayed_feedback import DelayedFeedback, GameConfig


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
    depth: torch.Tensor | None = None  # [N, K, length] float: greedy acceptance of a depth-j draft at position s
    free: torch.Tensor | None = None  # [N] bool: model-free members (their chains are deterministic)

    @property
    def new_tokens(self) -> int:
        return self.length - self.prompt_len


class Tables(NamedTuple):
    acc: torch.Tensor  # [N, T] accepted drafts of the chain started at each position
    gamma: torch.Tensor  # [N, T] depth-0 greedy acceptance (what the counterfactual prefill sees)
    bd: torch.Tensor  # [N, T] MetaSD's BD reward along the drafted chain
    length: int  # T
    depth: torch.Tensor  # [N, K, T] row j: acceptance of the chain's depth-j draft at each position
    free: torch.Tensor  # [N] bool: model-free members (deterministic chains: `depth` is what live selection reads)


@torch.inference_mode()
def branch_logits(model, cache, past: int, starts: torch.Tensor, tokens: torch.Tensor) -> torch.Tensor:
    """Run B short branches off one cached sequence in a single forward: branch b's token u sits at position
    starts[b] + u and sees the cached positions < starts[b] and its own tokens <= u. starts [B], tokens [B,J]
    -> logits [B,J,V] (row u predicts position starts[b]+u+1). The cache is cut back to `past` afterwards."""
    b, j = tokens.shape
    dev = tokens.device
    n = b * j
    branch, offset = torch.arange(n, device=dev) // j, torch.arange(n, device=dev) % j  # [n]
    allowed = torch.empty(n, past + n, dtype=torch.bool, device=dev)
    # rule: the shared prefix up to the branch's start, then the branch's own earlier tokens (causal)
    allowed[:, :past] = torch.arange(past, device=dev)[None] < starts[branch][:, None]
    allowed[:, past:] = (branch[:, None] == branch[None]) & (offset[None] <= offset[:, None])
    dtype = next(model.parameters()).dtype
    mask = torch.zeros(allowed.shape, dtype=dtype, device=dev).masked_fill(~allowed, torch.finfo(dtype).min)
    out = model(input_ids=tokens.reshape(1, n), position_ids=(starts[branch] + offset)[None],
                attention_mask=mask[None, None], **cache_kw(model, cache), use_cache=True)
    cache.crop(past - cache.get_seq_length())
    return out.logits[0].float().reshape(b, j, -1)


@torch.inference_mode()
def acceptance_tables(target, drafters: list[Member], prompt_ids: list[int], answer_ids: list[int], k: int,
                      chunk: int = 128) -> Tables:
    """-> Tables (acc, gamma, bd [N,T], T, depth [N,K,T]), filled at the positions a chain can start from (after the
    prefill's token), a row per member of `drafters`, in their order.

    depth[i, j, u]: whether drafter i's depth-j draft for position u is the target's token there, drafted from the true
    prefix (teacher forcing): under greedy decoding, exactly the draft a chain makes at depth j when its earlier
    drafts were accepted (the kind's teacher-forced `steps`: an independent drafter's depth-j draft is its next-token
    prediction there; an EAGLE-3 head's comes from its own hidden state, the TTT step j).

    The answer is cut where it stops being the target's greedy continuation (batched generation can differ in the
    last bits), so the tables describe the target's own greedy output. Each drafter's chain from every start is its
    free-running greedy draft (its own tokens after a miss, as at decode time), and the BD reward compares it with the
    target on that drafted chain (branch passes off the cached true sequence, `chunk` starts per forward), so a
    replayed bandit sees exactly the rewards the live decoder computes."""
    device = next(target.parameters()).device
    ids = torch.tensor([prompt_ids + answer_ids], device=device)
    kinds = [get_kind(d.kind) for d in drafters]
    heads = any(kd.aux_layers(d.module) is not None for kd, d in zip(kinds, drafters))
    cache = DynamicCache(config=target.config)
    out = target(input_ids=ids, output_hidden_states=heads, **cache_kw(target, cache), use_cache=True)
    past = ids.shape[1]
    logits = out.logits[0].float()  # [T,V]; row u-1 predicts token u
    p0 = len(prompt_ids)
    t_len = greedy_prefix_len(logits, ids[0], p0)
    x = ids[0, :t_len]
    n = len(drafters)
    acc = torch.zeros(n, t_len, dtype=torch.long)
    gamma = torch.zeros(n, t_len)
    bd = torch.zeros(n, t_len)
    depth = torch.zeros(n, k, t_len)
    free = torch.zeros(n, dtype=torch.bool)
    starts = torch.arange(p0 + 1, t_len, device=device)  # [S] where a chain can start
    for i, (kind, member) in enumerate(zip(kinds, drafters)):
        model = member.module
        feats = kind.features(model, out.hidden_states) if heads else None
        feats = None if feats is None else feats[:, :t_len]
        steps = kind.steps(model, feats, x[None], torch.ones_like(x[None]), k)  # teacher-forced
        for j, hit in enumerate(step_hits(steps, x[None], k)):
            pos = torch.arange(steps.predicts(j), t_len, device=device)  # the drafted positions
            depth[i, j, pos.cpu()] = hit[0, pos - steps.predicts(j)].float().cpu()
        free[i] = not steps.logits[0].is_floating_point()
        chains = model_free_chains(steps, k, starts, chunk) if free[i] else \
            greedy_chains(kind, model, x, feats, k, starts, chunk)
        for s, drafts, qs, dids in chains:
            acc[i, s.cpu()], gamma[i, s.cpu()] = (v.cpu() for v in chain_acceptance(drafts, x, s))
            # the target's distribution at each drafted position, on the drafted chain (what verification sees)
            ps = [logits[s - 1]]
            if k > 1:  # past a model-free chain's end (-1) the branch reads token 0: no draft there agrees anyway
                ps += list(branch_logits(target, cache, past, s, drafts[:, :k - 1].clamp_min(0)).unbind(1))
            inside = (s[:, None] + torch.arange(k, device=device)) < t_len  # [S,K] drafted positions that exist
            # rule: BD averages 1 - TV (temperature 1) over the K drafted positions that exist
            if qs is None:  # a one-hot draft: 1 - TV = p(draft); no draft (-1) agrees nowhere
                agree = torch.stack([p.softmax(-1).gather(-1, d.clamp_min(0)[:, None])[:, 0] * (d >= 0)
                                     for p, d in zip(ps, drafts.unbind(1))], dim=1)  # [S,K]
            else:
                agree = torch.stack([torch.minimum(p.softmax(-1)[:, dids], q.softmax(-1)).sum(-1)
                                     for p, q in zip(ps, qs)], dim=1)  # [S,K]
            bd[i, s.cpu()] = ((agree * inside).sum(1) / inside.sum(1)).cpu()
    return Tables(acc, gamma, bd, t_len, depth, free)


def model_free_chains(steps: Steps, k: int, starts: torch.Tensor, chunk: int = 128):
    """A model-free drafter's chain from each start s is the proposal after the true prefix x[:s] (no network, so
    nothing differs after a miss): row s - 1 of its teacher-forced steps. Yields greedy_chains' tuples with qs and
    dids None (one-hot drafts, -1 = no draft)."""
    for c in range(0, len(starts), chunk):
        s = starts[c:c + chunk]  # [S]
        yield s, torch.stack([lg[0, s - steps.offset] for lg in steps.logits[:k]], dim=1), None, None  # [S,K]


def step_hits(steps: Steps, x: torch.Tensor, depth: int) -> list[torch.Tensor]:
    """x [1,T] the verified sequence -> per step j [1,T] bool: row t's top-1 is x_{t+offset+j}."""
    def hit(lg: torch.Tensor, j: int) -> torch.Tensor:  # a model-free drafter's steps are its drafts (-1: none)
        top = steps.target_ids(lg.argmax(-1)) if lg.is_floating_point() else lg
        return top == shift_left(x, steps.predicts(j))

    return steps.per_step(hit, depth, fill=False)


@torch.inference_mode()
def greedy_chains(kind: DrafterKind, model, x: torch.Tensor, feats: torch.Tensor | None, k: int, starts: torch.Tensor,
                  chunk: int = 128):
    """Each drafter's free-running greedy chain of depth k from every start position (its own tokens after a miss,
    as at decode time). x [T] the verified sequence, feats [1,T,F] the target features it reads (`kind.features`,
    None for none), starts [S]. Yields per chunk of starts: (s [S'], drafts [S',K] target ids, qs K x [S',Vs] the
    drafter's logits, dids [Vs] target id of each logit column)."""
    ids = x[None]
    free = kind.free_running(model, feats, ids, k)  # every chain in one pass, when the kind can
    if free is not None:
        q_all = [lg[0].float() for lg in free.logits]  # per step [T,Vs]; row s - offset holds the chain from s
        dids = free.target_ids(torch.arange(q_all[0].shape[-1], device=x.device))
    else:  # a causal LM: the true prefix once, then a branch pass per draft step
        dcache = DynamicCache(config=model.config)
        d_first = model(input_ids=ids, **cache_kw(model, dcache), use_cache=True).logits[0].float()  # [T,V]
        dids = torch.arange(d_first.shape[-1], device=x.device)
    for c in range(0, len(starts), chunk):
        s = starts[c:c + chunk]  # [S]
        if free is not None:
            qs = [q[s - free.offset] for q in q_all]  # K x [S,Vs]
            drafts = torch.stack([dids[q.argmax(-1)] for q in qs], dim=1)  # [S,K]
        else:
            qs = [d_first[s - 1]]
            drafts = dids[qs[0].argmax(-1)][:, None]
            for _ in range(1, k):  # rule: step j reads the drafter's own draft of step j-1
                qs.append(branch_logits(model, dcache, len(x), s, drafts)[:, -1])
                drafts = torch.cat([drafts, dids[qs[-1].argmax(-1)][:, None]], dim=1)
        yield s, drafts, qs, dids


def chain_acceptance(drafts: torch.Tensor, x: torch.Tensor, s: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """drafts [S,K] chains started at positions s [S] of the verified sequence x [T] -> (accepted drafts [S],
    step-0 acceptance [S] float)."""
    t_len = len(x)
    pos = s[:, None] + torch.arange(drafts.shape[1], device=drafts.device)  # [S,K] the drafted positions
    # rule: a chain accepts its leading run of matching drafts, and leaves the last token as its bonus
    match = (drafts == x[pos.clamp(max=t_len - 1)]) & (pos < t_len - 1)
    return match.long().cumprod(1).sum(1), (drafts[:, 0] == x[s]).float()  # step 0 reads the verified prefix only


# ---------------------------------------------------------------------------------------------------------------------
@dataclass
class Method:
    """How a method picks drafters: a learner factory (full information or bandit), or a fixed arm per request."""

    name: str
    make: Callable[[int, int], object] | None = None  # (n_arms, seed) -> learner
    game: GameConfig | None = None  # full-information learners
    reward: str = "bd"  # bandit learners: bd | be | length
    arm_of: Callable[[ReplayRequest], int] | None = None  # fixed arm per request (single drafter, oracle, router)
    depth: bool = False  # full information: feed per-depth gammas (ReplayRequest.depth) instead of depth-0 ones


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
        if method.depth and req.depth is None:
            raise ValueError(f"method {method.name} needs per-depth gammas; request {req.id} has none")
        table = observed(req, method.depth)  # [N, K, T] or [N, T]
        gammas = (lambda a, b, t=table: t[..., a:b])  # noqa: E731
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
                    game.observe(gammas(eval_from, s + a + 1), pending)
                    eval_from, pending = s + a + 1, []
            elif fixed is None and method.reward != "none":
                reward = {"bd": float(req.bd[i, s]), "be": a / k, "length": (a + 1) / (k + 1)}[method.reward]
                learner.update(i, reward)
            s += a + 1  # acc is capped so a chunk never runs past the answer
            forwards += 1
            rounds += 1
        if game is not None:
            if pending:
                game.observe(gammas(eval_from, req.length), pending)
            game.finish_request()
        res.tokens.append(req.new_tokens)
        res.forwards.append(forwards)
        res.choices.append(choices)
    return res


def observed(req: ReplayRequest, per_depth: bool) -> torch.Tensor:
    """The gammas the live game reads: per-depth ones when asked ([N,K,T]); with a model-free member in the pool
    the selector's rule (the members' chain hits per depth, every other drafter's depth-0 row repeated per depth);
    else depth-0 ([N,T])."""
    if per_depth:
        return req.depth
    if req.free is None or not bool(req.free.any()):
        return req.gamma
    k = req.depth.shape[1]
    return torch.where(req.free[:, None, None], req.depth, req.gamma[:, None].expand(-1, k, -1))


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


def chain_estimates(req: ReplayRequest, k: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Per drafter, over every start position of a request: (Theorem 3's estimate of the accepted length from depth-0
    gammas, the estimate from per-depth gammas, the true accepted length), bonus included, each [N, S]. The first
    two read the gammas of the chain's positions s..s+K-1 that can still be drafted (before the last token)."""
    s = torch.arange(req.prompt_len + 1, req.length)  # [S]
    pos = s[:, None] + torch.arange(k)  # [S, K]
    ok = (pos < req.length - 1).float()  # a chain never drafts the last token
    pos = pos.clamp(max=req.length - 1)
    step0 = req.gamma[:, pos] * ok  # [N, S, K]
    per_depth = req.depth[:, torch.arange(k), pos] * ok  # [N, S, K]: depth j read at position s + j
    est = (lambda g: 1 + g.cumprod(-1).sum(-1))  # noqa: E731
    return est(step0), est(per_depth), 1 + req.acc[:, s].float()
