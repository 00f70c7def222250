"""Drafter models and their kinds: `get_kind(name)` is the one way from a pool manifest's "kind" to its code."""

from pathlib import Path

from draftpool.models.eagle3 import EAGLE3
from draftpool.models.folder import DrafterLoadError, read_json
from draftpool.models.kind import DrafterKind
from draftpool.models.llama import LLAMA
from draftpool.models.suffix import NGRAM, SUFFIX

KINDS: dict[str, DrafterKind] = {k.name: k for k in (EAGLE3, LLAMA, NGRAM, SUFFIX)}


def get_kind(name: str) -> DrafterKind:
    """The kind called `name`; ValueError naming the known kinds otherwise."""
    if name not in KINDS:
        raise ValueError(f"unknown drafter kind {name!r}; known: {', '.join(KINDS)}")
    return KINDS[name]


def kind_of_folder(path: str | Path) -> str:
    """The kind of the drafter in a folder: its draftpool.json "kind", else the kind whose architecture its
    config.json names (a folder from elsewhere); DrafterLoadError when neither says."""
    path = Path(path)
    if (path / "draftpool.json").is_file():
        kind = read_json(path / "draftpool.json").get("kind")
        if kind in KINDS:
            return kind
    if not (path / "config.json").is_file():
        raise DrafterLoadError(f"{path} is not a drafter folder (no config.json)")
    arch = read_json(path / "config.json").get("architectures")
    for kind in KINDS.values():
        if isinstance(arch, list) and kind.architecture in arch:
            return kind.name
    raise DrafterLoadError(f"{path}: cannot tell its drafter kind (draftpool.json names none of {list(KINDS)}, "
                           f"config.json architectures {arch!r})")
