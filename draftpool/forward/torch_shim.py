"""The one read of torch's private module-hook registries (`torch.nn.modules.module._global_forward_hooks` and
`_global_forward_pre_hooks`), for the lean probe's memo: a model run under global hooks is never memoised.

Read on torch 2.13.0 (CPU build); `CHECKED` is pyproject.toml's torch range (>=2.4,<2.15), over which the
registries keep these names; a torch outside them still works
safely (the hooks are reported as possibly set, so nothing is memoised and the probe reruns), and
tests/draftpool/forward/test_torch_shim.py fails loudly so that the read is checked again before the range widens."""

from __future__ import annotations

import torch

from draftpool.version_guard import check_version

CHECKED = ((2, 4), (2, 15))  # pyproject.toml's torch range: the registries have these names through it
CHECKED_ON = "torch 2.13.0+cpu"


def check() -> None:
    """UncheckedVersionError when the installed torch is outside CHECKED."""
    check_version("torch", torch.__version__, *CHECKED, "draftpool/forward/torch_shim.py", CHECKED_ON)


def global_hooks_set() -> bool:
    """True when a global forward (pre-)hook is registered, or when this torch keeps them elsewhere (unknown: the
    caller must assume hooks)."""
    module = torch.nn.modules.module
    hooks = getattr(module, "_global_forward_hooks", None)
    pre = getattr(module, "_global_forward_pre_hooks", None)
    if hooks is None or pre is None:
        return True
    return bool(hooks) or bool(pre)
