"""End-to-end runs of train_drafter.py with tiny data: resume after a real SIGKILL and the learning curve's time
budget on the real embedded target; 2-process DDP and DeepSpeed ZeRO-2 on CPU, the Llama two-stage pipeline and the
other whole runs on the tiny random Llama over the real vocabulary (the pipeline's plumbing, in seconds); every bad
input of the entry point."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch
from safetensors.torch import load_file

import training.kinds.eagle3 as kind_eagle3
import training.train_drafter as train_drafter
from data_gen.generate import run as run_data_gen
from data_gen.plan import DataGenConfig
from tests.shared import shared_dir
from training import accelerate_shim

ROOT = Path(__file__).resolve().parents[2]
ACC = ROOT / "tests" / "training" / "accelerate"
# 4 prompts per split: 8 train sequences (two temperatures) and 4 held-out ones per domain, of 16 new tokens each
TINY_GEN = {"max_prompts_per_split": 4, "max_new_tokens": 16, "train_temperatures": [0.0, 0.7], "batch_size": 4,
            "shard_size": 4, "samples_per_prompt": 0}


@pytest.fixture(scope="module")
def data_root(tmp_path_factory, target_info, target):
    """Tiny self-distilled sql and general data, made once for the session (and shared by the workers)."""
    model, tok = target

    def make(root: Path) -> None:
        for domain in ("sql", "general"):
            cfg = DataGenConfig(domain=domain, data_dir=str(root / "{domain}"), **TINY_GEN)
            run_data_gen(cfg, target_info, model, tok)

    return shared_dir(tmp_path_factory, "train-data", make)


@pytest.fixture(scope="module")
def tiny_data_root(tmp_path_factory, tiny_target_info, tiny_real_target):
    """The same tiny data, self-distilled by the tiny real-vocabulary target: runs on it add `on_tiny(...)` (its
    `target=`) and export to pools/<its slug>."""
    model, tok = tiny_real_target

    def make(root: Path) -> None:
        for domain in ("sql", "general"):
            cfg = DataGenConfig(domain=domain, data_dir=str(root / "{domain}"), target=tiny_target_info.name,
                                **TINY_GEN)
            run_data_gen(cfg, tiny_target_info, model, tok)

    return shared_dir(tmp_path_factory, "train-data-tiny-target", make)


def on_tiny(info) -> str:
    """The override that trains on the tiny real-vocabulary target (`tiny_target_info`)."""
    return f"target={info.name}"


def tiny_data(data_root: Path) -> list[str]:
    """Overrides that point a run at the tiny data (and its generation settings, so nothing is regenerated)."""
    gen = [f"data.gen.{k}={json.dumps(v)}" for k, v in TINY_GEN.items()]
    return [f"data.gen.data_dir={data_root}/{{domain}}", *gen]


def tiny_args(data_root: Path, tmp: Path, *extra: str, domain: str = "sql", drafter: str = "eagle3") -> list[str]:
    return ["--domain", domain, "--drafter", drafter, *tiny_data(data_root),
            f"run_dir={tmp}/run-{{domain}}-{{drafter}}", f"export.pools_dir={tmp}/pools", "train.batch_size=2",
            "train.max_len=96", "eval.max_sequences=3", "eval.depth=3", "eagle3.ttt_steps=3",
            "eagle3.draft_vocab_size=1024", "train.log_every=1", *extra]


def env() -> dict[str, str]:
    return {**os.environ, "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false"}


def run_cli(args: list[str], launcher: list[str] | None = None, timeout: int = 600) -> subprocess.CompletedProcess:
    cmd = (launcher or [sys.executable]) + [str(ROOT / "train_drafter.py"), *args]
    return subprocess.run(cmd, cwd=ROOT, env=env(), capture_output=True, text=True, timeout=timeout)


def head_tensors(pools: Path, name: str = "sql-eagle3",
                 slug: str = "smollm2-135m-instruct") -> dict[str, torch.Tensor]:
    return load_file(str(pools / slug / name / "model.safetensors"))


@pytest.mark.tier2
def test_resume_after_kill_matches_unkilled_run(data_root, tmp_path):
    steps = ["train.max_steps=6", "train.save_every=2"]  # 4 batches an epoch: the resumed run crosses into epoch 2
    full = run_cli(tiny_args(data_root, tmp_path / "a", *steps))
    assert full.returncode == 0, full.stderr[-3000:]
    # the same run, killed with SIGKILL once its first checkpoint is on disk, then started again
    args_b = tiny_args(data_root, tmp_path / "b", *steps)
    proc = subprocess.Popen([sys.executable, str(ROOT / "train_drafter.py"), *args_b], cwd=ROOT, env=env(),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    ckpt = tmp_path / "b" / "run-sql-eagle3" / "checkpoints"
    deadline = time.time() + 300
    while time.time() < deadline and not list(ckpt.glob("checkpoint_*/trainer_state.json")):
        assert proc.poll() is None, "the run ended before it could be killed"
        time.sleep(0.05)
    assert proc.poll() is None, "the run ended before it could be killed"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    done = sorted(int(p.name.split("_")[1]) for p in ckpt.glob("checkpoint_*") if (p / "trainer_state.json").exists())
    assert done and done[-1] < 2, done  # the last checkpoint (step 6) is number 2
    (ckpt / f"checkpoint_{done[-1] + 1}" / "model.safetensors").parent.mkdir(exist_ok=True)  # a save cut by a kill
    resumed = run_cli(args_b)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert "resuming from" in resumed.stdout + resumed.stderr
    a, b = head_tensors(tmp_path / "a" / "pools"), head_tensors(tmp_path / "b" / "pools")
    assert a.keys() == b.keys()
    for k in a:
        assert torch.equal(a[k], b[k]), f"{k} differs after resume"


def _check_distributed(out: subprocess.CompletedProcess, tmp: Path, slug: str) -> None:
    assert out.returncode == 0, (out.stdout + out.stderr)[-4000:]
    assert "training on 2 process(es)" in out.stdout + out.stderr
    assert "DistributedType.NO" not in out.stdout + out.stderr
    manifest = json.loads((tmp / "pools" / slug / "pool.json").read_text())
    ev = manifest["drafters"]["sql-eagle3"]["eval"]
    assert len(ev["top1_per_step"]) == 3 and all(0 <= x <= 1 for x in ev["top1_per_step"])
    # top-r agreement per step: rank 1 is the top-1 rate, rising with r (the rank rates `auto` weighs trees with)
    assert [len(row) for row in ev["topk_per_step"]] == [8] * 3
    for row, top1 in zip(ev["topk_per_step"], ev["top1_per_step"]):
        assert row[0] == pytest.approx(top1) and row == sorted(row) and row[-1] <= 1


@pytest.mark.tier2
def test_ddp_two_cpu_processes(tiny_data_root, tiny_target_info, tmp_path, monkeypatch):
    # accelerate 1.15's launcher starts a single process for MULTI_CPU configs; torchrun starts both ranks and
    # accelerate then runs them as MULTI_CPU DDP over gloo
    monkeypatch.setenv("ACCELERATE_USE_CPU", "true")
    launcher = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2", "--master_port", "29531"]
    out = run_cli(tiny_args(tiny_data_root, tmp_path, "train.max_steps=3", "train.grad_accum=2",
                            "train.max_grad_norm=0.25", on_tiny(tiny_target_info)), launcher)
    _check_distributed(out, tmp_path, tiny_target_info.slug)
    assert "gradient clipping 0.25" in out.stdout  # the recipe's clip reaches DeepSpeed's engine (it clips inside)


@pytest.mark.tier2
def test_deepspeed_zero2_two_cpu_processes(tiny_data_root, tiny_target_info, tmp_path):
    launcher = [sys.executable, "-m", "accelerate.commands.launch", "--config_file", str(ACC / "cpu_zero2.yaml")]
    out = run_cli(tiny_args(tiny_data_root, tmp_path, "train.max_steps=3", "train.grad_accum=2",
                            "train.max_grad_norm=0.25", on_tiny(tiny_target_info)), launcher)
    _check_distributed(out, tmp_path, tiny_target_info.slug)
    assert "gradient clipping 0.25" in out.stdout  # the recipe's clip reaches DeepSpeed's engine (it clips inside)


@pytest.mark.tier2
def test_llama_two_stages_lora_and_assistant_model(tiny_data_root, tmp_path, tiny_target_info, tiny_real_target,
                                                   capsys):
    """general pretrain (declared by the kind, run first by train_drafter) -> sql LoRA fine-tune -> exported folder
    works as assistant_model."""
    from transformers import LlamaForCausalLM

    args = tiny_args(tiny_data_root, tmp_path, "train.max_steps=2", "llama.finetune=lora", "llama.loss=jsd",
                     on_tiny(tiny_target_info), drafter="llama")  # the kind's name; its folders: <domain>-llama68m
    assert train_drafter.main(args) == 0
    pool = tmp_path / "pools" / tiny_target_info.slug
    out = capsys.readouterr().out
    assert f"no general drafter at {pool / 'general-llama68m'}: pretraining it first " \
           f"(recipes/general/llama68m.yaml)" in out
    assert out.index(f"exported {pool / 'general-llama68m'}") < out.index(f"exported {pool / 'sql-llama68m'}")
    manifest = json.loads((pool / "pool.json").read_text())
    assert {"general-llama68m", "sql-llama68m"} <= set(manifest["drafters"])
    assert manifest["drafters"]["sql-llama68m"]["init"].endswith("general-llama68m")
    assert manifest["drafters"]["sql-llama68m"]["preset"] == "llama-tiny"
    draft = LlamaForCausalLM.from_pretrained(pool / "sql-llama68m")
    assert not any("lora" in k for k in draft.state_dict())
    model, tok = tiny_real_target
    ids = tok.apply_chat_template([{"role": "user", "content": "Count rows in table t."}], add_generation_prompt=True,
                                  return_tensors="pt", return_dict=True)["input_ids"]
    plain = model.generate(ids, max_new_tokens=12, do_sample=False)
    assisted = model.generate(ids, max_new_tokens=12, do_sample=False, assistant_model=draft)
    assert torch.equal(plain, assisted)


@pytest.mark.tier2
def test_nan_loss_stops_with_clear_error_and_exports_nothing(tiny_data_root, tiny_target_info, tmp_path, capsys):
    rc = train_drafter.main(tiny_args(tiny_data_root, tmp_path, "train.max_steps=4", "train.lr=1e30",
                                      "train.max_grad_norm=0", on_tiny(tiny_target_info)))
    assert rc == 2
    assert "loss is" in capsys.readouterr().err
    assert not (tmp_path / "pools" / tiny_target_info.slug / "sql-eagle3").exists()


@pytest.mark.parametrize("args, message", [
    (["--domain", "cooking"], "known domains: sql, python"),
    pytest.param(["--domain", "sql", "eagle3.aux_layers=[2, 15, 31]"], "aux layer ids",
                 marks=pytest.mark.tier2),  # checked where the head is made: after the data and the target load
    (["--domain", "sql", "train.lr=fast"], "train.lr: expected a number"),
    (["--domain", "sql", "train.nosuch=1"], "unknown key train.nosuch"),
    (["--domain", "sql", "eval.batch_size=0"], "eval.batch_size must be >= 1"),
    (["--domain", "sql", "dtype=float8"], "dtype must be auto or one of float32, bfloat16, float16"),
    (["--domain", "sql", "eagle3.step_weight=-2"], "eagle3.step_weight must be > 0"),
    (["--domain", "sql", "eagle3.finetune=lora"], "set eagle3.init_from"),
    (["--domain", "sql", "eagle3.finetune=lora", "eagle3.init_from=x", "eagle3.lora_r=0"], "eagle3.lora_r"),
])
def test_bad_input_one_clear_error(args, message, tmp_path, request, capsys):
    """The configuration's errors come before any data is read (the tiny data only where the check needs it)."""
    if "aux layer ids" in message:  # the tiny real-vocabulary target's data: 4 layers, ids up to 3
        data = request.getfixturevalue("tiny_data_root")
        args = [*args, on_tiny(request.getfixturevalue("tiny_target_info"))]
    else:
        data = tmp_path / "no-data"
    rc = train_drafter.main(args + [f"run_dir={tmp_path}/run", f"export.pools_dir={tmp_path}/pools",
                                    f"data.gen.data_dir={data}/{{domain}}",
                                    *[f"data.gen.{k}={json.dumps(v)}" for k, v in TINY_GEN.items()]])
    assert rc == 2
    err = capsys.readouterr().err
    assert message in err and err.count("error:") == 1
    assert not (tmp_path / "pools").exists()


