"""The bodies of the OpenAI-compatible endpoints (online/http/api.py): the fields this server reads or refuses, with
strict types, and `check_body`, which turns a body into the job's settings (`JobSettings`) or one 400 message."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

Finite = Annotated[float, Field(allow_inf_nan=False)]
Positive = Annotated[int, Field(ge=1)]


class BadRequest(ValueError):
    pass


class UnknownModel(ValueError):
    pass


# ---------------------------------------------------------------------------------------------------------------------
# the request bodies: OpenAI's fields this server reads or refuses; strict types (no "1" for 1, no true for 1) and
# extra="forbid" (any other field is refused rather than silently ignored)
class StreamOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    include_usage: bool = False


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    model: str | None = None
    max_tokens: Positive | None = None
    temperature: Finite | None = None
    top_p: Finite | None = None
    n: int = 1
    stream: bool = False
    stream_options: StreamOptions | None = None
    stop: str | list[str] | None = None
    stop_token_ids: list[int] | None = None  # vLLM's extension (the openai client: extra_body)
    # draftpool's extension: this request's speculative counts in the reply's "draftpool" object (vLLM reports them
    # per server, --per-request-spec-decode-metrics, not per request)
    spec_metrics: bool = False
    presence_penalty: Finite | None = None
    frequency_penalty: Finite | None = None
    seed: int | None = None
    user: str | None = None


class CompletionBody(_Body):
    prompt: Annotated[str, Field(min_length=1)]
    best_of: int = 1
    echo: bool = False
    suffix: str | None = None
    logprobs: int | None = None


class TextPart(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    type: Literal["text"]
    text: str


class Message(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    role: Literal["system", "developer", "user", "assistant"]  # developer: OpenAI's newer name of system
    content: str | list[TextPart]
    name: str | None = None

    def plain(self) -> dict[str, str]:
        """{"role", "content"} as a chat template takes it: text parts joined by newlines, developer -> system."""
        text = self.content if isinstance(self.content, str) else "\n".join(p.text for p in self.content)
        return {"role": "system" if self.role == "developer" else self.role, "content": text}


class ChatBody(_Body):
    messages: Annotated[list[Message], Field(min_length=1)]
    max_completion_tokens: Positive | None = None
    logprobs: bool | None = None
    top_logprobs: int | None = None

    @model_validator(mode="after")
    def _one_length(self) -> ChatBody:
        if self.max_tokens is not None and self.max_completion_tokens is not None:
            raise ValueError("give max_tokens or max_completion_tokens, not both")
        return self


MAX_STOPS = 16


@dataclass(frozen=True)
class JobSettings:
    """What one request asks of the decode loop, checked: its length, sampling, stops and streaming."""

    max_new: int
    temperature: float
    top_p: float = 1.0
    seed: int | None = None  # None: a fresh random seed per sampled request
    stop: tuple[str, ...] = ()
    stop_ids: tuple[int, ...] = ()
    stream: bool = False
    include_usage: bool = False
    spec_metrics: bool = False  # the reply carries the request's speculative counts (draftpool.spec)


def check_body(body: CompletionBody | ChatBody, served: str, temperature: float, default_max: int,
               sampling: bool = True) -> JobSettings:
    """What the typed body cannot say: the values this server can honour. `temperature`: the server's default
    (serve.temperature); `sampling`: whether it can sample at all (False: tree and lookahead modes verify greedily)."""
    if body.model is not None and body.model != served:
        raise UnknownModel(f"the model {body.model!r} is not served here (this server serves {served!r})")
    temp = temperature if body.temperature is None else body.temperature
    if not 0 <= temp <= 2:
        raise BadRequest(f"temperature must be in [0, 2], got {temp}")
    if temp > 0 and not sampling:
        raise BadRequest(f"this server decodes greedily (its serve.mode verifies at temperature 0 only); got "
                         f"temperature {temp}")
    top_p = 1.0 if body.top_p is None else body.top_p
    if not 0 < top_p <= 1:
        raise BadRequest(f"top_p must be in (0, 1], got {top_p}")
    if body.n != 1 or getattr(body, "best_of", 1) != 1:
        raise BadRequest("n and best_of must be 1 (one answer per request: send n requests)")
    if body.stream_options is not None and not body.stream:
        raise BadRequest("stream_options needs stream: true")
    stop = [body.stop] if isinstance(body.stop, str) else list(body.stop or [])
    if len(stop) > MAX_STOPS or any(not s for s in stop):
        raise BadRequest(f"stop takes at most {MAX_STOPS} non-empty strings, got {stop!r}")
    if any(i < 0 for i in body.stop_token_ids or ()):
        raise BadRequest(f"stop_token_ids must be token ids >= 0, got {body.stop_token_ids}")
    if body.logprobs or getattr(body, "top_logprobs", None) or getattr(body, "echo", False) or \
            getattr(body, "suffix", None):
        raise BadRequest("logprobs, top_logprobs, echo and suffix are not supported")
    for key in ("presence_penalty", "frequency_penalty"):
        if getattr(body, key) not in (None, 0):
            raise BadRequest(f"{key} is not supported (only 0): the target's distribution is served unchanged")
    given = getattr(body, "max_completion_tokens", None) or body.max_tokens
    return JobSettings(given if given is not None else default_max, temp, top_p, body.seed, tuple(stop),
                       tuple(body.stop_token_ids or ()), body.stream,
                       body.stream_options is not None and body.stream_options.include_usage, body.spec_metrics)
