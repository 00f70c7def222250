"""The compact teacher read from the cache equals the full-vocabulary teacher of a target forward (the tiny random
Llama over the real vocabulary: the cache's bookkeeping, not the target's numerics)."""

from __future__ import annotations

import torch
from safetensors.torch import load_file, save_file

from draftpool.models.kind import Steps
from training.data import ResponseDataset
from training.target_cache import build_cache, cached_features
from training.ttt import Teacher


def test_cached_compact_teacher_equals_the_full_logits_and_old_files_are_upgraded(tiny_real_target, tmp_path):
    model, tok = tiny_real_target
    rows = [{"prompt_ids": tok("Count the rows of t.")["input_ids"], "response_ids": tok("SELECT COUNT(*) FROM t;")
             ["input_ids"]}, {"prompt_ids": tok("Hi")["input_ids"], "response_ids": tok("Hello there")["input_ids"]}]
    ds = ResponseDataset(rows, 64)
    columns = torch.tensor([0, 5, 17, 300, 4096, 49151])
    # an older draftpool's file: aux and last only -> recomputed with lse and top-1
    build_cache(model, ds, [1, 2, 3], tmp_path, "sig")
    first = tmp_path / "0000000.safetensors"
    save_file({k: v for k, v in load_file(str(first)).items() if k in ("aux", "last")}, str(first))
    build_cache(model, ds, [1, 2, 3], tmp_path, "sig")
    assert {"lse", "top1"} <= set(load_file(str(first)))

    width = max(len(x[0]) for x in ds.items)
    aux, teacher = cached_features(model, tmp_path, torch.tensor([0, 1]), width, columns)
    with torch.no_grad():
        full = Teacher.from_logits(model(input_ids=ds.items[0][0][None]).logits, Steps([], 2, columns))  # [1,n,..]
    n = len(ds.items[0][0])
    torch.testing.assert_close(teacher.on_columns[0, :n], full.on_columns[0], rtol=1e-5, atol=1e-4)
    torch.testing.assert_close(teacher.lse[0, :n], full.lse[0], rtol=1e-5, atol=1e-4)
    assert torch.equal(teacher.top1[0, :n], full.top1[0])
    assert aux.shape == (2, width, 3 * model.config.hidden_size)
    assert teacher.on_columns.shape == (2, width, len(columns))
