"""The request streams of the online benchmarks (benchmarks/streams/*.jsonl): one {"id", "prompt"} object a line,
ids unique; the six-group streams hold 6 groups of 20 consecutive requests, <group>-00 .. <group>-19; and no stream
request equals a prompt of the shipped prompt sets (data_gen/prompts/, what drafters train on) or copies a run of 12
words from one. No model: the files are read and compared as text."""

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
STREAMS = ROOT / "benchmarks" / "streams"
SHIPPED = ROOT / "data_gen" / "prompts"
SIX_GROUP_STREAMS = ("python_six_domains.jsonl", "sql_six_schemas.jsonl", "math_six_topics.jsonl")
RUN = 12  # a shared run of this many words (lowercased, split on whitespace) makes a near copy
GROUP_ID = re.compile(r"([a-z]+)-(\d{2})")
TABLE = re.compile(r"\b(\w+)\(id\b")  # a table described as name(id, ...)


def read_rows(text: str) -> tuple[list[dict], list[str]]:
    """A stream's text -> its rows, and what is wrong with it: a line that is not a JSON object with exactly the keys
    id and prompt, a value that is not a non-empty string, an id that repeats, no line at all."""
    rows, errors, seen = [], [], set()
    for n, line in enumerate(text.splitlines(), 1):
        try:
            row = json.loads(line)
        except json.JSONDecodeError as e:
            errors.append(f"line {n}: not JSON ({e})")
            continue
        if not isinstance(row, dict) or set(row) != {"id", "prompt"}:
            errors.append(f"line {n}: not an object with exactly the keys id and prompt")
            continue
        if not all(isinstance(row[k], str) and row[k].strip() for k in ("id", "prompt")):
            errors.append(f"line {n}: id and prompt must be non-empty strings")
            continue
        if row["id"] in seen:
            errors.append(f"line {n}: id {row['id']!r} repeats")
        seen.add(row["id"])
        rows.append(row)
    if not rows and not errors:
        errors.append("no requests")
    return rows, errors


def group_errors(ids: list[str], groups: int = 6, size: int = 20) -> list[str]:
    """What is wrong with a grouped stream's ids: not groups * size of them, an id not <group>-<NN>, a group whose
    size ids are not consecutive and numbered 00 .. size - 1 in order, a group name used for two groups."""
    errors = [] if len(ids) == groups * size else [f"{len(ids)} requests, not {groups} x {size}"]
    names = []
    for i, id_ in enumerate(ids):
        m = GROUP_ID.fullmatch(id_)
        if not m:
            errors.append(f"id {id_!r} is not <group>-<NN>")
            continue
        if i % size == 0:
            names.append(m[1])
        elif names and m[1] != names[-1]:
            errors.append(f"id {id_!r} at position {i} is inside group {names[-1]!r}")
        if int(m[2]) != i % size:
            errors.append(f"id {id_!r} at position {i} should be numbered {i % size:02d}")
    errors += [f"group {g!r} occurs twice" for g in sorted({g for g in names if names.count(g) > 1})]
    return errors


def words(text: str) -> list[str]:
    return text.lower().split()


def copies(prompts: dict[str, str], shipped: list[str], run: int = RUN) -> dict[str, str]:
    """{key: why} for the stream prompts (key -> prompt) that equal a shipped prompt (lowercased, whitespace
    collapsed) or share a run of `run` consecutive words with one."""
    whole = {" ".join(words(p)): key for key, p in prompts.items()}
    runs: dict[tuple[str, ...], str] = {}
    for key, p in prompts.items():
        w = words(p)
        for i in range(len(w) - run + 1):
            runs.setdefault(tuple(w[i:i + run]), key)
    firsts = {r[0] for r in runs}
    found = {}
    for s in shipped:
        w = words(s)
        if " ".join(w) in whole:
            found.setdefault(whole[" ".join(w)], f"equals the shipped prompt {s[:80]!r}")
        for i in range(len(w) - run + 1):
            if w[i] in firsts and (r := tuple(w[i:i + run])) in runs:
                found.setdefault(runs[r], f"shares {' '.join(r)!r} with the shipped prompt {s[:80]!r}")
    return found


def stream_rows(name: str) -> list[dict]:
    rows, errors = read_rows((STREAMS / name).read_text())
    assert not errors, f"{name}: {errors[:5]}"
    return rows


