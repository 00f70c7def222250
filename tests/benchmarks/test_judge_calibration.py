"""The judge calibration command on a small labelled file: its report, and one clear error for a bad file."""

import json

from benchmarks.judge_calibration import main


def test_calibration_report_and_bad_file(tmp_path, capsys):
    pairs = tmp_path / "pairs.jsonl"
    rows = [("So x = 8.\n\n", "Therefore x is 8.\n\n", True), ("Add 2 and 3 to get 5.\n\n", "2 + 3 = 5.\n\n", True),
            ("So x = 8.\n\n", "So x = 9.\n\n", False), ("Add 2 and 3 to get 5.\n\n", "The sky is blue.\n\n", False)]
    pairs.write_text("".join(json.dumps({"drafted": a, "target": b, "aligned": y}) + "\n" for a, b, y in rows))
    out = tmp_path / "out"
    assert main(["--pairs", str(pairs), "--llm-judge", "none", "--min-precision", "1.0", "--out", str(out)]) == 0
    res = json.loads((out / "results.json").read_text())
    assert "| exact |" in (out / "table.md").read_text()
    assert res["n"] == 4 and len(res["similarities"]) == 4 and "llm" not in res
    assert res["embedding_numbers"]["precision"] == 1.0 and res["embedding_numbers"]["recall"] == 1.0
    # out of sample: fit on pairs 0 (aligned) and 2 (numbers differ: never aligned) -> threshold = similarity of 0;
    # measured on 1 (aligned) and 3 (numbers differ): pair 1 is found iff its similarity reaches that threshold
    h, sims = res["held_out"], res["similarities"]
    assert (h["calibration_pairs"], h["held_out_pairs"]) == (2, 2) and h["threshold"] == sims[0]
    assert h["recall"] == float(sims[1] >= sims[0])
    assert "embedding + same last number" in capsys.readouterr().out
    pairs.write_text('{"drafted": 1}\n')
    assert main(["--pairs", str(pairs), "--llm-judge", "none", "--out", str(tmp_path / "bad")]) == 2
    assert "pairs.jsonl:1" in capsys.readouterr().err and not (tmp_path / "bad").exists()