def test_what_would_fail_at_export_fails_before_training(tmp_path, capsys):
    """An output path under a regular file, or a corrupt pool manifest: one error before any training step (before
    the data is even read: there is none), and the pool is not touched."""
    data_root = tmp_path / "no-data"
    (tmp_path / "file").write_text("x")
    for extra, message in ((f"run_dir={tmp_path}/file/run", "is a file, not a folder"),
                           (f"export.pools_dir={tmp_path}/file/pools", "is a file, not a folder")):
        assert train_drafter.main(tiny_args(data_root, tmp_path, "train.max_steps=50", extra)) == 2
        assert message in capsys.readouterr().err
    pool = tmp_path / "pools" / "smollm2-135m-instruct"
    pool.mkdir(parents=True)
    for bad in ("{not json", "[1, 2]", '{"target": "x"}'):
        (pool / "pool.json").write_text(bad)
        assert train_drafter.main(tiny_args(data_root, tmp_path, "train.max_steps=50")) == 2
        err = capsys.readouterr().err
        assert str(pool / "pool.json") in err and err.count("error:") == 1
        assert (pool / "pool.json").read_text() == bad and list(pool.iterdir()) == [pool / "pool.json"]
    assert not (tmp_path / "run-sql-eagle3" / "checkpoints").exists()  # nothing was trained


