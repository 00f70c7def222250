"""Inside vLLM's worker processes: load a published EAGLE-3 head version into the running engine's drafter.

Passed to vLLM as `worker_extension_cls="online.vllm.reload.DrafterReload"` (the repository root on PYTHONPATH); vLLM
mixes the class into each worker, and `collective_rpc("draftpool_load_drafter", args=(head_dir,))` (or the dev
server's POST /collective_rpc) runs it on every worker. The engine core handles such a call between two engine steps,
never during one, so a step drafts with the old head or the new one, never a mix (a torn version).

The drafter's linear layers are repacked for the CPU / GPU kernels after loading (on CPU their `.weight` is emptied),
so a plain in-place copy would be ignored: the load goes through vLLM's layerwise reload (restore the layers' original
shapes, load, re-run the post-load processing, copy into the original storage), as its own weight-update path does.
Tensors of modules the drafter shares with the target (its embedding; the lm_head when the head has none) are never
loaded: the target is not touched.

Runs in the vLLM environment: imports torch, safetensors and vllm only (vLLM's internals through online/vllm/shim.py,
which checks vLLM's version first), never draftpool.
"""

from __future__ import annotations

import hashlib
import os

import torch

from online.vllm import shim as vllm_shim


def _shared_prefixes(model) -> tuple[str, ...]:
    """Tensor names of modules the drafter borrows from the target (never written)."""
    shared = []
    if not getattr(model, "has_own_embed_tokens", False):
        shared.append("embed_tokens.")
    if not getattr(model, "has_own_lm_head", True):
        shared.append("lm_head.")
    return tuple(shared)


def _digest(tensors) -> str:
    h = hashlib.sha256()
    for name, t in tensors:
        h.update(name.encode())
        h.update(t.detach().to("cpu", torch.float32).contiguous().numpy().tobytes())
    return h.hexdigest()[:16]


class DrafterReload:
    """Worker methods (prefixed draftpool_ so they never collide with vLLM's own)."""

    def _draftpool_drafter(self):
        runner = self.model_runner
        model = runner.get_draft_model() if hasattr(runner, "get_draft_model") else None
        if model is None:
            raise RuntimeError("this vLLM engine has no EAGLE-3 drafter (start it with a speculative_config)")
        return model

    def draftpool_load_drafter(self, head_dir: str) -> dict:
        """Load `head_dir`/model.safetensors (a draftpool head folder, flat layout) into the live drafter.
        -> {"loaded": tensor count, "skipped": shared tensors not written, "seconds"}"""
        import time

        from safetensors.torch import load_file

        t0 = time.perf_counter()
        model = self._draftpool_drafter()
        tensors = load_file(os.path.join(head_dir, "model.safetensors"))
        shared = _shared_prefixes(model)
        keep = {k: v for k, v in tensors.items() if not k.startswith(shared)}
        d2t = getattr(model, "draft_id_to_target_id", None)
        if "d2t" in keep and d2t is not None and keep["d2t"].shape != d2t.shape:
            raise ValueError(f"{head_dir}: draft vocabulary of {keep['d2t'].numel()} tokens, the engine's drafter "
                             f"has {d2t.numel()}")
        vllm_shim.reload_weights(model, iter(keep.items()), self.vllm_config.speculative_config.draft_model_config)
        return {"loaded": len(keep), "skipped": sorted(set(tensors) - set(keep)),
                "seconds": time.perf_counter() - t0}

    @torch.no_grad()
    def draftpool_check_drafter(self, head_dir: str, probe_rows: int = 3) -> dict:
        """What the engine computes with, against `head_dir`'s tensors: the max abs difference of every linear
        layer's output on a random probe (the packed kernels) and of every tensor the layers keep (norms, lm_head,
        d2t), plus a digest of the target's parameters (to show it never changes). TP = 1 layouts."""
        from safetensors.torch import load_file

        model = self._draftpool_drafter()
        ref = {k: v.float() for k, v in load_file(os.path.join(head_dir, "model.safetensors")).items()}
        gen = torch.Generator().manual_seed(0)
        layer = model.model.layers[0]
        attn, mlp = layer.self_attn, layer.mlp
        linears = {  # engine module -> the checkpoint rows it computes, in order
            "qkv_proj": (attn.qkv_proj, ["q_proj", "k_proj", "v_proj"], "midlayer.self_attn."),
            "o_proj": (attn.o_proj, ["o_proj"], "midlayer.self_attn."),
            "gate_up_proj": (mlp.gate_up_proj, ["gate_proj", "up_proj"], "midlayer.mlp."),
            "down_proj": (mlp.down_proj, ["down_proj"], "midlayer.mlp."),
            "fc": (model.model.fc, ["fc"], ""),
        }
        diffs = {}
        for name, (mod, parts, prefix) in linears.items():
            w = torch.cat([ref[f"{prefix}{p}.weight"] for p in parts])  # [out, in]
            x = torch.randn(probe_rows, w.shape[1], generator=gen)
            dtype = next((p.dtype for p in mod.parameters() if p.is_floating_point()), torch.float32)
            dev = next((p.device for p in mod.parameters()), torch.device("cpu"))
            out = mod(x.to(dev, dtype))
            out = out[0] if isinstance(out, tuple) else out
            diffs[name] = float((out.float().cpu() - x @ w.T).abs().max())
        kept = {"midlayer.input_layernorm.weight": layer.input_layernorm.weight,
                "midlayer.hidden_norm.weight": layer.hidden_norm.weight,
                "midlayer.post_attention_layernorm.weight": layer.post_attention_layernorm.weight,
                "norm.weight": model.model.norm.weight}
        if "lm_head." not in _shared_prefixes(model):
            kept["lm_head.weight"] = model.lm_head.weight
        for name, t in kept.items():
            diffs[name] = float((t.float().cpu() - ref[name]).abs().max())
        if "d2t" in ref and getattr(model, "draft_id_to_target_id", None) is not None:
            diffs["d2t"] = float((model.draft_id_to_target_id.cpu().long() - ref["d2t"].long()).abs().max())
        return {"diffs": diffs, "target_digest": self.draftpool_target_digest()}

    @torch.no_grad()
    def draftpool_target_digest(self) -> str:
        """A digest of what the target computes with: its parameters as stored, and the output of each of its
        linear layers on a fixed probe (the packed kernels, whose `.weight` is emptied on CPU)."""
        linear = vllm_shim.linear_base()

        target = self.model_runner.get_model()
        gen = torch.Generator().manual_seed(0)
        outs = []
        for name, mod in target.named_modules():
            if isinstance(mod, linear):
                p = next(mod.parameters())
                x = torch.randn(2, mod.input_size, generator=gen).to(p.device, p.dtype if p.is_floating_point()
                                                                     else torch.float32)
                out = mod(x)
                outs.append((name, out[0] if isinstance(out, tuple) else out))
        return _digest(sorted(target.named_parameters()) + outs)
