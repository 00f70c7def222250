"""The request stream of `online_adapt.py`: JSON lines {"id", "prompt", "max_new_tokens" (or "max_tokens")} read
from bytes into `Request` values, each bad line a request refused with an error naming it, and what an earlier run
already answered (request ids, and bad lines by number)."""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Collection, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from online.serve.request import Request

REQUEST_KEYS = ("id", "prompt", "max_new_tokens", "max_tokens")


def _text(value: Any, what: str) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{what} must be a string, got {type(value).__name__}")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as e:  # JSON can spell a lone surrogate ("\ud800"); no tokenizer takes one
        raise ValueError(f"{what} is not valid Unicode ({e.reason} at character {e.start})") from None
    return value


def parse_request(raw: bytes, n: int, default_max: int) -> Request:
    """Line n of a request file (bytes) -> its request; ValueError naming what is wrong."""
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ValueError(f"not valid UTF-8 (byte 0x{raw[e.start]:02x} at offset {e.start})") from None
    row = json.loads(line)
    if not isinstance(row, dict):
        raise ValueError('expected a JSON object {"id", "prompt", "max_new_tokens"}')
    unknown = sorted(set(row) - set(REQUEST_KEYS))
    if unknown:
        raise ValueError(f"unknown key(s) {', '.join(map(repr, unknown))}; a request has {', '.join(REQUEST_KEYS)}")
    prompt = _text(row.get("prompt"), '"prompt"')
    if not prompt:
        raise ValueError('"prompt" must be a non-empty string')
    rid = row.get("id", f"line-{n}")
    if isinstance(rid, bool) or not isinstance(rid, str | int):
        raise ValueError(f'"id" must be a string or an integer, got {rid!r}')
    given = {k: row[k] for k in ("max_new_tokens", "max_tokens") if k in row}
    if len(set(map(repr, given.values()))) > 1:
        raise ValueError(f"max_new_tokens and max_tokens (its alias) disagree: {given}")
    max_new = next(iter(given.values()), default_max)
    if isinstance(max_new, bool) or not isinstance(max_new, int) or max_new < 1:
        raise ValueError(f"{next(iter(given), 'max_new_tokens')} must be an integer >= 1, got {max_new!r}")
    return Request(_text(str(rid), '"id"'), None, max_new, prompt=prompt, line=n)


def read_requests(stream, default_max: int, skip_ids: Collection[str] = (), skip_lines: Collection[int] = ()
                  ) -> Iterator[Request]:
    """Yield the requests of a binary stream of JSON lines. A bad line yields a request with no id, its `line` and
    its `error` (serving goes on); requests whose id is in `skip_ids` and bad lines whose number is in `skip_lines`
    (recorded by an earlier run, see `answered_ids`; also a request "line-N" at line N in it) are passed over; an id
    seen before in this stream is an error (restart-skipping needs ids to be unique)."""
    seen: dict[str, int] = {}
    for n, raw in enumerate(stream, 1):
        raw = raw.strip()
        if not raw:
            continue
        try:
            req = parse_request(raw, n, default_max)
            if req.id in seen:
                raise ValueError(f"id {req.id!r} was already used at line {seen[req.id]} (ids must be unique)")
            seen[req.id] = n
        except (ValueError, TypeError) as e:  # json.JSONDecodeError is a ValueError
            if n not in skip_lines:  # a bad line has no id of its own: none that a request could also use
                yield Request(None, None, default_max, line=n, error=f"request line {n}: {e}")
            continue
        if req.id in skip_ids or (n in skip_lines and req.id == f"line-{n}"):  # see _take_record
            continue
        yield req


@dataclass
class Answered:
    """What an earlier run recorded in its answers file: request ids (answers and requests that failed) and the
    numbers of bad request lines; len() counts both."""

    ids: set[str] = dataclasses.field(default_factory=set)
    lines: set[int] = dataclasses.field(default_factory=set)

    def __len__(self) -> int:
        return len(self.ids) + len(self.lines)


RECORD_START = b'{"id": '  # how every record online_adapt writes begins (json.dumps, "id" first)
AFTER_ID = (b', "text": ', b', "line": ', b', "error": ')  # what follows the id: an answer, a bad line, an error

# The records online_adapt writes (online/adapt.py: answer_record), with every key they ever had: key -> types. An
# answers file is recognised by them, so that a wrong serve.answers (a dataset, the requests file itself) is refused,
# not appended to nor taken for answered requests. A key added to answer_record must be added here (test_requests.py
# checks every kind of record answer_record writes).
_NUM = (int, float)
ANSWER_REQUIRED = {"id": (str,), "text": (str,), "new_tokens": (int,)}
ANSWER_OPTIONAL = {"mat": (*_NUM, type(None)), "tok_s": (*_NUM, type(None)), "seconds": _NUM,
                   "versions_at_start": (dict,), "versions_at_end": (dict,), "cancelled": (str,),
                   "lookahead": (dict,), "pairs": (int,),
                   # an HTTP answer (online/http/jobs.py): its finish reason, and the sampling a request asked for
                   "finish_reason": (str,), "sampling": (dict,)}
