"""Self-distillation throughput: the engine backend (continuous batching) beside the HF and vLLM backends, on the
same prompts and lengths, with the machine's physical frame.

    python -m benchmarks.datagen_backends --domain sql --prompts 128 --max-new-tokens 96 \
        --hf-batch 16,64 --engine-slots 16,32,64,128 --engine-bf16 64 --vllm-seqs '' --out runs/bench/datagen

Each setting generates the same greedy answers (train split, temperature 0, one shard holding every prompt, so each
backend batches as wide as its setting allows) into its own data folder through `data_gen.generate.run`, the code
path users run. tok/s = new tokens / generation seconds (the model load and vLLM's engine start-up are reported
apart). Greedy answers are compared with the first setting's (the reference): the share identical token for token,
the mean common-prefix share and the first differing token of each answer that differs.

Physical frame: the FLOPs of a new token (every real row through the decoder's linears, the shared prompt prefix run
once, plus one lm_head row per new token; attention left out) against the rate the target's own linears run at here
(the engine's prepacked kernels at the largest slot count, every layer's weights in turn, timed before any setting
runs): the fastest this machine can generate these answers.
Writes results.json and table.md to --out.
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from typing import Any

import torch

from benchmarks import harness
from data_gen.domains import check_domain
from data_gen.generate import load_distilled, run
from data_gen.plan import DataGenConfig
from draftpool.config import ConfigError, load_config
from draftpool.forward.timing import median_time


def _setting(args, name: str, extra: list[str]) -> DataGenConfig:
    over = [f"data_dir={Path(args.out) / name}", f"max_prompts_per_split={args.prompts}", "train_temperatures=[0.0]",
            "held_out_temperatures=[]", f"max_new_tokens={args.max_new_tokens}", f"shard_size={args.prompts}",
            "samples_per_prompt=0", "device=cpu", f"target={args.target}", f"domain={args.domain}", *extra]
    return load_config(DataGenConfig, f"recipes/{args.domain}/data_gen.yaml", over)


def prefix_share(a: list[int], b: list[int]) -> float:
    """Common-prefix length / the longer answer's length (1.0 for two identical answers, empty ones included)."""
    if a == b:
        return 1.0
    n = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    return n / max(len(a), len(b))


def linear_flops(model) -> tuple[int, int]:
    """(FLOPs of one row through the decoder's linear layers, FLOPs of one lm_head row): 2 per weight."""
    body = sum(m.weight.numel() for m in model.get_decoder().layers.modules() if isinstance(m, torch.nn.Linear))
    return 2 * body, 2 * model.get_output_embeddings().weight.numel()