@pytest.mark.parametrize("flag, value", [("--depth", "0"), ("--max-len", "1"), ("--max-sequences", "-1")])
def test_evaluate_cli_bad_numbers_one_error(flag, value, capsys):
    from training import evaluate

    with pytest.raises(SystemExit) as e:
        evaluate.main(["--drafter", "nowhere", "--domain", "sql", flag, value])
    assert e.value.code == 2
    assert f"{flag} must be >=" in capsys.readouterr().err


@pytest.mark.tier2
def test_two_runs_into_one_run_dir(tiny_data_root, tiny_target_info, tmp_path, capsys):
    from draftpool.io import run_lock

    args = tiny_args(tiny_data_root, tmp_path, "train.max_steps=1", on_tiny(tiny_target_info))
    with run_lock(tmp_path / "run-sql-eagle3"):  # another run holds the folder
        assert train_drafter.main(args) == 2
    assert f"in use by another run (pid {os.getpid()})" in capsys.readouterr().err
    assert train_drafter.main(args) == 0  # released: it runs


@pytest.mark.tier2
def test_llama_init_from_a_head_folder_is_refused(tiny_data_root, tiny_target_info, tmp_path, capsys):
    tiny = on_tiny(tiny_target_info)
    assert train_drafter.main(tiny_args(tiny_data_root, tmp_path, "train.max_steps=1", tiny)) == 0
    head_dir = tmp_path / "pools" / tiny_target_info.slug / "sql-eagle3"
    rc = train_drafter.main(tiny_args(tiny_data_root, tmp_path / "x", "train.max_steps=1", f"llama.init={head_dir}",
                                      tiny, drafter="llama68m"))
    assert rc == 2
    assert "holds a 'eagle3' drafter, not a 'llama' one" in capsys.readouterr().err


