"""`auto`: the chain length chosen from measured costs and acceptance, including no speculation when nothing pays.

A chain cycle with k drafted tokens costs k drafter steps, one target pass over k + 1 tokens and a fixed overhead; it
yields 1 + sum_{j<=k} prod_{i<=j} a_i tokens in expectation, a_i being the drafter's acceptance rate at depth i given
every earlier draft was accepted (Leviathan et al.'s expected length, with per-depth rates instead of one alpha).
Plain decoding yields 1 token per target pass over 1 token. `choose` takes the k (0 = plain) with the most expected
tokens per second, and speculates only when that beats plain by `margin`.

Trees (EAGLE-2 style: expand the `top_k` best nodes per depth, verify the `tokens` best) are scored from per-depth
*rank* rates q[d][r], the chance that the target's token at depth d is the drafter's r-th candidate given the path
to it was accepted: the expected tokens of a tree are 1 + the sum of its nodes' path probabilities, and the tree
kept is the one the drafter would build if its own scores were these probabilities (`tree_expected`). A tree cycle
costs `depth` drafter tree steps, one masked target pass over tokens + 1 rows and the speculative overhead.
`choose` compares plain, every chain length and every tree in the grid on expected tokens per second.

The rates come from the drafter's offline evaluation (`pool.json`: per-depth chain acceptance) as a prior and are
updated from what the drafter actually gets accepted (`AcceptanceEstimate`). `AutoChooser` keeps both and the
measured cycle times; while it decodes plainly it still tries k = 1 every `probe_every` steps, so a drafter that
improves (or an estimate that was too low) is noticed. `auto_spec` builds the settings (`AutoSpec`) of a pool from
its drafters' evaluations: the one builder every server, benchmark and check uses. Pure Python, no torch.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace


@dataclass(frozen=True)
class Costs:
    """Seconds: `target[n]` one target pass over n tokens (n = 1 is a plain step), `draft_step` one drafted token,
    `overhead` per speculative cycle (acceptance, cache rollback, bookkeeping), `plain_overhead` per plain step."""

    target: dict[int, float]
    draft_step: float
    overhead: float = 0.0
    plain_overhead: float = 0.0
    tree_target: dict[int, float] = field(default_factory=dict)  # one masked target pass over n tokens (trees)
    tree_step: dict[int, float] = field(default_factory=dict)  # top_k -> one tree drafting depth (k frontier rows)
    tree_overhead: float = 0.0  # per tree cycle, beyond `overhead` (masks, path packing)

    def __post_init__(self) -> None:
        if not self.target or 1 not in self.target:
            raise ValueError("Costs.target needs the time of a pass over 1 token (a plain step)")
        if (any(n < 1 or t <= 0 for n, t in self.target.items()) or self.draft_step < 0 or self.overhead < 0
                or self.plain_overhead < 0):
            raise ValueError(f"costs must be positive: target {self.target}, draft_step {self.draft_step}, "
                             f"overhead {self.overhead}, plain_overhead {self.plain_overhead}")

    def cycle_time(self, k: int) -> float:
        """Modelled seconds of one cycle drafting k tokens (k = 0: a plain step)."""
        if k == 0:
            return self.target_time(1) + self.plain_overhead
        return k * self.draft_step + self.target_time(k + 1) + self.overhead

    def tree_time(self, tree: tuple[int, int, int]) -> float:
        """Modelled seconds of one tree cycle, tree = (depth, top_k, tokens); inf without tree costs for top_k."""
        depth, top_k, tokens = tree
        if not self.tree_target or top_k not in self.tree_step:
            return float("inf")
        return (depth * self.tree_step[top_k] + _interpolate(self.tree_target, tokens + 1) + self.overhead
                + self.tree_overhead)

    def to_json(self) -> dict:
        return {"target": {str(n): t for n, t in self.target.items()}, "draft_step": self.draft_step,
                "overhead": self.overhead, "plain_overhead": self.plain_overhead,
                "tree_target": {str(n): t for n, t in self.tree_target.items()},
                "tree_step": {str(n): t for n, t in self.tree_step.items()}, "tree_overhead": self.tree_overhead}

    @classmethod
    def from_json(cls, obj: dict) -> Costs:
        return cls({int(n): float(t) for n, t in obj["target"].items()}, float(obj["draft_step"]),
                   float(obj.get("overhead", 0.0)), float(obj.get("plain_overhead", 0.0)),
                   {int(n): float(t) for n, t in obj.get("tree_target", {}).items()},
                   {int(n): float(t) for n, t in obj.get("tree_step", {}).items()},
                   float(obj.get("tree_overhead", 0.0)))

    def target_time(self, n: int) -> float:
        """Linear interpolation between measured sizes, linear extrapolation past the largest."""
        return _interpolate(self.target, n)


def _interpolate(table: dict[int, float], n: int) -> float:
    """table[n], else linear between the nearest measured sizes, linear extrapolation past the largest."""
    sizes = sorted(table)
    if n in table:
        return table[n]
    if n < sizes[0]:
        return table[sizes[0]]
    lo = max((s for s in sizes if s < n), default=sizes[0])
    hi = min((s for s in sizes if s > n), default=None)
    if hi is None:  # past the largest size: extend the last segment (or flat with one size)
        if len(sizes) == 1:
            return table[lo]
        lo, hi = sizes[-2], sizes[-1]
    return table[lo] + (table[hi] - table[lo]) * (n - lo) / (hi - lo)


def chain_expected(rates: list[float], k: int) -> float:
    """Expected tokens per cycle of a k-token chain: 1 + sum_{j=1..k} prod_{i<=j} a_i (rates: a_1, a_2, ...; the
    last rate is reused past the list's end)."""
    if k < 0:
        raise ValueError(f"k must be >= 0, got {k}")
    out, alive = 1.0, 1.0
    for j in range(k):
        a = rates[min(j, len(rates) - 1)] if rates else 0.0
        alive *= min(1.0, max(0.0, a))  # rule: depth j+1 counts only if every earlier draft was accepted
        out += alive
    return out


def chain_rate(costs: Costs, rates: list[float], k: int) -> float:
    """Expected tokens per second of k-token chains (k = 0: plain decoding)."""
    return chain_expected(rates, k) / costs.cycle_time(k)


def tree_expected(rank_rates: list[list[float]], tree: tuple[int, int, int]) -> float:
    """Expected tokens per cycle of an EAGLE-2 tree (depth, top_k, tokens) whose nodes' scores are their path
    probabilities: every depth expands the top_k best nodes into their top_k children, and the `tokens` best
    nodes are verified; a node counts with the probability that its whole path is accepted.
    rank_rates[d][r]: the target's token at depth d + 1 is the drafter's candidate r (last depth reused)."""
    depth, top_k, tokens = tree
    if depth < 1 or top_k < 1 or tokens < 1 or not rank_rates:
        raise ValueError(f"tree {tree} needs depth, top_k, tokens >= 1 and rank rates")
    nodes: list[float] = []
    frontier = [1.0]  # path probabilities of the nodes expanded next (the root first)
    for d in range(depth):
        q = rank_rates[min(d, len(rank_rates) - 1)]
        children = sorted((p * min(1.0, max(0.0, q[r])) for p in frontier for r in range(min(top_k, len(q)))),
                          reverse=True)
        nodes += children
        frontier = children[:top_k]  # rule: the top_k children by score are the next depth's frontier
    return 1.0 + sum(sorted(nodes, reverse=True)[:tokens])  # rule: the `tokens` best nodes (a parent >= its child)


TREE_GRID = tuple((d, k, n) for d in (2, 3, 4, 5, 6) for k in (2, 4) for n in (4, 8, 16) if n <= k + (d - 1) * k * k)


@dataclass(frozen=True)
class Choice:
    k: int  # 0: plain decoding (or a tree cycle when `tree` is set)
    expected_tokens: float  # per cycle
    rate: float  # expected tokens per second of the choice
    plain_rate: float
    table: dict[int, float]  # k -> expected tokens per second, 0..k_max
    tree: tuple[int, int, int] | None = None  # (depth, top_k, tokens) when a tree cycle is the choice
    trees: dict[tuple[int, int, int], float] = field(default_factory=dict)  # tree -> expected tokens per second

    @property
    def speedup(self) -> float:
        return self.rate / self.plain_rate

    @property
    def label(self) -> str:
        """What a cycle of this choice is: 'plain', 'k=3', 'tree 4/2/8' (depth/top_k/tokens)."""
        return f"tree {'/'.join(map(str, self.tree))}" if self.tree else (f"k={self.k}" if self.k else "plain")


def choose(costs: Costs, rates: list[float], k_max: int, margin: float = 0.02,
           rank_rates: list[list[float]] | None = None, trees: tuple = (), tree_gain: float = 1.0) -> Choice:
    """The chain length (0..k_max), or the tree of `trees` (scored on `rank_rates`, its expected extra tokens times
    `tree_gain`), with the most expected tokens per second; speculation only when its rate is at least
    (1 + margin) x plain's, so an estimate's noise never makes a user slower than plain."""
    if k_max < 0 or margin < 0 or tree_gain < 0:
        raise ValueError(f"k_max, margin and tree_gain must be >= 0, got {k_max}, {margin}, {tree_gain}")
    table = {k: chain_rate(costs, rates, k) for k in range(k_max + 1)}
    expect = {t: 1.0 + tree_gain * (tree_expected(rank_rates, t) - 1.0) for t in trees} if rank_rates else {}
    scored = {t: e / costs.tree_time(t) for t, e in expect.items()}
    best = max(range(1, k_max + 1), key=lambda k: table[k], default=0)
    tree = max(scored, key=lambda t: scored[t], default=None)
    if tree is not None and scored[tree] > table[best] and scored[tree] >= (1 + margin) * table[0]:
        return Choice(0, expect[tree], scored[tree], table[0], table, tree, scored)
    if best and table[best] < (1 + margin) * table[0]:
        best = 0
    return Choice(best, chain_expected(rates, best), table[best], table[0], table, None, scored)


def rates_from_lengths(counts: list[int]) -> list[float]:
    """Per-depth conditional acceptance from a histogram of accepted lengths of k-token chains: counts[m] = cycles
    that accepted exactly m drafts (m = 0..k). a_j = P(accepted >= j) / P(accepted >= j - 1)."""
    total = sum(counts)
    if total == 0:
        raise ValueError("an empty histogram has no acceptance rates")
    at_least = [sum(counts[m:]) for m in range(len(counts))]
    return [at_least[j] / at_least[j - 1] if at_least[j - 1] else 0.0 for j in range(1, len(counts))]


@dataclass
class AcceptanceEstimate:
    """Per-depth acceptance, a prior (offline rates) worth `prior_weight` observed drafts at each depth, updated with
    the drafts the target actually accepted. A cycle that accepted m of k drafts observed depths 1..m accepted and
    depth m + 1 rejected; deeper drafts tell nothing (they were conditioned on a rejected token). `window` > 0: each
    observation at a depth discounts that depth's earlier ones by 1 - 1/window (the estimate follows the requests of
    the last ~window cycles: a stream's acceptance moves with its domain); 0 keeps every observation alike."""

    prior: list[float]
    prior_weight: float = 20.0
    drafted: list[float] = field(default_factory=list)
    accepted: list[float] = field(default_factory=list)
    window: float = 0.0

    def __post_init__(self) -> None:
        if not self.prior or any(not 0.0 <= a <= 1.0 for a in self.prior):
            raise ValueError(f"prior acceptance rates must be in [0, 1], got {self.prior}")
        if self.prior_weight < 0:
            raise ValueError(f"prior_weight must be >= 0, got {self.prior_weight}")
        if self.window != 0 and self.window < 1:
            raise ValueError(f"window must be 0 (no forgetting) or >= 1 observations, got {self.window}")

    def observe(self, drafted: int, accepted: int) -> None:
        if not 0 <= accepted <= drafted:
            raise ValueError(f"accepted {accepted} of {drafted} drafts")
        seen = min(drafted, accepted + 1)
        while len(self.drafted) < seen:
            self.drafted.append(0.0)
            self.accepted.append(0.0)
        keep = 1.0 - 1.0 / self.window if self.window else 1.0
        for j in range(seen):
            self.drafted[j] = keep * self.drafted[j] + 1  # rule: older observations fade (window > 0)
            self.accepted[j] = keep * self.accepted[j] + int(j < accepted)

    def rates(self, depth: int) -> list[float]:
        """Rates of depths 1..depth. A depth never observed takes its prior scaled by how far the deepest observed
        depth moved from its own prior (k = 1 probes then also speak for deeper drafts)."""
        out, scale = [], 1.0
        for j in range(depth):
            p = self.prior[min(j, len(self.prior) - 1)]
            n = self.drafted[j] if j < len(self.drafted) else 0
            if n == 0:
                out.append(min(1.0, p * scale))
                continue
            r = (self.accepted[j] + self.prior_weight * p) / (n + self.prior_weight)
            scale = r / p if p > 0 else (1.0 if r > 0 else 0.0)
            out.append(r)
        return out


def acceptance_prior(evaluation: dict | None, sampling: bool = False) -> list[float] | None:
    """Per-depth acceptance rates from a drafter's offline evaluation (the `eval` of its draftpool.json / pool.json
    entry: teacher-forced per-step top-1 agreement for greedy decoding, 1 - TV for sampling); None without one."""
    rates = (evaluation or {}).get("accept_per_step" if sampling else "top1_per_step")
    if not rates or not all(isinstance(a, (int, float)) and 0.0 <= a <= 1.0 for a in rates):
        return None
    return [float(a) for a in rates]


def rank_prior(evaluation: dict | None) -> list[list[float]] | None:
    """Per-depth rank rates from a drafter's offline evaluation: q[d][r] = topk[d][r] - topk[d][r-1], from its
    teacher-forced per-step top-r agreement (`topk_per_step`); None without one (no trees for that drafter)."""
    topk = (evaluation or {}).get("topk_per_step")
    if not topk or not all(isinstance(row, list) and row and all(isinstance(a, (int, float)) and 0.0 <= a <= 1.0
                                                                  for a in row) for row in topk):
        return None
    return [[max(0.0, float(a) - float(row[r - 1] if r else 0.0)) for r, a in enumerate(row)] for row in topk]


class AutoChooser:
    """Per request (or per drafter): the chain length or tree for the next cycle. `costs` from `costs.measure`,
    `prior` from the drafter's offline evaluation (per-depth top-1 rates; `rank_prior` per-depth rank rates, which
    enable the trees of `trees`). Observes every speculative cycle's outcome; while plain wins it probes k = 1 every
    `probe_every` plain steps. With `observe_time`, measured cycle times correct the model (exponential averages,
    weight `time_weight`): plain steps rescale every target pass (the target's speed now against the measured or
    cached costs), chain and tree cycles slower than modelled raise their overheads, so a cost model that misses
    per-cycle work, or costs timed on a busier or idler machine, do not keep choosing a setting that loses; tree
    cycles likewise correct their expected accepted length (`tree_gain`)."""

    def __init__(self, costs: Costs, prior: list[float], k_max: int, margin: float = 0.02,
                 prior_weight: float = 20.0, probe_every: int = 16, time_weight: float = 0.1,
                 rank_prior: list[list[float]] | None = None, trees: tuple = (), window: float = 0.0):
        if k_max < 1 or probe_every < 1:
            raise ValueError(f"k_max and probe_every must be >= 1, got {k_max}, {probe_every}")
        if not 0.0 <= time_weight <= 1.0:
            raise ValueError(f"time_weight must be in [0, 1], got {time_weight}")
        if rank_prior is not None and (not rank_prior or any(not row or not all(0.0 <= a <= 1.0 for a in row)
                                                             for row in rank_prior)):
            raise ValueError(f"rank rates must be non-empty rows in [0, 1], got {rank_prior}")
        self.costs, self.k_max, self.margin, self.probe_every = costs, k_max, margin, probe_every
        self.base, self.time_weight = costs, time_weight
        self.extra = {"chain": 0.0, "tree": 0.0}  # averaged measured - modelled seconds per speculative cycle
        self.scale = 1.0  # averaged measured / modelled time of a plain step: the target's speed now
        self.selection = 0.0  # averaged seconds of a cycle's selection + feedback (observe_selection)
        self.estimate = AcceptanceEstimate(list(prior), prior_weight, window=window)
        self.rank_prior = rank_prior
        self.trees = tuple(trees) if rank_prior else ()
        self.tree_gain = 1.0  # averaged accepted / expected drafts of tree cycles
        self.plain_steps = 0
        # rule: the last cycle's plan only (a chooser lives as long as its decoder: a list per cycle would grow for
        # the life of a server); a request's plans per cycle are its metrics' (RequestMetrics.plans)
        self.last_k: int | None = None  # k of the last cycle (0: a plain step; -1: a tree cycle); None before any
        self.last_plan: str | None = None  # Choice.label of the last cycle ("k=1" for a probe)

    @property
    def plans(self) -> tuple[str, ...]:
        """The last cycle's plan as a one-item tuple (empty before any): for readers of `plans[-1]`; read
        `last_plan`."""
        return () if self.last_plan is None else (self.last_plan,)

    def rank_rates(self) -> list[list[float]] | None:
        """Rank rates now: the offline rank shape, scaled per depth as the online top-1 estimate moved from its
        prior (rank 0 is the top-1 rate itself)."""
        if not self.rank_prior:
            return None
        top1 = self.estimate.rates(len(self.rank_prior))
        out = []
        for row, now in zip(self.rank_prior, top1):
            scale = now / row[0] if row[0] > 0 else 1.0
            out.append([min(1.0, a * scale) for a in row])
        return out

    def choice(self, trees: bool = True) -> Choice:
        return choose(self.costs, self.estimate.rates(self.k_max), self.k_max, self.margin, self.rank_rates(),
                      self.trees if trees else (), self.tree_gain)

    def next_plan(self, trees: bool = True) -> tuple[int, tuple[int, int, int] | None]:
        """(k, None) for a chain of k drafts (0: a plain step), or (0, (depth, top_k, tokens)) for a tree cycle
        (never with trees=False: a sampled request)."""
        c = self.choice(trees)
        k, tree = c.k, c.tree
        if k == 0 and tree is None:
            self.plain_steps += 1
            if self.plain_steps % self.probe_every == 0:
                k = 1  # rule: keep measuring the drafter while plain wins
        self.last_k = -1 if tree else k
        self.last_plan = c.label if (k, tree) == (c.k, c.tree) else f"k={k}"
        return k, tree

    def next_k(self) -> int:
        """The chain length of the next cycle (choosers without trees)."""
        return self.next_plan()[0]

    def observe(self, drafted: int, accepted: int) -> None:
        if drafted:
            self.estimate.observe(drafted, accepted)

    def observe_tree(self, tree: tuple[int, int, int], accepted: int) -> None:
        """A tree cycle accepted `accepted` drafts: moves `tree_gain` toward accepted / modelled expectation."""
        modelled = tree_expected(self.rank_rates(), tree) - 1.0
        if modelled > 0:
            ratio = min(3.0, accepted / modelled)
            self.tree_gain += self.time_weight * (ratio - self.tree_gain)

    def observe_time(self, drafted: int, seconds: float, tree: tuple[int, int, int] | None = None) -> None:
        """A cycle that drafted `drafted` tokens (0: a plain step), or the tree `tree`, took `seconds`."""
        if not drafted and tree is None:
            # rule: a plain step is one target pass: its time rescales every modelled target pass, both ways (costs
            # measured or cached at another moment are off for plain steps and verification passes alike)
            self.scale += self.time_weight * (seconds / self.base.cycle_time(0) - self.scale)
            self.scale = min(10.0, max(0.1, self.scale))
        model = scaled(self.base, self.scale)
        if drafted or tree is not None:
            kind = "tree" if tree else "chain"
            gap = seconds - (model.tree_time(tree) if tree else model.cycle_time(drafted))
            self.extra[kind] += self.time_weight * (gap - self.extra[kind])
        self._refresh()

    def observe_selection(self, seconds: float) -> None:
        """A cycle's selection and feedback took `seconds` (the selector's choice and its counterfactual evaluation):
        every kind of cycle pays it, so it is added to each (a per-cycle cost favours fewer, longer cycles, and a
        plain step that still pays for selection is no longer modelled as plain decoding's)."""
        self.selection += self.time_weight * (seconds - self.selection)
        self._refresh()

    def _refresh(self) -> None:
        model = scaled(self.base, self.scale)
        # rule: speculative cycles slower than modelled raise their overhead; faster ones keep the model (the
        # conservative side: speculation is never credited with time it was not seen to save)
        chain, tree_extra = max(0.0, self.extra["chain"]), max(0.0, self.extra["tree"] - self.extra["chain"])
        sel = max(0.0, self.selection)
        self.costs = replace(model, overhead=self.base.overhead + chain + sel,
                             tree_overhead=self.base.tree_overhead + tree_extra,
                             plain_overhead=model.plain_overhead + sel)


def scaled(costs: Costs, scale: float) -> Costs:
    """`costs` with every target pass (plain, chain verification, masked tree pass) taking `scale` times as long."""
    if scale == 1.0:
        return costs
    return replace(costs, target={n: t * scale for n, t in costs.target.items()},
                   tree_target={n: t * scale for n, t in costs.tree_target.items()},
                   plain_overhead=costs.plain_overhead * scale)


@dataclass
class AutoSpec:
    """Settings of `auto` chains (specsel/decoding/auto.py): `priors` per drafter name (per-depth acceptance from its
    offline evaluation; a drafter without one starts from `no_prior`: plain decoding with k = 1 probes until its
    acceptance shows it pays); `costs` measured at start-up when not given (or read from `costs_cache`, a
    JSON file keyed by machine, target and drafter, and written there); `sampled_priors` per drafter name: the same
    for sampled requests (1 - TV from the offline evaluation: sampled and greedy requests accept differently and are
    estimated apart); `time_weight`: how fast measured cycle times
    correct the modelled overheads (0: never); `window`: the acceptance estimates' memory in cycles
    (`AcceptanceEstimate`). `rank_priors` per drafter name (`rank_prior` of its evaluation) let
    `auto` weigh the trees of `trees` too (tree-drafting drafters, where tree verification is token-exact)."""

    priors: dict[str, list[float]] = field(default_factory=dict)
    sampled_priors: dict[str, list[float]] = field(default_factory=dict)
    rank_priors: dict[str, list[list[float]]] = field(default_factory=dict)
    trees: tuple = TREE_GRID
    margin: float = 0.02
    prior_weight: float = 20.0
    probe_every: int = 16
    no_prior: float = 0.0
    costs: Costs | None = None
    costs_cache: str | None = None
    repeats: int = 3
    time_weight: float = 0.1
    window: float = 64.0  # acceptance estimates follow the last ~64 cycles of a drafter (0: every cycle alike)
    measured: dict[str, Costs] = field(default_factory=dict, repr=False)  # costs measured here, by cost key


def auto_spec(evals: Mapping[str, dict | None], with_trees: bool = True, **settings) -> AutoSpec:
    """The `auto` settings of a pool from each drafter's offline evaluation ({name: the `eval` of its pool manifest
    entry, or None}): per-depth acceptance priors for greedy requests (`acceptance_prior`: top-1 agreement) and for
    sampled ones (1 - TV) and, `with_trees`, per-depth rank priors (`rank_prior`) that let auto weigh trees for
    greedy requests. A drafter whose evaluation lacks them gets none (it starts from `no_prior`). `settings`: any
    other AutoSpec field (costs_cache, costs, margin, ...); explicit `priors` / `sampled_priors` / `rank_priors`
    there are added over the ones read from `evals`."""
    priors = {n: p for n, ev in evals.items() if (p := acceptance_prior(ev))}
    sampled = {n: p for n, ev in evals.items() if (p := acceptance_prior(ev, sampling=True))}
    ranks = {n: r for n, ev in evals.items() if (r := rank_prior(ev))} if with_trees else {}
    priors.update(settings.pop("priors", {}))
    sampled.update(settings.pop("sampled_priors", {}))
    ranks.update(settings.pop("rank_priors", {}))
    return AutoSpec(priors=priors, sampled_priors=sampled, rank_priors=ranks, **settings)
