"""The pool members a server decodes with: trained ones from the pool (or its last exported version), model-free
ones from the pool or from what a previous run indexed (`load_members`), and the saving of what model-free members
index while serving (`IndexSaver`)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from draftpool.models import get_kind
from draftpool.pool import DrafterLoadError, load_pool


def load_members(s, info, target, pool_dir: Path, serve_dir: Path, out_dir: Path  # s: the ServeConfig
                 ) -> dict[str, tuple[str, Any]]:
    """The pool members to serve, in name order: trained ones from serve_dir (the pool, or the last exported
    version after a restart), model-free ones from the pool, or from <out_dir>/indexes/<name> where a previous run
    saved what it indexed."""
    trained = [k for k in s.kinds if get_kind(k).trained]
    free = [k for k in s.kinds if not get_kind(k).trained]
    models = load_pool(serve_dir, info, target, trained, at_least=0)[1] if trained else {}
    if free:
        for n, (k, m) in load_pool(pool_dir, info, target, free, at_least=0)[1].items():
            saved = out_dir / "indexes" / n
            if saved.is_dir():
                m = get_kind(k).load(saved, info, target)
                print(f"[online] resuming {k} member {n} from {saved}{_indexed(m)}", file=sys.stderr, flush=True)
            models[n] = (k, m)
    if not models:
        raise DrafterLoadError(f"{serve_dir} has no drafter of kind {s.kinds}")
    return {n: (k, m.to(s.device)) for n, (k, m) in sorted(models.items())}


def _indexed(member) -> str:
    """' (S sequences, T tokens indexed)' for a member with a suffix index (its sizes are at hand), else ''."""
    index = getattr(member, "index", None)
    if index is None:
        return ""
    seqs = sum(seg.n_seqs for seg in index.segments) + len(index.recent)
    return f" ({seqs} sequences, {index.n_tokens} tokens indexed)"


class IndexSaver:
    """Saves the members that learn by indexing answers (model-free) to <out_dir>/indexes/<name> (atomic) every
    `every` indexed answers and at the end."""

    def __init__(self, models: dict[str, tuple[str, Any]], out_dir: Path, info, every: int):
        self.models = {n: km for n, km in models.items() if not get_kind(km[0]).trained}
        self.out_dir, self.info, self.every = out_dir, info, every
        self.pending = 0
        self.saves = 0

    def answered(self, rec: dict) -> None:
        self.pending += int(bool(rec.get("learned")))
        if self.pending >= self.every:
            self.save()

    def save(self) -> None:
        if not self.pending:
            return
        for n, (k, m) in self.models.items():
            meta = {"kind": k, "online": {"saves": self.saves + 1}}
            get_kind(k).write(m, self.out_dir / "indexes" / n, self.info, meta)
        self.pending = 0
        self.saves += 1