def test_empty_user_data_is_refused(tmp_path, capsys):
    (tmp_path / "empty.jsonl").write_text('{"prompt": "", "response": "x"}\n')
    rc = train_drafter.main(["--domain", "sql", f"data.user_dataset.path={tmp_path}/empty.jsonl",
                             "data.user_dataset.response_column=response", f"run_dir={tmp_path}/run",
                             f"export.pools_dir={tmp_path}/pools"])
    assert rc == 2
    assert "holds no non-empty prompt" in capsys.readouterr().err


@pytest.mark.tier2
def test_offline_target_cache_gives_the_same_head_as_the_online_target(tiny_data_root, tiny_target_info, tmp_path):
    """The cached features (aux + final hidden -> lm_head) reproduce the in-loop target: same trained weights."""
    steps = ["train.max_steps=3", on_tiny(tiny_target_info)]
    assert train_drafter.main(tiny_args(tiny_data_root, tmp_path / "online", *steps)) == 0
    assert train_drafter.main(tiny_args(tiny_data_root, tmp_path / "cached", *steps, "eagle3.target_cache=true")) == 0
    assert list((tmp_path / "cached" / "run-sql-eagle3" / "target_cache-float32").glob("*.safetensors"))
    slug = tiny_target_info.slug
    a, b = (head_tensors(tmp_path / run / "pools", slug=slug) for run in ("online", "cached"))
    for k in a:
        assert torch.allclose(a[k], b[k], atol=1e-5, rtol=1e-4), k


