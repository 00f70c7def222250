"""training/loop.py: the precision the loop resolves."""


def test_auto_mixed_precision_is_bf16_where_the_cpu_computes_it(monkeypatch):
    from training import loop

    monkeypatch.setattr(loop.torch.cuda, "is_available", lambda: False)
    monkeypatch.delenv("ACCELERATE_USE_DEEPSPEED", raising=False)
    for native in (True, False):
        monkeypatch.setattr(loop, "cpu_has_bf16", lambda native=native: native)
        assert loop.resolve_mixed_precision("auto") == ("bf16" if native else "no")
        assert loop.resolve_mixed_precision("no") == "no" and loop.resolve_mixed_precision("fp16") == "fp16"
    monkeypatch.setenv("ACCELERATE_USE_DEEPSPEED", "true")  # DeepSpeed keeps its config's precision
    assert loop.resolve_mixed_precision("auto") == "no"
