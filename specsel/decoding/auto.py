"""`auto`: the chain length chosen from measured costs and acceptance, including no speculation when nothing pays.

A chain cycle with k drafted tokens costs k drafter steps, one target pass over k + 1 tokens and a fixed overhead; it
yields 1 + sum_{j<=k} prod_{i<=j} a_i tokens in expectation, a_i being the drafter's acceptance rate at depth i given
every earlier draft was accepted (Leviathan et al.'s expected length, with per-depth rates instead of one alpha).
Plain decoding yields 1 token per target pass over 1 token. `choose` takes the k (0 = plain) with the most expected
tokens per second, and speculates only when that beats plain by `margin`.

The rates come from the drafter's offline evaluation (`pool.json`: per-depth chain acceptance) as a prior and are
updated from what the drafter actually gets accepted (`AcceptanceEstimate`). `AutoChooser` keeps both and the
measured cycle times; while it decodes plainly it still tries k = 1 every `probe_every` steps, so a drafter that
improves (or an estimate that was too low) is noticed. Pure Python, no torch.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace


@dataclass(frozen=True)
class Costs:
    """Seconds: `target[n]` one target pass over n tokens (n = 1 is a plain step), `draft_step` one drafted token,
    `overhead` per speculative cycle (acceptance, cache rollback, bookkeeping), `plain_overhead` per plain step."""

    target: dict[int, float]
    draft_step: float
    overhead: float = 0.0
    plain_overhead: float = 0.0

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

    def to_json(self) -> dict:
        return {"target": {str(n): t for n, t in self.target.items()}, "draft_step": self.draft_step,
                "overhead": self.overhead, "plain_overhead": self.plain_overhead}

    @classmethod
    def from_json(cls, obj: dict) -> Costs:
        return cls({int(n): float(t) for n, t in obj["target"].items()}, float(obj["draft_step"]),
                   float(obj.get("overhead", 0.0)), float(obj.get("plain_overhead", 0.0)))

    def target_time(self, n: int) -> float:
        """Linear interpolation between measured sizes, linear extrapolation past the largest."""
        sizes = sorted(self.target)
        if n in self.target:
            return self.target[n]
        if n < sizes[0]:
            return self.target[sizes[0]]
        lo = max((s for s in sizes if s < n), default=sizes[0])
        hi = min((s for s in sizes if s > n), default=None)
        if hi is None:  # past the largest size: extend the last segment (or flat with one size)
            if len(sizes) == 1:
                return self.target[lo]
            lo, hi = sizes[-2], sizes[-1]
        t_lo, t_hi = self.target[lo], self.target[hi]
        return t_lo + (t_hi - t_lo) * (n - lo) / (hi - lo)


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


@dataclass(frozen=True)
class Choice:
    k: int  # 0: plain decoding
    expected_tokens: float  # per cycle
    rate: float  # expected tokens per second of the choice
    plain_rate: float
    table: dict[int, float]  # k -> expected tokens per second, 0..k_max

    @property
    def speedup(self) -> float:
        return self.rate / self.plain_rate


def choose(costs: Costs, rates: list[float], k_max: int, margin: float = 0.02) -> Choice:
    """The chain length (0..k_max) with the most expected tokens per second; speculation only when its rate is at
    least (1 + margin) x plain's, so an estimate's noise never makes a user slower than plain."""
    if k_max < 0 or margin < 0:
        raise ValueError(f"k_max and margin must be >= 0, got {k_max}, {margin}")
    table = {k: chain_rate(costs, rates, k) for k in range(k_max + 1)}
    best = max(range(1, k_max + 1), key=lambda k: table[k], default=0)
    if best and table[best] < (1 + margin) * table[0]:
        best = 0
    return Choice(best, chain_expected(rates, best), table[best], table[0], table)


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
    depth m + 1 rejected; deeper drafts tell nothing (they were conditioned on a rejected token)."""

    prior: list[float]
    prior_weight: float = 20.0
    drafted: list[int] = field(default_factory=list)
    accepted: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.prior or any(not 0.0 <= a <= 1.0 for a in self.prior):
            raise ValueError(f"prior acceptance rates must be in [0, 1], got {self.prior}")
        if self.prior_weight < 0:
            raise ValueError(f"prior_weight must be >= 0, got {self.prior_weight}")

    def observe(self, drafted: int, accepted: int) -> None:
        if not 0 <= accepted <= drafted:
            raise ValueError(f"accepted {accepted} of {drafted} drafts")
        seen = min(drafted, accepted + 1)
        while len(self.drafted) < seen:
            self.drafted.append(0)
            self.accepted.append(0)
        for j in range(seen):
            self.drafted[j] += 1
            self.accepted[j] += int(j < accepted)

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


