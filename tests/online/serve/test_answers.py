"""The trainer's events as the server logs them: one metrics line each, one log line per round, a resting round said
so (online/serve/answers.py)."""

import io
import json

from online.serve.answers import log_events


def test_each_event_is_a_metrics_line_and_a_round_a_log_line():
    metrics, log = io.StringIO(), io.StringIO()
    trained = {"event": "round", "round": 1, "records": 4, "losses": {"h": 9.5}, "published": ["h"], "rejected": [],
               "rolled_back": [], "version": 1, "trained": True, "rest": 1}
    rested = {**trained, "round": 2, "records": 8, "losses": {}, "published": [], "version": 2, "trained": False,
              "rest": 4}
    log_events([trained, rested, {"event": "export", "version": 2}], metrics, log)
    assert [json.loads(line)["event"] for line in metrics.getvalue().splitlines()] == ["round", "round", "export"]
    lines = log.getvalue().splitlines()
    assert len(lines) == 2 and "loss h 9.5000; published ['h']" in lines[0]
    assert "round 2 (8 requests so far): rested (training 1 round in 4" in lines[1]
