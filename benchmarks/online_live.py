"""The live parts of the online benchmark (`benchmarks/online.py`): the real AdaptiveServer and trainer process.

2. `live_part`: N shift-domain requests served without a trainer, with a saturated trainer whose versions are not
   swapped in (the decode slowdown the trainer causes), and adapting with the trainer SIGKILLed half-way.
3. `soak`: many requests through the real server + trainer process on a tiny random target: memory and drops.
"""

from __future__ import annotations

import copy
import os
import signal
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import torch

from benchmarks import harness
from draftpool.chat import stop_token_ids
from draftpool.pool import Member
from online.trainer.config import TrainerConfig
from online.trainer.feedback import Feedback
from specsel.selection.delayed_feedback import GameConfig
from specsel.selection.learners import make_learner


# ---------------------------------------------------------------------------------------------------- 2. live
def live_part(model, tok, info, pool_dir: Path, members: list[Member], prompts: list[list[int]],
              max_new: int, feedback: list[Feedback], adapted: dict[str, dict[str, torch.Tensor]] | None, k: int,
              tcfg: TrainerConfig, out_dir: Path, feed_per_request: int = 32) -> dict[str, Any]:
    """The live part: the prompts served by the real AdaptiveServer over (copies of) `members` without a trainer,
    with a saturated trainer whose versions are never swapped in, adapting with the trainer SIGKILLed half-way, and
    with the replay's `adapted` weights (when given)."""
    from online.serve.request import Request, Served
    from online.serve.server import AdaptiveServer
    from online.trainer.config import ProcessConfig
    from online.trainer.process import TrainerHandle
    from online.trainer.versions import ExportSpec
    from online.trainer.weights import assign
    from specsel.decoding.drafter import make_drafter
    from specsel.decoding.loop import GREEDY, SpecDecoder
    from specsel.selection.selector import Selector

    torch.set_num_threads(1)  # the server's core; the trainer process takes the other
    stops = stop_token_ids(tok, model)
    n, n_arms = len(prompts), len(members)

    def server(weights=None, handle_cfg=None, swap=True):
        mods = copy.deepcopy(members)
        if weights is not None:
            by_name = {m.name: m for m in mods}
            for dn, w in weights.items():
                assign(by_name[dn].module, w)  # weights and, for a vocabulary-adapted version, d2t / t2d
        drafters = {m.name: make_drafter(m.kind, m.module) for m in mods}
        dec = SpecDecoder(model, drafters, selector=Selector(make_learner("normal_hedge", n_arms), n_arms, k,
                                                             GameConfig()), k=k, stop_ids=stops)
        handle = None
        if handle_cfg is not None:
            handle = TrainerHandle(mods, tcfg, handle_cfg, ExportSpec(str(out_dir / "live-export"), str(pool_dir),
                                                                      info))
        srv = AdaptiveServer(dec, {m.name: m.module for m in mods}, handle, GREEDY, swap="cycle")
        if handle is not None and not swap:  # trainer on, versions never swapped: decoding identical to no trainer
            srv.swap.boards = {}
            srv.hooks = replace(srv.hooks, poll=None)
        return srv, dec, handle

    def serve_all(srv, dec, handle=None, feed=False, kill_at=-1) -> list[Served]:
        rows = []
        for j, ids in enumerate(harness.progress(prompts, "live", unit="request")):
            dec.set_selector(Selector(make_learner("normal_hedge", n_arms, seed=j), n_arms, k, GameConfig()))
            if feed:  # saturate: more cached feedback per request than the trainer gets through meanwhile
                for u in range(feed_per_request):
                    handle.submit(feedback[(j * feed_per_request + u) % len(feedback)])
            if j == kill_at:
                os.kill(handle.proc.pid, signal.SIGKILL)
            rows.append(srv.serve(Request(f"live-{j}", ids, max_new)))
        return rows

    def summary(rows: list[Served]) -> dict[str, Any]:
        ok = [r for r in rows if r.ok]
        toks = sum(len(r.tokens) for r in ok)
        return {"requests": len(rows), "failed": len(rows) - len(ok), "tokens": toks,
                "seconds": sum(r.seconds for r in ok), "tok_s": toks / max(1e-9, sum(r.seconds for r in ok)),
                "mat": toks / max(1, sum(r.metrics["target_forwards"] for r in ok))}

    report: dict[str, Any] = {"requests": n, "max_new_tokens": max_new, "feed_per_request": feed_per_request}
    srv, dec, _ = server()
    dec.generate(prompts[0], 8)  # warm-up
    base = serve_all(srv, dec)
    report["no_trainer"] = summary(base)
    pcfg = ProcessConfig(threads=1, export_every=0)
    srv, dec, handle = server(handle_cfg=pcfg, swap=False)
    handle.start()
    _wait_started(handle)
    busy = serve_all(srv, dec, handle, feed=True)
    handle.stop()
    report["trainer_saturated_no_swap"] = {**summary(busy), "rounds": handle.rounds_seen,
                                           "same_output": sum(a.tokens == b.tokens for a, b in zip(base, busy))}
    report["slowdown"] = 1 - report["trainer_saturated_no_swap"]["tok_s"] / report["no_trainer"]["tok_s"]
    srv, dec, handle = server(handle_cfg=pcfg)
    handle.start()
    _wait_started(handle)
    killed = serve_all(srv, dec, handle, kill_at=n // 2)
    time.sleep(1.0)
    handle.poll()
    handle.stop()
    report["adapting_killed_mid_run"] = {
        **summary(killed), "rounds": handle.rounds_seen, "faults": [f["why"] for f in handle.faults],
        "restarts": handle.restarts, "swaps": srv.swap.swaps,
        "same_output": sum(b.ok and a.tokens == b.tokens for a, b in zip(base, killed))}
    if adapted is not None:
        srv, dec, _ = server(weights=adapted)
        rows = serve_all(srv, dec)
        report["adapted_weights"] = {**summary(rows), "same_output": sum(a.tokens == b.tokens
                                                                         for a, b in zip(base, rows))}
    return report


def _wait_started(handle, timeout: float = 120.0) -> None:
    t0 = time.time()
    while time.time() - t0 < timeout:
        if any(e["event"] == "started" for e in handle.poll()):
            return
        time.sleep(0.2)
    raise RuntimeError("the trainer process did not start")


# ---------------------------------------------------------------------------------------------------- 3. soak
def soak(n_requests: int, every: int = 500) -> dict[str, Any]:
    """n requests of 16 tokens through AdaptiveServer + trainer process on a tiny random target (seeded)."""
    import tempfile

    import psutil
    from transformers import LlamaConfig, LlamaForCausalLM

    from draftpool.models.eagle3 import Eagle3Head, head_config, select_draft_vocab, write_eagle3
    from draftpool.pool import update_pool_manifest
    from draftpool.target import TargetInfo
    from online.serve.request import Request
    from online.serve.server import AdaptiveServer
    from online.trainer.config import ProcessConfig
    from online.trainer.process import TrainerHandle
    from online.trainer.versions import ExportSpec
    from specsel.decoding.eagle3 import Eagle3Drafter
    from specsel.decoding.loop import GREEDY, SpecDecoder
    from specsel.selection.selector import Selector

    torch.set_num_threads(1)  # the server's core; the trainer process takes the other
    torch.manual_seed(0)
    target = LlamaForCausalLM(LlamaConfig(vocab_size=128, hidden_size=64, intermediate_size=128, num_hidden_layers=4,
                                          num_attention_heads=4, num_key_value_heads=2)).eval()
    heads = {}
    tmp = Path(tempfile.mkdtemp(prefix="draftpool-soak-"))
    info = TargetInfo("tiny", "tiny", str(tmp), "0" * 64, 4, 64, 128, 256)
    for i in range(2):
        head = Eagle3Head(head_config(target.config, 48, [1, 2, 3]))
        d2t, t2d = select_draft_vocab(torch.rand(128), 48)
        head.d2t.copy_(d2t)
        head.t2d.copy_(t2d)
        head.embed_tokens.weight.data.copy_(target.get_input_embeddings().weight)
        heads[f"h{i}"] = head.eval()
        write_eagle3(head, tmp / "pool" / f"h{i}", info,
                     {"kind": "eagle3", "target_weights_sha256": info.weights_sha256})
        update_pool_manifest(tmp / "pool", info, f"h{i}", {"kind": "eagle3", "path": f"h{i}", "domain": "x"})
    handle = TrainerHandle([Member(n, "eagle3", h) for n, h in heads.items()],
                           TrainerConfig(lr=1e-3, batch=4, full_information=True),
                           ProcessConfig(threads=1, export_every=1000), ExportSpec(str(tmp / "out"),
                                                                                   str(tmp / "pool"), info))
    dec = SpecDecoder(target, {n: Eagle3Drafter(h) for n, h in heads.items()},
                      selector=Selector(make_learner("normal_hedge", 2), 2, 3, GameConfig()), k=3)
    srv = AdaptiveServer(dec, heads, handle, GREEDY, feedback_top_k=16)
    handle.start()
    _wait_started(handle)
    gen = torch.Generator().manual_seed(0)
    rows = []
    t0 = time.time()
    me = psutil.Process()
    for i in harness.progress(range(n_requests), "soak", unit="request", interval=30):
        prompt = torch.randint(0, 128, (int(torch.randint(4, 24, (1,), generator=gen)),), generator=gen).tolist()
        rec = srv.serve(Request(f"s{i}", prompt, 16))
        if not rec.ok:
            rows.append({"request": i + 1, "error": rec.error})
        if (i + 1) % every == 0:
            child = psutil.Process(handle.proc.pid) if handle.proc is not None else None
            rows.append({"request": i + 1, "server_rss_mb": me.memory_info().rss / 2**20,
                         "trainer_rss_mb": child.memory_info().rss / 2**20 if child else None,
                         "rounds": handle.rounds_seen, "dropped": handle.dropped, "swaps": srv.swap.swaps,
                         "seconds": time.time() - t0})
    handle.stop()
    return {"requests": n_requests, "failed": srv.failed, "faults": handle.faults, "samples": rows}