def test_cpu_run_uses_every_core_despite_accelerate_single_thread_default(monkeypatch):
    """`accelerate launch` exports OMP_NUM_THREADS=1; a single-process CPU run must still use all cores."""
    before = torch.get_num_threads()
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    monkeypatch.delenv("DRAFTPOOL_CPU_THREADS", raising=False)
    try:
        torch.set_num_threads(1)
        accelerate_shim.use_the_cores(SimpleNamespace(device=torch.device("cpu"), num_processes=1))
        assert torch.get_num_threads() == (os.cpu_count() or 1)
        monkeypatch.setenv("DRAFTPOOL_CPU_THREADS", "1")
        accelerate_shim.use_the_cores(SimpleNamespace(device=torch.device("cpu"), num_processes=1))
        assert torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(before)


@pytest.mark.tier2
def test_head_initialised_from_the_target_and_frozen_lm_head(tiny_data_root, tmp_path, tiny_real_target,
                                                             tiny_target_info):
    """init_from_target: lm_head rows = the target's output-embedding rows of the draft vocabulary, final norm =
    the target's; freeze_lm_head keeps those rows through training (the rest of the head still trains)."""
    model, _ = tiny_real_target
    out = model.get_output_embeddings().weight.float()
    assert train_drafter.main(tiny_args(tiny_data_root, tmp_path, "train.max_steps=2", "eagle3.init_from_target=true",
                                        "eagle3.freeze_lm_head=true", on_tiny(tiny_target_info))) == 0
    t = head_tensors(tmp_path / "pools", slug=tiny_target_info.slug)
    ids = torch.arange(t["d2t"].numel()) + t["d2t"].long()
    assert torch.equal(t["lm_head.weight"], out[ids])
    # the same run without freezing: lm_head moved off the target's rows, the norm started from the target's
    options = kind_eagle3.Eagle3Options(draft_vocab_size=64, init_from_target=True)
    head = kind_eagle3.make_eagle3(options, model, tiny_target_info, [{"response_ids": [5, 6, 7]}], seed=0)
    ids = torch.arange(64) + head.d2t
    assert torch.equal(head.lm_head.weight, out[ids]) and head.lm_head.weight.requires_grad
    assert torch.equal(head.norm.weight, model.get_decoder().norm.weight.float())


@pytest.mark.tier2
@pytest.mark.parametrize("vocab", ["base", "own"])
def test_a_low_rank_specialist_trains_adapters_over_its_base_and_exports_both(tiny_data_root, tiny_target_info,
                                                                            tiny_real_target, tmp_path, vocab):
    """eagle3.finetune=lora: the base head's weights kept, adapters trained (with lora_vocab=base on the lm_head
    too, over the base's vocabulary; with own, the head's own vocabulary and lm_head, trained whole); the folder
    holds the merged weights (what vLLM loads) and the adapters, whose delta is exactly merged - base."""
    from draftpool.models import low_rank
    from draftpool.models.eagle3 import load_eagle3

    tiny = on_tiny(tiny_target_info)
    assert train_drafter.main(tiny_args(tiny_data_root, tmp_path / "b", "train.max_steps=1", tiny)) == 0
    base_dir = tmp_path / "b" / "pools" / tiny_target_info.slug / "sql-eagle3"
    assert train_drafter.main(tiny_args(tiny_data_root, tmp_path, "train.max_steps=3", "train.lr=0.01",
                                        "eagle3.finetune=lora", "eagle3.lora_r=4", f"eagle3.init_from={base_dir}",
                                        f"eagle3.lora_vocab={vocab}", "eagle3.draft_vocab_size=512", tiny)) == 0
    model, _ = tiny_real_target
    emb = model.get_input_embeddings().weight
    base = load_eagle3(base_dir, tiny_target_info, emb)
    spec = load_eagle3(tmp_path / "pools" / tiny_target_info.slug / "sql-eagle3", tiny_target_info, emb)
    assert base.low_rank is None and spec.low_rank is not None
    low = spec.low_rank
    assert low.rank == 4 and low.base == low_rank.fingerprint(base)
    assert len(low.factors) == (9 if vocab == "base" else 8) and ("lm_head" in low.factors) == (vocab == "base")
    # the base's draft vocabulary (1,024 tokens), or its own of eagle3.draft_vocab_size
    assert torch.equal(spec.d2t, base.d2t) if vocab == "base" else spec.d2t.numel() == 512
    layers, base_layers = dict(spec.named_modules()), dict(base.named_modules())
    moved = 0
    for name, (a, b) in low.factors.items():
        d = low_rank.delta(a, b, low.scale)
        assert torch.allclose(layers[name].weight, base_layers[name].weight + d, atol=1e-6)
        moved += int(d.abs().max() > 0)
    assert moved == len(low.factors)  # every adapter trained (B starts at zero)
    assert torch.equal(spec.norm.weight, base.norm.weight)  # the rest of the base frozen
    meta = json.loads((tmp_path / "pools" / tiny_target_info.slug / "pool.json").read_text())
    assert meta["drafters"]["sql-eagle3"]["finetune"] == "lora"


