"""online_adapt.py's settings: `ServeConfig` (serve.*) and `AdaptConfig` (every section: serve, trainer, process,
lookahead, vllm) with the checks across them. `python online_adapt.py --help-config` lists every key."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from draftpool.config import ConfigError, field
from draftpool.models import KINDS
from draftpool.target import DEFAULT_TARGET
from online.http.asgi import parse_address
from online.lookahead.server import LOOKAHEAD_SWAPS
from online.lookahead.step_trainer import STEP_UPDATERS
from online.serve.server import SWAPS
from online.trainer.config import ProcessConfig, TrainerConfig
from online.vllm.engine import VllmServeOptions
from specsel.lookahead.config import LookaheadConfig

RECIPE = "recipes/online/adapt.yaml"
MODES = ("auto", "chain", "tree", "lookahead")


@dataclass
class ServeConfig:
    """serve.*: what is served (target, pool, kinds), from where (request file or HTTP), how (mode, selection, k,
    sampling, swaps), with which engine, and where answers and versions go."""

    RENAMED: ClassVar[dict[str, str]] = {"top_k": "feedback_top_k"}  # old key -> new key
    target: str = field(DEFAULT_TARGET, help="hub id or local folder of the target")
    pool: str = field("pools/{target_slug}", help="the offline drafter pool (build_pool.py)")
    kinds: list[str] = field(default_factory=lambda: list(KINDS), help="drafter kinds of the pool to serve")
    index_save_every: int = field(25, help="model-free members (suffix): save the served index to "
                                           "<out_dir>/indexes/<name> every n indexed answers and at the end (a "
                                           "restart resumes from it)")
    out_dir: str = field("runs/online/{target_slug}", help="exported pool versions, answers, trainer state")
    requests: str = field("-", help="JSONL file of requests, or - for stdin")
    http: str = field("", help="host:port: serve an OpenAI-compatible /v1/completions and /v1/chat/completions "
                               "there instead of reading serve.requests (e.g. 127.0.0.1:8000)")
    http_timeout: float = field(30.0, help="seconds an HTTP client may take to send a request body, in all (a "
                                           "stalled or dripping body gets a 408 and its connection closed)")
    api_key: str = field("", help="HTTP: every /v1/ request and /metrics need 'Authorization: Bearer <key>' ('' = "
                                  "$DRAFTPOOL_API_KEY if set, else no key); also --api-key")
    max_queue: int = field(64, help="HTTP: requests that may wait for the decode loop (503 past it)")
    drain_s: float = field(60.0, help="HTTP: at a stop signal, seconds to go on serving the requests already "
                                      "accepted (the one decoding ends in any case; new ones get a 503 at once); a "
                                      "second signal stops at once; 0: no drain, accepted requests get a 503")
    chat_special_tokens: bool = field(False, help="chat content (and request-file prompts) that spells a special "
                                                  "token (<|im_start|> ...) becomes that token (true: a client can "
                                                  "forge turns) or stays text (false)")
    answers: str = field("", help="answers JSONL (default <out_dir>/answers.jsonl), appended as requests finish")
    selection: str = field("normal_hedge", help="normal_hedge (HedgeSpec), per_cycle (every cycle the member with the "
                           "most expected tokens per second; needs a model-free member, mode auto or chain) or "
                           "fixed:<drafter name>")
    selection_state: str = field("reset", help="reset: a fresh selector per request; persistent: one for the run")
    mode: str = field("auto", help="auto (the chain length per cycle from measured costs and each drafter's "
                                    "acceptance, 0 = a plain step when nothing pays) | chain | tree (EAGLE-3 heads "
                                    "only) | lookahead (step-level lookahead reasoning with the pool's Llama step "
                                    "drafter: settings under lookahead.*, trainer.updater dpo or sft; NOT lossless)")
    k: int = field(4, help="draft depth (auto: the most it drafts)")
    auto_costs: str = field("", help="auto: JSON file of measured costs per machine/target/drafter ('' = "
                                     "<draftpool cache>/auto_costs.json, 'none' = measure at every start)")
    max_new_tokens: int = field(128, help="per request, unless the request says otherwise")
    temperature: float = field(0.0, help="sampling temperature (0: greedy, lossless)")
    feedback_top_k: int = field(64, help="target logits kept per verified position for the trainer (the "
                                         "feedback's top-k, not a sampling or tree top-k)")
    swap: str = field("cycle", help="take new drafter versions at every decode-cycle boundary (cycle; lookahead: "
                                    "step, before every round) or only between requests (request)")
    adapt: bool = field(True, help="run the trainer (false: serve the pool as it is)")
    device: str = field("cpu", help="the server's device")
    dtype: str = field("auto", help="the target's precision: auto (on a CPU the measured choice for decoding, "
                                    "draftpool/precision.py: float32 without bf16 units; elsewhere float32, as "
                                    "before), float32 or bfloat16 (token drafting with the draftpool engine only); "
                                    "the heads run in it too, the trainer in float32")
    threads: int = field(0, help="torch threads of the server; 0: every core the process may use, less the "
                                 "trainer's process.threads only while a round computes beside the server at full "
                                 "priority (serve.adapt on, process.device cpu, process.nice 0)")
    engine: str = field("draftpool", help="draftpool: this process decodes with the pool | vllm: a vLLM server "
                                          "decodes with one pool head (settings under vllm.*), draftpool's front "
                                          "end at serve.http forwards to it and adapts that head")


@dataclass
class AdaptConfig:
    """Every setting of online_adapt.py; `validate` checks the sections against each other."""

    serve: ServeConfig = field(default_factory=ServeConfig, help="serving")
    trainer: TrainerConfig = field(default_factory=TrainerConfig, help="online updates")
    process: ProcessConfig = field(default_factory=ProcessConfig, help="the trainer process")
    lookahead: LookaheadConfig = field(default_factory=LookaheadConfig, help="lookahead reasoning (serve.mode "
                                                                              "lookahead)")
    vllm: VllmServeOptions = field(default_factory=VllmServeOptions, help="the vLLM server (serve.engine vllm)")

    def validate(self) -> None:
        s = self.serve
        if s.mode not in MODES:
            raise ConfigError(f"serve.mode must be one of {', '.join(MODES)}, got {s.mode!r}")
        if not s.kinds or set(s.kinds) - set(KINDS):
            raise ConfigError(f"serve.kinds must list some of {', '.join(KINDS)}, got {s.kinds}")
        if s.index_save_every < 1:
            raise ConfigError(f"serve.index_save_every must be >= 1, got {s.index_save_every}")
        steps = self.trainer.updater in STEP_UPDATERS
        if (s.mode == "lookahead") != steps:
            raise ConfigError(f"serve.mode {s.mode} needs trainer.updater "
                              f"{'dpo or sft' if s.mode == 'lookahead' else 'ogd, optimistic or ensemble'}, got "
                              f"{self.trainer.updater!r}")
        if s.mode == "lookahead":
            if s.swap not in LOOKAHEAD_SWAPS:
                raise ConfigError(f"serve.swap in lookahead mode must be one of {', '.join(LOOKAHEAD_SWAPS)}, got "
                                  f"{s.swap!r}")
            if s.temperature != 0:
                raise ConfigError("lookahead reasoning is greedy here: serve.temperature must be 0")
            try:
                self.lookahead.validate()
            except ValueError as e:
                raise ConfigError(str(e)) from None
        if not (s.selection in ("normal_hedge", "per_cycle") or s.selection.startswith("fixed:")):
            raise ConfigError(f"serve.selection must be normal_hedge, per_cycle or fixed:<drafter>, got "
                              f"{s.selection!r}")
        if s.selection == "per_cycle" and s.mode not in ("auto", "chain"):
            raise ConfigError(f"serve.selection per_cycle chooses chains: serve.mode must be auto or chain, got "
                              f"{s.mode!r}")
        if s.dtype not in ("auto", "float32", "bfloat16"):
            raise ConfigError(f"serve.dtype must be auto, float32 or bfloat16, got {s.dtype!r}")
        if s.dtype == "bfloat16" and (s.engine == "vllm" or s.mode == "lookahead"):
            raise ConfigError("serve.dtype bfloat16 serves token drafting with the draftpool engine only (not "
                              "serve.engine vllm, whose dtype is vllm.dtype, nor lookahead)")
        if s.engine not in ("draftpool", "vllm"):
            raise ConfigError(f"serve.engine must be draftpool or vllm, got {s.engine!r}")
        if s.engine == "vllm":
            self.vllm.validate()
            if not s.http or s.mode == "lookahead" or s.temperature != 0:
                raise ConfigError("serve.engine vllm serves HTTP (set serve.http=host:port), token drafting only "
                                  "(not lookahead), at temperature 0")
        if s.selection_state not in ("reset", "persistent"):
            raise ConfigError(f"serve.selection_state must be reset or persistent, got {s.selection_state!r}")
        if s.swap not in SWAPS and s.mode != "lookahead":
            raise ConfigError(f"serve.swap must be one of {', '.join(SWAPS)}, got {s.swap!r}")
        if s.k < 1 or s.max_new_tokens < 1 or s.feedback_top_k < 1 or s.threads < 0 or s.max_queue < 1:
            raise ConfigError("serve.k, max_new_tokens, feedback_top_k and max_queue must be >= 1, serve.threads >= 0 "
                              "(0: every core)")
        if not (0 <= s.temperature < float("inf") and 0 < s.http_timeout < float("inf")
                and 0 <= s.drain_s < float("inf")):
            raise ConfigError("serve.temperature and serve.drain_s must be >= 0 and serve.http_timeout > 0 (finite "
                              "numbers)")
        if s.http:
            try:
                parse_address(s.http)
            except ValueError as e:
                raise ConfigError(str(e)) from None
        try:
            self.trainer.validate()
            self.process.validate()
        except ValueError as e:
            raise ConfigError(str(e)) from None