ERROR_REQUIRED = {"id": (str, type(None)), "error": (str,)}  # a failed request; "id": null: a bad line
ERROR_OPTIONAL = {"line": (int,)}


def _is_line_number(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


def _check_schema(rec: dict, required: dict, optional: dict, what: str) -> None:
    """ValueError unless `rec` has every key of `required`, no key outside `required` and `optional`, each of its
    type (never a bool) and no count below 0."""
    missing = [k for k in required if k not in rec]
    unknown = sorted(set(rec) - set(required) - set(optional))
    if missing or unknown:
        wrong = [f"unknown key(s) {', '.join(map(repr, unknown))}"] if unknown else []
        wrong += [f"no {', '.join(map(repr, missing))}"] if missing else []
        raise ValueError(f"{' and '.join(wrong)}; {what} has {', '.join(map(repr, required))}"
                         + (" and serving metrics" if "text" in required else ""))
    for k, v in rec.items():
        types = required.get(k) or optional[k]
        if isinstance(v, bool) or not isinstance(v, types) or (isinstance(v, int) and v < 0):
            kind = "a number" if float in types else "an integer >= 0" if int in types else \
                "a string" if str in types else "an object"
            raise ValueError(f"{what}'s {k!r} must be {kind}{' or null' if type(None) in types else ''}, got "
                             f"{json.dumps(v)[:40]}")


def _take_record(rec: Any, done: Answered) -> None:
    """One answers-file record into `done`; ValueError when it is not one online_adapt writes (an answer, a failed
    request, a bad request line: the schema above)."""
    if not isinstance(rec, dict) or "id" not in rec:
        raise ValueError('not an answer record (a JSON object with an "id")')
    if "error" in rec:
        _check_schema(rec, ERROR_REQUIRED, ERROR_OPTIONAL, "an error record")
    else:
        _check_schema(rec, ANSWER_REQUIRED, ANSWER_OPTIONAL, "an answer record")
    rid = rec["id"]
    if "line" in rec and not _is_line_number(rec["line"]):
        raise ValueError(f'"line" must be a line number >= 1, got {rec["line"]!r}')
    if rid is None:  # a bad request line: {"id": null, "line": N, "error"}
        if "line" not in rec:
            raise ValueError('a record with "id": null must be a bad-line record {"id": null, "line": N, "error"}')
        done.lines.add(rec["line"])
    elif "error" in rec and _is_line_number(rec.get("line")) and rid == f"line-{rec['line']}":
        # an older run's bad-line record, or the error of the request at line N with id "line-N" (its default id):
        # recorded by line, so that a request "line-N" at another line is not taken for it
        done.lines.add(rec["line"])
    else:
        done.ids.add(rid)


def _cut_record(tail: bytes) -> bool:
    """Whether `tail`, a last line that is not JSON, can be a record online_adapt writes cut short by a kill: its
    start, up to the id and the key after it (an answer's "text", a bad line's "line", an error's "error")."""
    if RECORD_START.startswith(tail):
        return True
    if not tail.startswith(RECORD_START):
        return False
    rest = tail[len(RECORD_START):].decode("utf-8", "replace")
    if rest.startswith("null"):
        end = 4
    elif "null".startswith(rest):
        return True
    else:
        try:
            rid, end = json.JSONDecoder().raw_decode(rest)
        except ValueError:  # cut inside the id
            return rest.startswith('"')
        if not isinstance(rid, str):
            return False
    after = rest[end:].encode()
    return any(after.startswith(a) or a.startswith(after) for a in AFTER_ID)


def answered_ids(path: Path) -> Answered:
    """What an earlier run recorded in the answers file `path` (a restart skips it). A partial last line left by a
    kill mid-write is cut off; a file that is not an answers file of online_adapt (e.g. a wrong `serve.answers`) is
    refused with a ValueError naming the file and line, and left untouched."""
    done = Answered()
    if not path.is_file():
        return done

    def take(raw: bytes, n: int) -> None:
        try:
            _take_record(json.loads(raw), done)
        except (ValueError, RecursionError) as e:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
            raise ValueError(f"{path} line {n} is not an answers record of online_adapt ({e}); serve.answers must "
                             f"name an answers file (or a new one): nothing was changed") from None

    end, n, tail = 0, 0, b""  # end: where the last complete line ends
    with open(path, "rb") as f:  # streamed: a wrong path may name a large file
        for n, raw in enumerate(f, 1):
            if not raw.endswith(b"\n"):
                tail = raw
                break
            end += len(raw)
            if raw.strip():
                take(raw, n)
    if not tail.strip():
        return done
    try:
        json.loads(tail)
    except (ValueError, RecursionError):
        if not _cut_record(tail):
            take(tail, n)  # raises, naming the line
        os.truncate(path, end)  # a record cut short by a kill: its request is served again
        return done
    take(tail, n)  # complete but for its newline: kept, and the newline added for the next record
    with open(path, "ab") as f:
        f.write(b"\n")
    return done
