"""online.serve.requests: what a restart skips. The answers file is read strictly (a wrong `serve.answers` is refused
and left untouched, only a record cut short by a kill is cut off); bad request lines are recorded by line number, never
under an id a request could also use."""

from __future__ import annotations

import io
import json

import pytest

from online.serve.requests import answered_ids, read_requests


def lines(*rows) -> bytes:
    return b"".join((r if isinstance(r, bytes) else json.dumps(r).encode()) + b"\n" for r in rows)


ANSWER = {"id": "a", "text": "hi", "new_tokens": 2, "mat": 1.5, "tok_s": 3.0, "seconds": 0.5,
          "versions_at_start": {"h": 0}}
BAD_LINE = {"id": None, "line": 2, "error": "request line 2: Expecting value"}
FAILED = {"id": "huge", "line": 3, "error": "request line 3: beyond the target's context"}


def test_answers_and_bad_lines_are_told_apart(tmp_path):
    path = tmp_path / "answers.jsonl"
    path.write_bytes(lines(ANSWER, BAD_LINE, FAILED))
    done = answered_ids(path)
    assert done.ids == {"a", "huge"} and done.lines == {2} and len(done) == 3
    assert answered_ids(tmp_path / "none.jsonl").ids == set()


def test_a_request_with_id_line_n_is_not_taken_for_bad_line_n():
    stream = io.BytesIO(lines({"id": "a", "prompt": "x"}, b"{not json", {"id": "line-2", "prompt": "y"}))
    reqs = list(read_requests(stream, 8, {"a"}, {2}))  # the earlier run recorded "a" and bad line 2
    assert [r.id for r in reqs] == ["line-2"]


@pytest.mark.parametrize("partial", [b'{"id": "b", "text": "cut sh', b'{"id', b"{"])
def test_a_record_cut_short_by_a_kill_is_cut_off(tmp_path, partial):
    path = tmp_path / "answers.jsonl"
    path.write_bytes(lines(ANSWER, BAD_LINE) + partial)
    done = answered_ids(path)
    assert done.ids == {"a"} and done.lines == {2}
    assert path.read_bytes() == lines(ANSWER, BAD_LINE)  # "b" gets no record: the restart serves it
    path.write_bytes(partial)  # killed while writing the first record
    assert len(answered_ids(path)) == 0 and path.read_bytes() == b""


def test_a_complete_last_record_without_its_newline_is_kept(tmp_path):
    path = tmp_path / "answers.jsonl"
    path.write_bytes(lines(ANSWER) + json.dumps(FAILED).encode())
    assert answered_ids(path).ids == {"a", "huge"}
    assert path.read_bytes() == lines(ANSWER, FAILED)  # the next record starts on its own line


def test_an_older_answers_file_stays_readable(tmp_path):
    """Older runs recorded bad line N as {"id": "line-N"}: read as line N, so a request "line-N" elsewhere is served;
    a request without an id (default id "line-N") that failed at line N is still skipped."""
    path = tmp_path / "answers.jsonl"
    path.write_bytes(lines(ANSWER, {"id": "line-2", "line": 2, "error": "request line 2: Expecting value"},
                           {"id": "line-3", "line": 3, "error": "request line 3: beyond the target's context"},
                           {"id": "line-4", "text": "x", "new_tokens": 1}))
    done = answered_ids(path)
    assert done.ids == {"a", "line-4"} and done.lines == {2, 3}
    stream = io.BytesIO(lines({"id": "a", "prompt": "x"}, b"{not json", {"prompt": "too long"}, {"prompt": "ok"},
                              {"id": "line-2", "prompt": "mine"}))
    reqs = list(read_requests(stream, 8, done.ids, done.lines))
    assert [(r.id, r.line) for r in reqs] == [("line-2", 5)]


