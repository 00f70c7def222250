"""training/loop.py: the precision the loop resolves (DRAFTPOOL_CPU_BF16 forcing either branch of auto on any CPU),
its learning-rate schedule, and a time budget whose probe was wrong re-planned from the measured steps."""

from __future__ import annotations

import io
import json

import pytest
import torch


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


def test_the_environment_forces_either_bf16_branch_on_any_cpu(monkeypatch):
    """DRAFTPOOL_CPU_BF16=1 / 0: the CPU's answer whatever its flags say (auto's bf16 branch on an AVX2 machine,
    or fp32 on an AMX one); anything else is one clear error; unset, /proc/cpuinfo decides."""
    from draftpool.config import ConfigError
    from training import loop

    monkeypatch.setattr(loop.torch.cuda, "is_available", lambda: False)
    monkeypatch.delenv("ACCELERATE_USE_DEEPSPEED", raising=False)
    for flags, native in (("flags\t: fpu avx2 amx_bf16\n", True), ("flags\t: fpu avx2\n", False)):
        monkeypatch.setattr("builtins.open", lambda *a, flags=flags, **k: io.StringIO(flags))
        monkeypatch.delenv("DRAFTPOOL_CPU_BF16", raising=False)
        assert loop.cpu_has_bf16() is native
        for forced, want in (("1", "bf16"), ("0", "no")):
            monkeypatch.setenv("DRAFTPOOL_CPU_BF16", forced)
            assert loop.cpu_has_bf16() is (want == "bf16") and loop.resolve_mixed_precision("auto") == want
            assert loop.resolve_mixed_precision("no") == "no"  # an explicit precision is the config's
    monkeypatch.setenv("DRAFTPOOL_CPU_BF16", "yes")
    with pytest.raises(ConfigError, match="DRAFTPOOL_CPU_BF16 must be 1 or 0"):
        loop.resolve_mixed_precision("auto")


@pytest.mark.parametrize("warmup,total,floor", [(1, 10, 0.1), (5, 100, 0.0), (30, 597, 0.1), (0, 7, 0.5)])
def test_the_schedule_is_the_library_one(warmup, total, floor):
    from transformers import get_cosine_with_min_lr_schedule_with_warmup

    from training.loop import CosineSchedule

    opt = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=1.0)
    ref = get_cosine_with_min_lr_schedule_with_warmup(opt, warmup, total, min_lr_rate=floor).lr_lambdas[0]
    ours = CosineSchedule(warmup, total, floor)
    assert all(ours(s) == pytest.approx(ref(s), abs=1e-12) for s in range(total + 1))


def test_a_budget_whose_probe_was_too_fast_is_replanned(tmp_path, monkeypatch):
    """The probe steps take 20 ms, the real ones 80 ms (as when the optimizer or longer batches cost more than the
    probe saw): the probe's plan would train ~4x the budget; the re-plan a tenth of the way in brings the step count
    down to what the measured steps allow, the run trains exactly that many and the schedule ends on them. The
    loop's clock is a fake one the loss advances: the outcome does not depend on the machine's load."""
    from types import SimpleNamespace

    from accelerate import Accelerator

    from training import loop
    from training.data import ResponseDataset
    from training.loop import OptimConfig, train

    calls = []
    now = [1000.0]
    monkeypatch.setattr(loop, "time", SimpleNamespace(perf_counter=lambda: now[0]))

    def slow_loss(model, batch):
        calls.append(1)
        now[0] += 0.02 if len(calls) <= 3 else 0.08  # the probe's 3 forward+backward, then the real steps
        return model(batch["input_ids"][:, :4].float()).pow(2).mean(), {}

    rows = [{"prompt_ids": [1, 2], "response_ids": [3, 4, 5, 6]} for _ in range(16)]
    cfg = OptimConfig(lr=1e-3, batch_size=4, budget_minutes=0.05, save_every=1000, log_every=1000)
    model = torch.nn.Linear(4, 1)
    lrs = []
    train(Accelerator(cpu=True), cfg, model, ResponseDataset(rows, 64), 0, slow_loss, tmp_path,
          on_step=lambda m, step, total, secs, toks: lrs.append((step, total)))
    plan = json.loads((tmp_path / "budget.json").read_text())
    assert plan["probe_steps"] >= 100  # 3 s / ~20 ms
    assert plan["replanned_at"] == max(2, plan["probe_steps"] // 10)
    assert plan["steps"] <= plan["probe_steps"] / 2 and plan["steps"] > plan["replanned_at"]
    assert len(calls) - 3 == plan["steps"] == lrs[-1][0] == lrs[-1][1]  # trained exactly the re-planned steps
    ckpt = next(tmp_path.glob("checkpoints/*/trainer_state.json")).parent
    assert json.loads((ckpt / "trainer_state.json").read_text())["step"] == plan["steps"]
    sched = torch.load(ckpt / "custom_checkpoint_0.pkl", weights_only=True)  # the scheduler's state, saved
    assert sched["lr_lambdas"][0]["total"] == plan["steps"]  # a resume keeps the re-planned schedule
    assert sched["_last_lr"][0] == pytest.approx(cfg.lr * cfg.min_lr_ratio)  # and it ended at its floor
