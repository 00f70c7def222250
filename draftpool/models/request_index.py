"""`RequestIndex`: prompt lookup over one request. Every n-gram (n_min..n_max) of the prompt and the answer
so far -> the positions that follow it and how often each token followed it, kept incrementally as tokens are
committed (a trie over the request read backwards from each position); it also answers as of an earlier length, so
the members that read one request can share one index. Proposals are suffix_index's `Proposal`."""

from __future__ import annotations

from draftpool.models.proposal import NO_PROPOSAL, Proposal


class RequestIndex:
    """Prompt lookup over one request: n-gram -> its occurrences and the tokens after them, updated token by token.
    Proposals can be asked as of any length reached (`upto`): the same as an index that stopped there.

    The n-grams are the nodes of a trie that reads the request backwards from a position (the token before an n-gram
    leads to the (n+1)-gram), kept in flat int lists and int-keyed dicts: a long prompt adds no objects for the
    garbage collector to walk."""

    MEMO = 4096  # proposals remembered (a proposal as of a length never changes)

    def __init__(self, n_min: int = 2, n_max: int = 8):
        if not 1 <= n_min <= n_max:
            raise ValueError(f"n-gram sizes need 1 <= n_min <= n_max, got {n_min}, {n_max}")
        self.n_min, self.n_max = n_min, n_max
        self.reset()

    def reset(self) -> None:
        self.tokens: list[int] = []  # a new list: whoever follows the old one sees the restart
        self._child: dict[int, int] = {}  # node << 32 | the token before it (ids < 2**32) -> the longer n-gram's node
        # per node (n >= n_min): the positions after its first and its latest occurrence, its occurrences, the most
        # frequent token after it (ties: the lower id) and that token's count
        self._first, self._last, self._n, self._best, self._best_n = [-1], [-1], [0], [0], [0]
        self._counts: dict[int, int] = {}  # node << 32 | token after -> count (nodes seen twice or more)
        # per n-gram size n_min.., per position p: the position after the previous occurrence of the n-gram that
        # ends before p (-1: none)
        self._earlier: list[list[int]] = [[] for _ in range(self.n_min, self.n_max + 1)]
        self._memo: dict[tuple[int, int, bool], Proposal] = {}

    def extend(self, tokens: list[int]) -> None:
        toks, child, counts, earlier, n_min, n_max = (self.tokens, self._child, self._counts, self._earlier,
                                                      self.n_min, self.n_max)
        first, last, seen, best, best_n = self._first, self._last, self._n, self._best, self._best_n
        for t in tokens:
            t = int(t)
            end = len(toks)  # the n-grams ending just before this token are followed by it
            toks.append(t)
            node = 0
            top = min(n_max, end)
            for n in range(1, top + 1):
                key = node << 32 | toks[end - n]
                node = child.get(key, -1)
                if node < 0:
                    node = child[key] = len(first)
                    first.append(-1)
                    last.append(-1)
                    seen.append(0)
                    best.append(0)
                    best_n.append(0)
                if n < n_min:
                    continue
                earlier[n - n_min].append(last[node])
                last[node] = end
                c = seen[node] = seen[node] + 1
                if c == 1:
                    first[node], best[node], best_n[node] = end, t, 1
                    continue
                if c == 2:
                    counts[node << 32 | best[node]] = 1
                key = node << 32 | t
                c = counts[key] = counts.get(key, 0) + 1
                # rule: counts only grow, so the most frequent is the old one or the one just counted
                if c > best_n[node] or (c == best_n[node] and t < best[node]):
                    best[node], best_n[node] = t, c
            for n in range(max(top + 1, n_min), n_max + 1):
                earlier[n - n_min].append(-1)

    def advance(self, tokens: list[int], n: int) -> None:
        """Index tokens[len(self.tokens):n] (the caller knows the indexed tokens are a prefix of `tokens`)."""
        if n > len(self.tokens):
            self.extend(tokens[len(self.tokens):n])

    def sync(self, tokens: list[int]) -> None:
        """Catch up with the committed tokens (a prefix of `tokens` is already indexed; anything else restarts)."""
        n = len(self.tokens)
        if tokens[:n] != self.tokens:
            self.reset()
            n = 0
        self.extend(tokens[n:])

    def _occurrences(self, node: int, g: int, n: int) -> tuple[list[int], int]:
        """The g-gram `node`'s occurrences: (the positions after them from n on, latest first; the latest before n,
        or -1)."""
        out, p, earlier = [], self._last[node], self._earlier[g - self.n_min]
        while p >= n:
            out.append(p)
            p = earlier[p]
        return out, p

    def propose(self, k: int, most_frequent: bool = False, upto: int | None = None) -> Proposal:
        """Continue the longest n-gram ending the request that occurred before: copy what followed its latest
        occurrence (prompt lookup), or walk the most frequent continuation (`most_frequent`). upto: as of the
        request's first `upto` tokens (default: all)."""
        n = len(self.tokens) if upto is None else upto
        key = (n, k, most_frequent)
        prop = self._memo.get(key)
        if prop is None:
            if len(self._memo) >= self.MEMO:
                self._memo.clear()
            prop = self._memo[key] = self._propose(n, k, most_frequent)
        return prop

    def _propose(self, n: int, k: int, most_frequent: bool) -> Proposal:
        toks, child, first = self.tokens, self._child, self._first
        node, found = 0, None
        for g in range(1, min(self.n_max, n - 1) + 1):  # rule: the longest n-gram that occurred before
            node = child.get(node << 32 | toks[n - g], -1)
            if node < 0:
                break
            if g >= self.n_min:
                if not 0 <= first[node] < n:  # not before n (nor is any longer one)
                    break
                found = g, node
        if found is None:
            return NO_PROPOSAL
        g, node = found
        if not most_frequent:
            start = self._occurrences(node, g, n)[1]  # its latest occurrence before n
            draft = toks[start:min(start + k, n)]
            return Proposal(draft, [1.0] * len(draft), g)
        return self._walk(g, k, n)

    def _walk(self, g: int, k: int, n: int) -> Proposal:
        toks, child, first = self.tokens, self._child, self._first
        ctx = toks[n - g:n]
        tokens, probs = [], []
        while len(tokens) < k:
            node = 0
            for j in range(1, g + 1):  # the node of ctx's last g tokens
                node = child.get(node << 32 | ctx[-j], -1)
                if node < 0:
                    break
            if node < 0 or not 0 <= first[node] < n:
                break
            if self._last[node] < n:  # every occurrence is before n: the kept counts
                total, tok, c = self._n[node], self._best[node], self._best_n[node]
            else:  # as of n: the occurrences before n, counted
                counts: dict[int, int] = {}
                _, p = self._occurrences(node, g, n)
                earlier = self._earlier[g - self.n_min]
                while p >= 0:
                    counts[toks[p]] = counts.get(toks[p], 0) + 1
                    p = earlier[p]
                total = sum(counts.values())
                tok = max(counts, key=lambda t: (counts[t], -t))
                c = counts[tok]
            tokens.append(tok)
            # rule: within one request, evidence is thin: one more "other" outcome is counted (a continuation seen
            # once is a coin flip, not a certainty), so a short repeat does not outscore the corpus
            probs.append(c / (total + 1))
            ctx.append(tok)
        return Proposal(tokens, probs, g)
