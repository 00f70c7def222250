"""`auto`'s policy for one decoder (`AutoPolicy`): the costs of every drafter it plans for, fixed before the first
request (given, read from the cost cache, or measured once per drafter shape on a synthetic prefix; never measured or
written during a request), and one `AutoChooser` (specsel/decoding/auto.py) per drafter and request kind (greedy or
sampled). `plan` asks the chooser what the next cycle is; `learn` tells it, from the cycle's outcome (`Cycle`), what
it accepted and how long it took. History is bounded: a chooser keeps per-depth sums (at most k of them) and its last
plan only."""

from __future__ import annotations

from specsel.decoding import costs as cost_model
from specsel.decoding.auto import AutoChooser, AutoSpec, Costs
from specsel.decoding.observer import Cycle
from specsel.decoding.request import DecodeState
from specsel.decoding.target import CacheError, TargetRunner

SYNTHETIC_PREFIX = 64  # tokens of the prefix costs are measured after


def auto_trees(spec: AutoSpec, target: TargetRunner, drafters: list) -> tuple:
    """The trees `auto` may weigh: its grid, where every drafter drafts trees within its vocabulary, the target cache
    packs a tree's path and tree verification is token-exact (`TargetRunner.token_exact`: fp32 / fp64, or the lean
    forward on row-invariant kernels); else none."""
    if not spec.trees or not target.token_exact or not all(d.can_tree for d in drafters):
        return ()
    try:
        target.check_cache(tree=True)
    except CacheError:
        return ()
    vocab = min(d.draft_vocab_size for d in drafters)
    return tuple(t for t in spec.trees if t[1] <= vocab)


def synthetic_prefix(target: TargetRunner, n_drafters: int, room: int) -> DecodeState:
    """The target prefilled with a fixed synthetic prompt (no request's tokens), `room` positions left after it: the
    state costs are measured on."""
    n = max(1, min(SYNTHETIC_PREFIX, target.max_positions - room - 1))
    prompt = [(7 * j + 1) % target.vocab_size for j in range(n)]
    target.reset()
    target.rollback = True  # the measurement rolls the cache back after every timed pass
    out = target.forward(prompt)
    return DecodeState(tokens=prompt + [out.choice(-1)], prompt_len=n, feats=out.feats, synced=[0] * n_drafters)


class AutoPolicy:
    """auto's costs and choosers for one decoder's pool (`names`, `drafters`), chains of at most k drafts, the trees
    of `trees` for drafters with rank priors."""

    def __init__(self, spec: AutoSpec, names: list[str], drafters: list, k: int, trees: tuple = ()):
        self.spec, self.names, self.drafters, self.k, self.trees = spec, names, drafters, k, trees
        self.costs: dict[int, Costs] = {}  # drafter index -> its costs (prepare)
        # per (drafter, greedy): kept across requests (the estimate goes on); greedy and sampled requests accept
        # differently, so each has its own estimate
        self.choosers: dict[tuple[int, bool], AutoChooser] = {}

    def plans_for(self, i: int) -> bool:
        """rule: auto chooses the chain length of model drafters; a self-limiting drafter (model-free: its proposal
        stops where its confidence does, and costs microseconds) gets the whole k."""
        return not self.drafters[i].self_limiting

    def _trees(self, i: int, greedy: bool = True) -> tuple:
        """The trees weighed for drafter i: only for greedy requests and with the drafter's rank rates."""
        return self.trees if self.trees and greedy and self.spec.rank_priors.get(self.names[i]) else ()

    @property
    def ready(self) -> bool:
        return all(i in self.costs for i in range(len(self.drafters)) if self.plans_for(i))

    def prepare(self, target: TargetRunner) -> None:
        """Every planned drafter's costs: the spec's, else those of its shape measured before under this spec, else
        the cache's, else measured now after a synthetic prefix (and written to the cache). Leaves the target and the
        drafters reset when it measured."""
        a, state = self.spec, None
        for i, d in enumerate(self.drafters):
            if i in self.costs or not self.plans_for(i):
                continue
            trees, costs = self._trees(i), a.costs
            if costs is None:
                key = cost_model.cost_key(target.model, d, self.k, target.forward_id)
                # rule: drafters of one shape cost the same: measured once per AutoSpec, even without a cache file
                costs = a.measured.get(key) or cost_model.load_cached(a.costs_cache, key)
                if costs is None or (trees and not costs.tree_step):
                    if state is None:
                        for x in self.drafters:
                            x.reset()
                        room = 2 * self.k + 2 + max((t[2] + 1 for t in self.trees), default=0)
                        state = synthetic_prefix(target, len(self.drafters), room)
                    costs = cost_model.measure(target, d, state, self.k, a.repeats, trees)
                    cost_model.store(a.costs_cache, key, costs)
                a.measured[key] = costs
            self.costs[i] = costs
        if state is not None:  # rule: nothing measured here stays in a cache a request reads
            target.reset()
            for x in self.drafters:
                x.reset()

    def chooser(self, i: int, greedy: bool) -> AutoChooser:
        """Drafter i's chooser for greedy or sampled requests, made on first use from its prepared costs."""
        if (i, greedy) not in self.choosers:
            a = self.spec
            ranks = a.rank_priors.get(self.names[i]) if self._trees(i, greedy) else None
            prior = (a.priors if greedy else a.sampled_priors).get(self.names[i], [a.no_prior])
            self.choosers[i, greedy] = AutoChooser(self.costs[i], prior, self.k, a.margin, a.prior_weight,
                                                   a.probe_every, a.time_weight, ranks, self.trees if ranks else (),
                                                   a.window)
        return self.choosers[i, greedy]


    def plan(self, i: int, greedy: bool, fixed: bool) -> tuple[int, tuple[int, int, int] | None, str | None]:
        """Drafter i's next cycle -> (k, tree, its label): a chain of k drafts (0: a plain step) or a tree; a
        self-limiting drafter gets the whole k, unplanned (label None). fixed: the selector is a fixed one."""
        if not self.plans_for(i):
            return self.k, None, None
        chooser = self.chooser(i, greedy)
        # rule: trees verify greedily, and selectors read a cycle's rows as a chain's: auto weighs trees only for
        # greedy requests with a fixed drafter
        k, tree = chooser.next_plan(greedy and fixed)
        return k, tree, chooser.last_plan

    def learn(self, c: Cycle, greedy: bool) -> None:
        """A cycle it planned (`c.plan` set): what it accepted and how long its draft + verify took (a plain step's
        time rescales every modelled target pass), then its selection + feedback time (rule: selection is never a
        tax the planner does not see)."""
        chooser = self.choosers[c.member, greedy]
        if c.tree is not None:
            chooser.observe_tree(c.tree, c.accepted)
            chooser.observe_time(0, c.work_s, c.tree)
        else:
            chooser.observe(c.drafted, c.accepted)  # a plain step drafted nothing: no acceptance to learn
            chooser.observe_time(c.drafted, c.work_s)
        chooser.observe_selection(c.selection_s)
