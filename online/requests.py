"""The request stream of `online_adapt.py`: JSON lines {"id", "prompt", "max_new_tokens" (or "max_tokens")} read
from bytes, each bad line turned into an error record naming it, and the ids an earlier run already answered."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

REQUEST_KEYS = ("id", "prompt", "max_new_tokens", "max_tokens")


def _text(value: Any, what: str) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{what} must be a string, got {type(value).__name__}")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as e:  # JSON can spell a lone surrogate ("\ud800"); no tokenizer takes one
        raise ValueError(f"{what} is not valid Unicode ({e.reason} at character {e.start})") from None
    return value


def parse_request(raw: bytes, n: int, default_max: int) -> dict[str, Any]:
    """One JSONL line (bytes) -> {"id", "prompt", "max_new_tokens"}; ValueError naming what is wrong."""
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
    return {"id": _text(str(rid), '"id"'), "prompt": prompt, "max_new_tokens": max_new}


def read_requests(stream, default_max: int, skip: set[str]):
    """Yield request dicts from a binary stream of JSON lines. A bad line yields {"id": "line-N", "line": N, "error"}
    (serving goes on); ids and bad lines in `skip` (recorded by an earlier run) are passed over; an id seen before
    in this stream is an error (restart-skipping needs ids to be unique)."""
    seen: dict[str, int] = {}
    for n, raw in enumerate(stream, 1):
        raw = raw.strip()
        if not raw:
            continue
        try:
            row = parse_request(raw, n, default_max)
            if row["id"] in seen:
                raise ValueError(f"id {row['id']!r} was already used at line {seen[row['id']]} (ids must be unique)")
            seen[row["id"]] = n
        except (ValueError, TypeError) as e:  # json.JSONDecodeError is a ValueError
            if f"line-{n}" not in skip:
                yield {"id": f"line-{n}", "line": n, "error": f"request line {n}: {e}"}
            continue
        if row["id"] not in skip:
            yield {**row, "line": n}


def answered_ids(path: Path) -> set[str]:
    """Ids already recorded, answers and bad lines alike (a restart skips them); a partial last line left by a kill
    is cut off."""
    if not path.is_file():
        return set()
    data = path.read_bytes()
    if data and not data.endswith(b"\n"):
        data = data[:data.rfind(b"\n") + 1]
        path.write_bytes(data)
    return {json.loads(line)["id"] for line in data.decode().splitlines() if line.strip()}
