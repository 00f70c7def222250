"""The pool members a server decodes with: trained ones from the pool (or its last exported version), model-free
ones from the pool or from what a previous run indexed (`serving_members`), and the saving of what model-free members
index while serving (`IndexSaver`)."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

from draftpool.models import get_kind
from draftpool.models.folder import DrafterLoadError
from draftpool.pool import Member, load_members
from online.serve.request import Served


def serving_members(s, info, target, pool_dir: Path, serve_dir: Path, out_dir: Path) -> list[Member]:
    """The pool members to serve (`s`: the ServeConfig), in name order, on the server's device: trained ones from
    serve_dir (the pool, or the last exported version after a restart), model-free ones from the pool, or from
    <out_dir>/indexes/<name> where a previous run saved what it indexed."""
    trained = [k for k in s.kinds if get_kind(k).trained]
    free = [k for k in s.kinds if not get_kind(k).trained]
    members = load_members(serve_dir, info, target, trained, at_least=0) if trained else []
    for m in load_members(pool_dir, info, target, free, at_least=0) if free else []:
        saved = out_dir / "indexes" / m.name
        if saved.is_dir():
            m = replace(m, module=get_kind(m.kind).load(saved, info, target))
            held = get_kind(m.kind).describe(m.module)
            print(f"[online] resuming {m.kind} member {m.name} from {saved}{f' ({held})' if held else ''}",
                  file=sys.stderr, flush=True)
        members.append(m)
    if not members:
        raise DrafterLoadError(f"{serve_dir} has no drafter of kind {s.kinds}")
    dtype = next(target.parameters()).dtype  # rule: heads run in the target's precision (its features' dtype)
    return [replace(m, module=m.module.to(s.device, dtype) if get_kind(m.kind).trained else m.module.to(s.device))
            for m in sorted(members, key=lambda m: m.name)]


class IndexSaver:
    """Saves the members that learn by indexing answers (model-free) to <out_dir>/indexes/<name> (atomic) every
    `every` indexed answers and at the end."""

    def __init__(self, members: list[Member], out_dir: Path, info, every: int):
        self.members = [m for m in members if not get_kind(m.kind).trained]
        self.out_dir, self.info, self.every = out_dir, info, every
        self.pending = 0
        self.saves = 0

    def answered(self, served: Served) -> None:
        self.pending += int(bool(served.learned))
        if self.pending >= self.every:
            self.save()

    def save(self) -> None:
        if not self.pending:
            return
        for m in self.members:
            meta = {"kind": m.kind, "online": {"saves": self.saves + 1}}
            get_kind(m.kind).write(m.module, self.out_dir / "indexes" / m.name, self.info, meta)
        self.pending = 0
        self.saves += 1
