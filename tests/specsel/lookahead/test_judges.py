"""The judges: exact match after normalising; embedding similarity against a threshold on labelled pairs; the LLM
judge's prompt and its reading of a scripted stub model's next token; bad settings refused."""

import pytest
import torch
from transformers import AutoTokenizer

from specsel.lookahead.judges import (
    EmbeddingJudge,
    ExactJudge,
    LLMJudge,
    calibrate,
    last_number,
    load_pairs,
    make_judge,
    normalize,
    precision_recall,
)


@pytest.fixture(scope="module")
def tok(target_info):
    return AutoTokenizer.from_pretrained(target_info.path)


class ScriptedLM(torch.nn.Module):
    """A causal LM stub whose next-token logits favour one scripted token id; counts its calls."""

    def __init__(self, vocab: int, favour: int):
        super().__init__()
        self.w = torch.nn.Parameter(torch.zeros(1))
        self.vocab, self.favour, self.calls, self.last = vocab, favour, 0, None

    def forward(self, input_ids):
        self.calls += 1
        self.last = input_ids[0].tolist()
        logits = torch.zeros(1, input_ids.shape[1], self.vocab)
        logits[0, -1, self.favour] = 5.0
        return type("Out", (), {"logits": logits})()


def test_exact_match_normalises_whitespace_and_case():
    assert normalize("  So x =\n 4.\n\n") == "so x = 4."
    judge = ExactJudge()
    assert judge("So  X = 4.\n\n", "so x = 4.\n\n") and not judge("So x = 4.", "So x = 5.")


def test_embedding_similarity_on_labelled_pairs():
    same = ("Each box holds 12 eggs, so 3 boxes hold 36 eggs.\n\n", "3 boxes of 12 eggs each make 36 eggs.\n\n")
    other = ("Each box holds 12 eggs, so 3 boxes hold 36 eggs.\n\n", "The train leaves at noon and stops twice.\n\n")
    judge = EmbeddingJudge(0.7)
    assert judge.similarity(*same) > 0.7 > judge.similarity(*other)
    assert judge(*same) and not judge(*other)
    assert EmbeddingJudge(1.0)("A b", "a  B")  # exact match first, no similarity needed


def test_llm_judge_asks_the_alignment_question_and_reads_one_token(tok):
    aligned, unaligned = (tok(w, add_special_tokens=False)["input_ids"][0] for w in ("aligned", "unaligned"))
    assert aligned != unaligned
    for favour, want in ((aligned, True), (unaligned, False)):
        stub = ScriptedLM(len(tok), favour)
        judge = LLMJudge(stub, tok)
        assert judge("x = 4 + 4 = 8\n\n", "So x is 8.\n\n") is want and stub.calls == 1
        text = tok.decode(stub.last)
        assert "<start_s1>\nx = 4 + 4 = 8\n\n\n<end_s1>" in text and "<start_s2>\nSo x is 8.\n\n\n<end_s2>" in text
        assert text.endswith("assistant\n[")  # the answer's opening bracket, then the one judged token
        assert judge("Same step.", "same   step.") and stub.calls == 1  # exact match: no model call


def test_make_judge_and_bad_settings(tmp_path, tok):
    assert make_judge("exact").name == "exact" and make_judge("embedding", threshold=0.8).threshold == 0.8
    assert make_judge("llm", target=(ScriptedLM(len(tok), 0), tok)).name == "llm"
    with pytest.raises(ValueError, match="unknown judge 'cosine'"):
        make_judge("cosine")
    for t in (-0.1, 1.5):
        with pytest.raises(ValueError, match=r"threshold must be in \[0, 1\]"):
            make_judge("embedding", threshold=t)
    with pytest.raises(ValueError, match="is not a folder"):
        make_judge("llm", model_path=str(tmp_path / "missing"))
    with pytest.raises(ValueError, match="needs a model path or the target"):
        make_judge("llm")


def test_the_numbers_rule_rejects_a_changed_result_whatever_the_similarity():
    a, b = "3 boxes hold 3 * 12 = 36 eggs.\n\n", "3 boxes hold 3 * 12 = 48 eggs.\n\n"
    assert last_number(a) == "36" and last_number("no digits") is None and last_number("$1,250 left") == "1250"
    assert not EmbeddingJudge(0.0)(a, b)  # threshold 0 accepts any similarity, the rule still refuses
    assert EmbeddingJudge(0.0, numbers=False)(a, b)


def test_calibration_picks_the_lowest_threshold_at_the_wanted_precision(tmp_path):
    scores, labels = [0.9, 0.8, 0.7, 0.6, 0.5], [True, True, False, True, False]
    assert precision_recall([True, True, True, False, False], labels) == (2 / 3, 2 / 3)
    assert precision_recall([False] * 5, labels) == (1.0, 0.0)
    cal = calibrate(scores, labels, min_precision=0.75)
    assert (cal["threshold"], cal["precision"], cal["recall"]) == (0.6, 0.75, 1.0) and len(cal["curve"]) == 5
    assert calibrate(scores, labels, min_precision=1.0)["threshold"] == 0.8
    with pytest.raises(ValueError, match="min_precision"):
        calibrate(scores, labels, min_precision=2)
    pairs = load_pairs()  # the shipped labelled pairs
    assert len(pairs) >= 40 and sum(p["aligned"] for p in pairs) == len(pairs) // 2
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"drafted": "a", "target": "b", "aligned": "yes"}\n')
    with pytest.raises(ValueError, match="bad.jsonl:1"):
        load_pairs(bad)
