"""The registry of drafter kinds: `get_kind(name)` is the one way from a pool manifest's "kind" to its code, and
`part(kind, "decoder" | "trainer")` the one way to the parts a kind declares in the layers above (by dotted path,
imported on first use: this layer imports neither specsel nor training)."""

import importlib
from pathlib import Path
from typing import Any, Literal

from draftpool.models.eagle3 import EAGLE3
from draftpool.models.folder import DrafterLoadError, read_json
from draftpool.models.kind import Capabilities, DrafterKind
from draftpool.models.llama import LLAMA
from draftpool.models.suffix import NGRAM, SUFFIX

KINDS: dict[str, DrafterKind] = {k.name: k for k in (EAGLE3, LLAMA, NGRAM, SUFFIX)}


def get_kind(name: str) -> DrafterKind:
    """The kind called `name`; ValueError naming the known kinds otherwise."""
    if name not in KINDS:
        raise ValueError(f"unknown drafter kind {name!r}; known: {', '.join(KINDS)}")
    return KINDS[name]


def kinds_with(capability: str) -> list[str]:
    """The registered kinds whose `capabilities` say `capability` (e.g. "stackable", "step_drafter", "vllm")."""
    if capability not in Capabilities.__dataclass_fields__:
        raise ValueError(f"no capability {capability!r}; known: {', '.join(Capabilities.__dataclass_fields__)}")
    return [name for name, k in KINDS.items() if getattr(k.capabilities, capability)]


# where each declared part must live: the layer that may hold it (tests/test_import_cycles.py and tests/test_layers.py
# keep the imports of those layers pointing down to this one)
PART_LAYERS = {"decoder": "specsel.decoding.", "trainer": "training."}


def part(kind: str | DrafterKind, which: Literal["decoder", "trainer"]) -> Any:
    """The object a kind's `decoder` / `trainer` path names ("package.module:attribute"), imported now; ValueError
    when the kind declares none or the path leaves its layer (PART_LAYERS), ImportError / AttributeError (naming
    the path) when it does not resolve."""
    k = get_kind(kind) if isinstance(kind, str) else kind
    path = getattr(k, which)
    if not path:
        raise ValueError(f"drafter kind {k.name!r} declares no {which}")
    module, _, attr = path.partition(":")
    if not module.startswith(PART_LAYERS[which]) or not attr:
        raise ValueError(f"drafter kind {k.name!r}: {which} {path!r} must be 'module:attribute' under "
                         f"{PART_LAYERS[which]}")
    obj = importlib.import_module(module)
    for name in attr.split("."):
        try:
            obj = getattr(obj, name)
        except AttributeError:
            raise AttributeError(f"drafter kind {k.name!r}: {which} {path!r} does not resolve ({name!r})") from None
    return obj


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
