"""The sorted suffix arrays a `SuffixIndex` keeps its corpus in (torch-free): one `Segment` per block of sequences,
its suffix array sorted by the first `depth` tokens (prefix doubling, `suffix_array`), range lookups by pattern, and
what the incremental `Matcher` needs built on first use (the first two tokens of every sorted suffix packed in one
int64, the inverse suffix array, the LCP array: `common_prefixes`). The searches over segments are
draftpool/models/suffix_index.py.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right

import numpy as np

SEP = -1  # between sequences in a segment: never matched, so no match crosses two sequences


def suffix_array(tokens: np.ndarray, depth: int) -> np.ndarray:
    """tokens [N] int (SEP between sequences) -> [M] start positions of every non-SEP suffix, sorted by its first
    `depth` tokens (prefix doubling on ranks; a SEP or the end sorts before every token and matches nothing)."""
    n = len(tokens)
    # rule: tokens rank above every SEP and the end; each SEP gets its own rank, so nothing matches across it
    rank = np.where(tokens >= 0, tokens.astype(np.int64) + n + 1, np.arange(1, n + 1))
    h = 1
    while h < depth:
        nxt = np.zeros(n, dtype=np.int64)  # 0: past the end
        if h < n:
            nxt[:n - h] = rank[h:]
        order = np.lexsort((nxt, rank))
        key_r, key_n = rank[order], nxt[order]
        new = np.empty(n, dtype=np.int64)
        new[order] = np.concatenate([[0], np.cumsum((np.diff(key_r) != 0) | (np.diff(key_n) != 0))]) + 1
        rank, h = new, 2 * h
    order = np.argsort(rank, kind="stable")
    return order[tokens[order] >= 0]


def common_prefixes(tokens: np.ndarray, sa: np.ndarray, cap: int) -> np.ndarray:
    """[M] LCP array of a suffix array: entry i = the tokens suffixes sa[i-1] and sa[i] share (no SEP), at most `cap`;
    entry 0 = 0."""
    out = np.zeros(len(sa), dtype=np.uint8 if cap < 256 else np.int32)
    if len(sa) < 2 or cap < 1:
        return out
    last = len(tokens) - 1  # a SEP (every sequence ends with one): reading past the end reads it
    idx = np.arange(1, len(sa))
    a, b = sa[:-1], sa[1:]
    for j in range(cap):  # rule: only pairs that still agree are read again
        ta = tokens[np.minimum(a + j, last)]
        keep = (ta == tokens[np.minimum(b + j, last)]) & (ta >= 0)
        idx, a, b = idx[keep], a[keep], b[keep]
        if not len(idx):
            break
        out[idx] += 1
    return out


def _narrow(tok, sa, lo: int, hi: int, m: int, t: int) -> tuple[int, int]:
    """[a, b) of the suffixes in [lo, hi) (sharing their first m tokens) whose token m is t (memoryviews; a, b = a
    when none)."""
    if hi - lo == 1:
        return (lo, hi) if tok[sa[lo] + m] == t else (lo, lo)

    def key(s: int) -> int:
        return tok[s + m]

    a = bisect_left(sa, t, lo, hi, key=key)
    if a == hi or tok[sa[a] + m] != t:
        return a, a
    return a, bisect_right(sa, t, a + 1, hi, key=key)


def _expand(lcp, lcp_np: np.ndarray, size: int, r: int, n: int) -> tuple[int, int]:
    """[lo, hi) of the suffixes sharing their first n tokens with the suffix of rank r (LCP array: a few steps in
    Python, then numpy over growing windows)."""
    lo = r
    while lo and lcp[lo] >= n:
        lo -= 1
        if r - lo > 16:
            width = 64
            while True:  # lcp[0] = 0 < n: it stops
                a = max(0, lo - width + 1)
                hit = np.flatnonzero(lcp_np[a:lo + 1] < n)
                if len(hit):
                    lo = a + int(hit[-1])
                    break
                lo, width = a - 1, 4 * width
            break
    hi = r + 1
    while hi < size and lcp[hi] >= n:
        hi += 1
        if hi - r > 17:
            width = 64
            while hi < size:
                b = min(size, hi + width)
                hit = np.flatnonzero(lcp_np[hi:b] < n)
                if len(hit):
                    hi += int(hit[0])
                    break
                hi, width = b, 4 * width
            break
    return lo, hi


class Segment:
    """One immutable sorted corpus segment."""

    def __init__(self, seqs: list[list[int]], depth: int):
        flat: list[int] = []
        for s in seqs:
            flat.extend(s)
            flat.append(SEP)
        self._set(np.asarray(flat, dtype=np.int64), depth)

    @classmethod
    def from_flat(cls, tokens: np.ndarray, depth: int) -> Segment:
        """From SEP-separated tokens [N] (each sequence followed by a SEP)."""
        seg = cls.__new__(cls)
        seg._set(tokens, depth)
        return seg

    def _set(self, tokens: np.ndarray, depth: int) -> None:
        self.tokens = np.ascontiguousarray(tokens)  # [N]
        self.sa = suffix_array(self.tokens, depth)  # [M]
        self.n_seqs = int((tokens == SEP).sum())
        self.depth = depth
        self._views = None  # (tokens, suffix array, first two tokens) as memoryviews, on the first lookup
        self._links = None  # (inverse suffix array, LCP array), on the first incremental match

    def __len__(self) -> int:
        return len(self.sa)

    def views(self) -> tuple[memoryview, memoryview, memoryview]:
        """(tokens, suffix array, the first two tokens of every sorted suffix packed in one sorted int64: first << 32
        | second + 1, a SEP second as 0): memoryviews, whose items are Python ints (`bisect` reads them in C)."""
        if self._views is None:
            sa = np.ascontiguousarray(self.sa)
            pairs = (self.tokens[sa] << 32) | (self.tokens[sa + 1] + 1)  # sa + 1 <= the last token, a SEP
            self._views = (memoryview(self.tokens), memoryview(sa), memoryview(pairs))
        return self._views

    def links(self) -> tuple[memoryview, np.ndarray, memoryview]:
        """(inverse suffix array [N] (-1 at SEPs), LCP array [M] and its memoryview): what shortens a match from the
        left (the suffix one token later and the range around it). 5 bytes per token, built once per segment."""
        if self._links is None:
            isa = np.full(len(self.tokens), -1, dtype=np.int32)
            isa[self.sa] = np.arange(len(self.sa), dtype=np.int32)
            lcp = common_prefixes(self.tokens, self.sa, self.depth - 1)
            self._links = (memoryview(isa), lcp, memoryview(lcp))
        return self._links

    def first(self, t: int) -> tuple[int, int]:
        """[lo, hi) of the sorted suffixes that start with token t."""
        pairs = self.views()[2]
        a = bisect_left(pairs, t << 32)
        return a, bisect_left(pairs, (t + 1) << 32, a)

    def pair(self, t: int, u: int) -> tuple[int, int]:
        """[lo, hi) of the sorted suffixes that start with tokens t, u."""
        pairs, key = self.views()[2], (t << 32) | (u + 1)
        a = bisect_left(pairs, key)
        return a, bisect_right(pairs, key, a)

    def range_of(self, pattern: list[int]) -> tuple[int, int]:
        """[lo, hi) of the sorted suffixes that start with `pattern` (len(pattern) < depth; lo = hi when none): the
        first token's range, narrowed token by token, the rest compared at once when one suffix is left."""
        m = len(pattern)
        if not m:
            return 0, len(self.sa)
        tok, sa, _ = self.views()
        a, b = self.first(int(pattern[0])) if m == 1 else self.pair(int(pattern[0]), int(pattern[1]))
        n = min(m, 2)
        while n < m and a < b:
            if b - a == 1:
                s = sa[a]
                return (a, b) if tok[s + n:s + m].tolist() == list(pattern[n:]) else (a, a)
            a, b = _narrow(tok, sa, a, b, n, pattern[n])
            n += 1
        return a, b

    def following(self, lo: int, hi: int, m: int) -> np.ndarray:
        """The token after the first m tokens of suffixes lo..hi-1 ([hi-lo], SEP where a sequence ends), in sorted
        order: equal tokens are contiguous."""
        pos = self.sa[lo:hi] + m
        out = np.full(hi - lo, SEP, dtype=np.int64)
        inside = pos < len(self.tokens)
        out[inside] = self.tokens[pos[inside]]
        return out

    def windows(self, lo: int, hi: int, m: int, n: int) -> list[list[int]]:
        """The n tokens after the first m tokens of suffixes lo..hi-1 (SEP past the end): one list per suffix."""
        if hi - lo <= 4:
            tok, sa, _ = self.views()
            rows = [tok[sa[i] + m:sa[i] + m + n].tolist() for i in range(lo, hi)]
            return [r if len(r) == n else r + [SEP] * (n - len(r)) for r in rows]
        idx = self.sa[lo:hi, None] + (m + np.arange(n))
        return self.tokens[np.minimum(idx, len(self.tokens) - 1)].tolist()  # the last token is a SEP