@pytest.mark.tier2
def test_learning_curve_rows_and_a_time_budget(data_root, tmp_path):
    """train.curve_minutes ~ 0: one held-out evaluation per optimizer step in curve.jsonl (the last one equals the
    final eval.json: the hook evaluates the model being trained); train.budget_minutes plans the step count from
    timed probe steps (budget.json; --budget-minutes sets it; re-planned from the measured steps a tenth of the way
    in: tests/training/test_loop.py) and the run trains exactly that many."""
    assert train_drafter.main(tiny_args(data_root, tmp_path, "train.max_steps=3", "train.curve_minutes=1e-9")) == 0
    run = tmp_path / "run-sql-eagle3"
    rows = [json.loads(x) for x in (run / "curve.jsonl").read_text().splitlines()]
    assert [r["step"] for r in rows] == [1, 2, 3]
    assert all(a["train_seconds"] < b["train_seconds"] and a["tokens"] < b["tokens"] for a, b in zip(rows, rows[1:]))
    final = json.loads((run / "eval.json").read_text())
    assert rows[-1]["top1_per_step"] == final["top1_per_step"]
    assert rows[-1]["empirical_greedy_chain_length"] == final["empirical_greedy_chain_length"]
    assert rows[-1]["accept_per_step"] == final["accept_per_step"] != rows[0]["accept_per_step"]

    budget = tmp_path / "budget"
    assert train_drafter.main(tiny_args(data_root, budget, "--budget-minutes", "0.05", "train.save_every=1")) == 0
    plan = json.loads((budget / "run-sql-eagle3" / "budget.json").read_text())
    assert plan.get("probe_steps", plan["steps"]) == max(1, int(3.0 / plan["seconds_per_step"]))  # then re-planned
    states = [json.loads(p.read_text()) for p in (budget / "run-sql-eagle3").glob("checkpoints/*/trainer_state.json")]
    assert max(s["step"] for s in states) == plan["steps"]


def test_answer_samples_are_fixed_and_nested():
    rows = [{"id": f"r{i:02d}"} for i in range(20)]
    small, large = train_drafter.answer_sample(rows, 5), train_drafter.answer_sample(list(reversed(rows)), 12)
    assert len(small) == 5 and len(large) == 12 and small == large[:5]  # the input order does not matter
    assert small != rows[:5]  # a shuffle, not the first rows
    assert train_drafter.answer_sample(rows, 0) == rows and train_drafter.answer_sample(rows, 99) == rows