@torch.inference_mode()
def linear_rates(model, rows: int, reps: int = 5) -> tuple[float, float]:
    """(FLOP/s of the decoder's linears, FLOP/s of the lm_head) on `rows` rows, as the engine runs them (the lean
    forward's prepacked weights where this CPU packs the dtype), every layer's own weights in turn as a pass streams
    them: the median of `reps` timed runs after an untimed one."""
    from draftpool.forward.lean import LeanForward

    lean = LeanForward(model, pad_single=False)
    cfg = model.config.get_text_config()
    x_h = torch.randn(rows, cfg.hidden_size, dtype=lean.dtype)
    x_i = torch.randn(rows, cfg.intermediate_size, dtype=lean.dtype)

    def body() -> None:
        for layer in lean.layers:  # q/k/v, o, gate/up, down of every layer
            layer[1](x_h), layer[2](x_h), layer[4](x_h), layer[6](x_i)

    def timed(fn) -> float:
        fn()
        return median_time(fn, torch.device("cpu"), reps)

    body_s, head_s = timed(body), timed(lambda: lean.lm_head(x_h))
    body_flops, head_flops = linear_flops(model)
    return rows * body_flops / body_s, rows * head_flops / head_s


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = harness.parser("benchmarks.datagen_backends", __doc__)
    harness.add_common(ap, out="runs/bench/datagen")
    ap.add_argument("--domain", default="sql")
    ap.add_argument("--prompts", type=int, default=32)
    ap.add_argument("--max-new-tokens", type=int, default=96)
    ap.add_argument("--hf-batch", default="16,64", help="HF backend batch sizes ('' = none; the first setting run is "
                                                          "the reference: hf, then engine, then vllm)")
    ap.add_argument("--engine-slots", default="16,32,64,128", help="engine backend slot counts ('' = none)")
    ap.add_argument("--engine-bf16", default="", help="engine slot counts to run in bf16 too ('' = none)")
    ap.add_argument("--vllm-seqs", default="8,32", help="vLLM max_num_seqs settings ('' = skip vLLM)")
    args = ap.parse_args(argv)
    check_domain(args.domain)
    try:
        widths = {k: [int(x) for x in harness.csv(v)] for k, v in
                  (("hf", args.hf_batch), ("engine", args.engine_slots), ("bf16", args.engine_bf16),
                   ("vllm", args.vllm_seqs))}
    except ValueError:
        raise ConfigError("--hf-batch, --engine-slots, --engine-bf16 and --vllm-seqs take comma lists of integers"
                          ) from None
    out = Path(args.out)
    if out.exists():  # every setting generates afresh: old folders would be reused, not timed
        shutil.rmtree(out)
    info = harness.resolve(args)
    t0 = time.perf_counter()
    target = harness.load_target(args, info)
    model, tok = target.model, target.tok
    load_s = time.perf_counter() - t0
    settings = [(f"hf-b{b}", "hf", b, ["backend=hf", f"batch_size={b}"]) for b in widths["hf"]]
    settings += [(f"engine-s{b}", "engine", b, ["backend=engine", f"batch_size={b}"]) for b in widths["engine"]]
    settings += [(f"engine-s{b}-bf16", "engine", b, ["backend=engine", f"batch_size={b}", "dtype=bfloat16"])
                 for b in widths["bf16"]]
    settings += [(f"vllm-s{s}", "vllm", s, ["backend=vllm", f"vllm.max_num_seqs={s}"])
                 for s in widths["vllm"]]
    if not settings:
        raise ConfigError("no setting to run")
    rates = None
    if widths["engine"]:  # measured first, on a machine no setting has loaded yet
        rates = linear_rates(model, max(widths["engine"]))
    bf16 = None
    rows, answers = [], {}
    for name, backend, width, extra in harness.progress(settings, "settings", unit="setting"):
        harness.log.info("[%s]", name)
        if name.endswith("-bf16") and bf16 is None:
            bf16 = harness.load_target(args, info, device="cpu", dtype="bfloat16").model
        run(_setting(args, name, extra), info, None if backend == "vllm" else bf16 if name.endswith("-bf16")
            else model, tok)
        log = json.loads((out / name / "runs.jsonl").read_text().splitlines()[-1])
        gen_s = log.get("generate_s", log["seconds"])
        answers[name] = {r["prompt_id"]: r["response_ids"] for r in load_distilled(out / name).to_list()}
        rows.append({"setting": name, "backend": backend, "width": width, "tokens": log["new_tokens"],
                     "generate_s": gen_s, "tok_s": log["new_tokens"] / gen_s,
                     "startup_s": log.get("startup_s", load_s), "wall_s": log["seconds"],
                     **({"rows": log["rows"], "passes": log["passes"]} if "rows" in log else {}),
                     **({"vllm_version": log["vllm_version"]} if "vllm_version" in log else {})})
    ref = answers[settings[0][0]]
    for row in rows:
        got = answers[row["setting"]]
        row["identical"] = sum(got[p] == ref[p] for p in ref) / len(ref)
        row["prefix_share"] = sum(prefix_share(got[p], ref[p]) for p in ref) / len(ref)
        row["first_differences"] = {p: next((i for i, (x, y) in enumerate(zip(got[p], ref[p])) if x != y),
                                            min(len(got[p]), len(ref[p]))) for p in ref if got[p] != ref[p]}
    best = {b: max((r for r in rows if r["backend"] == b and not r["setting"].endswith("bf16")),
                   key=lambda r: r["tok_s"], default=None) for b in ("hf", "engine", "vllm")}
    frame = None
    if best["engine"] is not None:
        body, head = linear_flops(model)
        body_rate, head_rate = rates
        e = best["engine"]
        seconds = e["rows"] * body / body_rate + e["tokens"] * head / head_rate
        frame = {"body_flops_per_row": body, "head_flops_per_token": head, "body_flop_s": body_rate,
                 "head_flop_s": head_rate, "rows_per_new_token": e["rows"] / e["tokens"],
                 "ceiling_tok_s": e["tokens"] / seconds, "at_rows": max(widths["engine"])}
    ratio = {f"{a}/{b}": best[a]["tok_s"] / best[b]["tok_s"] for a, b in (("engine", "hf"), ("vllm", "hf"))
             if best[a] and best[b]}
    report = {"target": info.name, "domain": args.domain, "prompts": args.prompts,
              "max_new_tokens": args.max_new_tokens, "reference": settings[0][0], "rows": rows,
              "best_ratio": ratio, "physical_frame": frame}
    lines = [harness.markdown_table(
        ["setting", "tok/s (generation)", "tokens", "generation s", "start-up s", f"identical to {settings[0][0]}",
         "common prefix", "first differing token"],
        [[r["setting"], f"{r['tok_s']:.1f}", r["tokens"], f"{r['generate_s']:.1f}", f"{r['startup_s']:.1f}",
          f"{r['identical']:.2f}", f"{r['prefix_share']:.2f}",
          ", ".join(map(str, sorted(r["first_differences"].values()))) or "-"] for r in rows])]
    for k, v in ratio.items():
        lines.append(f"\nbest {k} tok/s: {v:.2f}x")
    if frame is not None:
        lines.append(f"\nphysical frame at {frame['at_rows']} rows: decoder linears {frame['body_flop_s'] / 1e9:.0f} "
                     f"GFLOP/s, lm_head {frame['head_flop_s'] / 1e9:.0f} GFLOP/s; {frame['rows_per_new_token']:.2f} "
                     f"rows per new token x {frame['body_flops_per_row'] / 1e6:.0f} MFLOP + "
                     f"{frame['head_flops_per_token'] / 1e6:.0f} MFLOP lm_head -> ceiling "
                     f"{frame['ceiling_tok_s']:.0f} tok/s (linears only)")
    harness.write_results(out, report, "\n".join(lines))
    print("\n".join(lines))
    return report


if __name__ == "__main__":
    raise SystemExit(harness.cli(main))