@pytest.fixture(scope="module")
def shipped() -> list[str]:
    files = sorted(SHIPPED.glob("*.jsonl"))
    assert files, f"no shipped prompt sets in {SHIPPED}"
    return [json.loads(line)["prompt"] for f in files for line in f.read_text().splitlines() if line.strip()]


STREAM_FILES = sorted(p.name for p in STREAMS.glob("*.jsonl"))


def test_the_streams_are_there():
    assert set(SIX_GROUP_STREAMS) | {"sql_three_schemas.jsonl", "summarize_long.jsonl"} <= set(STREAM_FILES)


@pytest.mark.parametrize("name", STREAM_FILES)
def test_every_line_is_one_request_with_a_unique_id(name):
    stream_rows(name)


@pytest.mark.parametrize("name", SIX_GROUP_STREAMS)
def test_six_groups_of_twenty_consecutive_requests(name):
    rows = stream_rows(name)
    assert group_errors([r["id"] for r in rows]) == []
    assert len({r["prompt"] for r in rows}) == len(rows), "a request repeats"


def test_no_stream_request_copies_a_shipped_prompt(shipped):
    prompts = {f"{name}:{r['id']}": r["prompt"] for name in STREAM_FILES for r in stream_rows(name)}
    found = copies(prompts, shipped)
    assert found == {}, "\n".join(f"{k}: {why}" for k, why in sorted(found.items()))


def test_the_six_sql_schemas_are_not_the_three_of_the_guard_stream():
    six, three = stream_rows("sql_six_schemas.jsonl"), stream_rows("sql_three_schemas.jsonl")
    groups_six, groups_three = ({r["id"].rsplit("-", 1)[0] for r in rows} for rows in (six, three))
    assert len(groups_six) == 6 and not groups_six & groups_three, groups_six & groups_three
    tables_six, tables_three = ({t for r in rows for t in TABLE.findall(r["prompt"])} for rows in (six, three))
    assert tables_three and not tables_six & tables_three, tables_six & tables_three


def test_the_checks_catch_planted_faults():
    good = '{"id": "a-00", "prompt": "Count the rows."}\n{"id": "a-01", "prompt": "Drop the table."}\n'
    assert read_rows(good) == ([{"id": "a-00", "prompt": "Count the rows."},
                                {"id": "a-01", "prompt": "Drop the table."}], [])
    for bad, why in [(good + '{"id": "a-01", "prompt": "Again."}', "repeats"),
                     (good + '{"id": "a-02", "prompt": "x", "group": "a"}', "exactly the keys"),
                     (good + '{"id": "a-02", "prompt": " "}', "non-empty"),
                     (good + '{"id": 2, "prompt": "x"}', "non-empty"),
                     (good + "\n", "not JSON"),
                     ("", "no requests")]:
        assert any(why in e for e in read_rows(bad)[1]), (bad, read_rows(bad)[1])

    ids = [f"{g}-{n:02d}" for g in ("ab", "cd") for n in range(3)]
    assert group_errors(ids, groups=2, size=3) == []
    assert group_errors(ids[:-1], groups=2, size=3) == ["5 requests, not 2 x 3"]
    assert group_errors(["ab-00", "ab-01", "cd-02", "cd-00", "cd-01", "cd-02"], 2, 3) == [
        "id 'cd-02' at position 2 is inside group 'ab'"]
    misnumbered = group_errors(["ab-00", "ab-02", "ab-01"] + ids[3:], 2, 3)
    assert misnumbered[0] == "id 'ab-02' at position 1 should be numbered 01"
    assert group_errors(ids[:3] + ids[:3], 2, 3) == ["group 'ab' occurs twice"]
    assert group_errors(["ab-0"] + ids[1:], 2, 3) == ["id 'ab-0' is not <group>-<NN>"]

    shipped = ["Write a function that returns the median of a list of numbers, and explain its complexity.",
               "one two three four five six seven eight nine ten eleven twelve thirteen"]
    stream = {"same": "write a function that returns  the MEDIAN of a list of numbers, and explain its complexity.",
              "run of 12": "Please: one two three four five six seven eight nine ten eleven twelve thanks",
              "run of 11": "zero two three four five six seven eight nine ten eleven twelve fourteen",
              "other": "Explain what a median is."}
    found = copies(stream, shipped)
    assert set(found) == {"same", "run of 12"}, found
    assert found["same"].startswith("equals") and "one two three" in found["run of 12"]
