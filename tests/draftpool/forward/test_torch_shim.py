"""The read of torch's private global-hook registries: it sees a registered hook, it assumes hooks when the registries
are gone, and the installed torch is one it was checked on (a new torch fails here until the read is re-checked)."""

import pytest
import torch

from draftpool.forward import torch_shim
from draftpool.version_guard import UncheckedVersionError


def test_installed_torch_is_a_checked_version():
    torch_shim.check()


def test_an_unchecked_torch_is_refused(monkeypatch):
    monkeypatch.setattr(torch, "__version__", "2.99.0")
    with pytest.raises(UncheckedVersionError, match="torch 2.99.0 is outside"):
        torch_shim.check()


def test_a_global_hook_is_seen_and_missing_registries_count_as_hooks(monkeypatch):
    assert not torch_shim.global_hooks_set()
    handle = torch.nn.modules.module.register_module_forward_hook(lambda m, i, o: None)
    try:
        assert torch_shim.global_hooks_set()
    finally:
        handle.remove()
    assert not torch_shim.global_hooks_set()
    monkeypatch.delattr(torch.nn.modules.module, "_global_forward_hooks")
    assert torch_shim.global_hooks_set()