@pytest.mark.tier2
def test_runs_in_one_process_each_take_their_own_precision(tiny_data_root, tiny_target_info, tmp_path, monkeypatch):
    """An fp32 Accelerator built first in the process (a notebook's, another test's), then train_drafter with
    mixed_precision=auto on a CPU with bf16 units (forced: DRAFTPOOL_CPU_BF16=1) trains in bf16, and a run after it
    on a CPU without them in fp32: accelerate's process-wide state no longer fixes the first precision (it failed
    with "AcceleratorState has already been initialized and cannot be changed"). Each run leaves the process as it
    found it: accelerate's state, torch's thread count, the environment."""
    from accelerate import Accelerator
    from accelerate.state import AcceleratorState

    Accelerator(cpu=True)  # fp32
    made = []
    real = train_drafter.make_accelerator

    def spy(cfg, hint="runs"):
        accelerator = real(cfg, hint)
        made.append(accelerator.mixed_precision)
        return accelerator

    monkeypatch.setattr(train_drafter, "make_accelerator", spy)
    monkeypatch.setenv("ACCELERATE_GRADIENT_ACCUMULATION_STEPS", "3")  # make_accelerator drops it for its run
    monkeypatch.setenv("DRAFTPOOL_CPU_THREADS", "2")  # what a run sets (use_the_cores), other than the count before
    torch.set_num_threads(threads := 1)
    for forced, precision in (("1", "bf16"), ("0", "no")):
        monkeypatch.setenv("DRAFTPOOL_CPU_BF16", forced)
        args = tiny_args(tiny_data_root, tmp_path / forced, "train.max_steps=1", "eval.max_sequences=1",
                         "eagle3.ttt_steps=1", "eval.depth=1", on_tiny(tiny_target_info))
        assert train_drafter.main(args) == 0
        assert made[-1] == precision
        assert not AcceleratorState._shared_state and torch.get_num_threads() == threads
        assert os.environ["ACCELERATE_GRADIENT_ACCUMULATION_STEPS"] == "3"
    slug = tiny_target_info.slug
    assert head_tensors(tmp_path / "1" / "pools", slug=slug).keys() == head_tensors(tmp_path / "0" / "pools",
                                                                                    slug=slug).keys()


@pytest.mark.tier2
def test_a_bf16_target_run_records_its_precision_and_an_fp32_target_loads_it_with_one_line(
        tiny_data_root, tiny_target_info, tiny_real_target, tmp_path, caplog):
    """dtype=bfloat16: the target (and so its cached features, kept apart from fp32 ones) runs in bf16, the head
    trains and is evaluated in fp32 on those features; the head's metadata and the pool's manifest record bfloat16;
    an fp32 target loads the pool with one log line naming the head and both precisions, a bf16 one silently."""
    import logging

    from draftpool.pool import load_members
    from draftpool.target import load_target

    args = tiny_args(tiny_data_root, tmp_path, "train.max_steps=2", "eagle3.target_cache=true", "dtype=bfloat16",
                     on_tiny(tiny_target_info))
    assert train_drafter.main(args) == 0
    run = tmp_path / "run-sql-eagle3"
    cached = sorted((run / "target_cache-bfloat16").glob("*.safetensors"))
    assert cached and not (run / "target_cache-float32").exists()
    assert load_file(str(cached[0]))["aux"].dtype == torch.bfloat16
    pool = tmp_path / "pools" / tiny_target_info.slug
    meta = json.loads((pool / "sql-eagle3" / "draftpool.json").read_text())
    manifest = json.loads((pool / "pool.json").read_text())
    assert meta["target_dtype"] == manifest["drafters"]["sql-eagle3"]["target_dtype"] == "bfloat16"
    assert meta["precision"] == {"dtype": "bfloat16", "setting": "bfloat16", "use": "batch"}
    assert 0 <= meta["eval"]["top1_per_step"][0] <= 1 and meta["eval"]["target_dtype"] == "bfloat16"
    head = load_file(str(pool / "sql-eagle3" / "model.safetensors"))
    assert all(t.dtype == torch.float32 for k, t in head.items() if t.is_floating_point())
    with caplog.at_level(logging.WARNING, logger="draftpool.pool"):
        load_members(pool, tiny_target_info, tiny_real_target[0])  # fp32
        lines = [r.getMessage() for r in caplog.records if r.name == "draftpool.pool"]
        assert len(lines) == 1 and "runs in float32; sql-eagle3 trained against it in bfloat16" in lines[0]
        caplog.clear()
        load_members(pool, tiny_target_info, load_target(tiny_target_info, "cpu", torch.bfloat16)[0])
        assert not [r for r in caplog.records if r.name == "draftpool.pool"]