@pytest.mark.parametrize("content, line", [
    (b"# notes\nsome text without a final newline", 1),  # a wrong serve.answers: it was cut to "# notes\n"
    (b"just one line", 1),
    (lines(ANSWER) + b"{broken json\n" + lines(FAILED), 2),
    (lines(ANSWER, {"text": "no id"}), 2),
    (lines(ANSWER, [1, 2]), 2),
    (lines(ANSWER, {"id": 7, "text": "x"}), 2),
    (lines(ANSWER, {"id": None, "text": "x"}), 2),
    (lines(ANSWER, {"id": None, "line": "2", "error": "x"}), 2),
    (lines(ANSWER) + b'{"id": "\xff"}\n', 2),
    (lines(ANSWER) + b"[" * 100_000 + b"\n", 2),
    (lines(ANSWER) + b"[1, 2]", 2),  # complete JSON without its newline, but not a record
    (lines(ANSWER) + b'{"text": "x"', 2),  # a partial line that is not the start of a record
    # files with string ids that are not answers files: they were appended to, their ids taken for answered
    (lines({"id": "q1", "question": "What is 2 + 2?", "answer": "4"}, {"id": "q2", "question": "x"}), 1),  # a dataset
    (lines({"id": "a", "prompt": "hi"}, {"id": "b", "prompt": "ho", "max_new_tokens": 4}), 1),  # the requests file
    (lines({"id": "a", "text": "a corpus line"}), 1),
    (lines(ANSWER, {**ANSWER, "id": "b", "label": 1}), 2),  # an unknown key
    (lines(ANSWER, {**ANSWER, "id": "b", "new_tokens": "2"}), 2),
    (lines(ANSWER, {**ANSWER, "id": "b", "new_tokens": True}), 2),
    (lines(ANSWER, {**ANSWER, "id": "b", "new_tokens": -1}), 2),
    (lines(ANSWER, {"id": "b", "error": 5}), 2),
    (lines(ANSWER, {"id": "b", "line": 0, "error": "x"}), 2),
    (lines(ANSWER, {"id": "b", "error": "x", "text": "y"}), 2),
    (b'{"id": "q1", "question": "What is', 1),  # one partial line, but not the start of a record: not cut off
    (b'{"id": 7, "text": "x', 1),
])
def test_a_file_that_is_not_an_answers_file_is_refused_and_left_untouched(tmp_path, content, line):
    path = tmp_path / "notes.txt"
    path.write_bytes(content)
    with pytest.raises(ValueError, match=rf"^{path} line {line} is not an answers record of online_adapt") as e:
        answered_ids(path)
    assert "\n" not in str(e.value) and "nothing was changed" in str(e.value)
    assert path.read_bytes() == content


def test_every_record_online_adapt_writes_is_an_answers_record(tmp_path):
    """The schema of an answers file is answer_record's: every kind it writes (a JSONL answer, an HTTP answer with
    its end versions, a cancelled one, a lookahead answer, a failed request with and without its line, a bad line) is
    read back; a key added to answer_record that the schema (online/serve/requests.py) lacks fails here."""
    from online.serve.answers import answer_record
    from online.serve.request import Served

    class Tok:
        def decode(self, ids, skip_special_tokens=True):
            return "x" * len(ids)

    answer = dict(tokens=[1, 2], metrics={"mat": 1.5}, seconds=0.5, versions_at_start={"h": 0})
    recs = [Served("a", **answer),
            Served("cmpl-1", **answer, versions_at_end={"h": 2}),
            Served("cmpl-2", **answer, versions_at_end={"h": 2}, cancelled=True),
            Served("la", **{**answer, "metrics": {"lookahead": {"rounds": 2, "tok_s": 3.0}}}, pairs=1),
            Served("fast", **{**answer, "seconds": 0.0}),
            Served("huge", line=6, error="request line 6: beyond the target's context", refused=True),
            Served("chatcmpl-3", error="RuntimeError: boom"),
            Served(None, line=8, error="request line 8: Expecting value", refused=True)]
    path = tmp_path / "answers.jsonl"
    # an HTTP answer as online/http/jobs.py completes it: the finish reason and the sampling a request asked for
    http = {**answer_record(Served("cmpl-4", **answer), Tok()), "finish_reason": "stop",
            "sampling": {"temperature": 0.7, "top_p": 1.0, "seed": 3}}
    written = lines(*(answer_record(r, Tok()) for r in recs), http)
    path.write_bytes(written)
    done = answered_ids(path)
    assert done.ids == {"a", "cmpl-1", "cmpl-2", "la", "fast", "huge", "chatcmpl-3", "cmpl-4"} and done.lines == {8}
    assert path.read_bytes() == written