class AutoChooser:
    """Per request (or per drafter): the chain length for the next cycle. `costs` from `measure_costs`, `prior`
    from the drafter's offline evaluation. Observes every speculative cycle's outcome; while plain wins it probes
    k = 1 every `probe_every` plain steps. With `observe_time`, the measured cycle times correct the overheads
    (an exponential average, weight `time_weight`, of measured minus modelled time, per plain and speculative
    cycles), so a cost model that misses per-cycle work does not keep choosing a setting that loses."""

    def __init__(self, costs: Costs, prior: list[float], k_max: int, margin: float = 0.02,
                 prior_weight: float = 20.0, probe_every: int = 16, time_weight: float = 0.1):
        if k_max < 1 or probe_every < 1:
            raise ValueError(f"k_max and probe_every must be >= 1, got {k_max}, {probe_every}")
        if not 0.0 <= time_weight <= 1.0:
            raise ValueError(f"time_weight must be in [0, 1], got {time_weight}")
        self.costs, self.k_max, self.margin, self.probe_every = costs, k_max, margin, probe_every
        self.base, self.time_weight = costs, time_weight
        self.extra = {False: 0.0, True: 0.0}  # speculative? -> averaged measured - modelled seconds per cycle
        self.estimate = AcceptanceEstimate(list(prior), prior_weight)
        self.plain_steps = 0
        self.chosen: list[int] = []  # k per cycle (0: a plain step)

    def choice(self) -> Choice:
        return choose(self.costs, self.estimate.rates(self.k_max), self.k_max, self.margin)

    def next_k(self) -> int:
        k = self.choice().k
        if k == 0:
            self.plain_steps += 1
            if self.plain_steps % self.probe_every == 0:
                k = 1  # rule: keep measuring the drafter while plain wins
        self.chosen.append(k)
        return k

    def observe(self, drafted: int, accepted: int) -> None:
        if drafted:
            self.estimate.observe(drafted, accepted)

    def observe_time(self, drafted: int, seconds: float) -> None:
        """A cycle that drafted `drafted` tokens (0: a plain step) took `seconds`."""
        spec = drafted > 0
        gap = seconds - self.base.cycle_time(drafted)
        self.extra[spec] += self.time_weight * (gap - self.extra[spec])
        # rule: a model that overestimates keeps its measured costs (overheads never go below the base ones)
        self.costs = replace(self.base, overhead=self.base.overhead + max(0.0, self.extra[True]),
                             plain_overhead=self.base.plain_overhead + max(0.0, self.extra[False]))


@dataclass
class AutoSpec:
    """Settings of `auto` chains (specsel/decoding/auto.py): `priors` per drafter name (per-depth acceptance from its
    offline evaluation; a drafter without one starts from `no_prior`: plain decoding with k = 1 probes until its
    acceptance shows it pays); `costs` measured on the first request when not given (or read from `costs_cache`, a
    JSON file keyed by machine, target and drafter, and written there); `time_weight`: how fast measured cycle times
    correct the modelled overheads (0: never)."""

    priors: dict[str, list[float]] = field(default_factory=dict)
    margin: float = 0.02
    prior_weight: float = 20.0
    probe_every: int = 16
    no_prior: float = 0.0
    costs: Costs | None = None
    costs_cache: str | None = None
    repeats: int = 3
    time_weight: float = 0.1
