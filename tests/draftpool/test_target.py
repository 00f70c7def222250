"""Engine dtypes: names resolved, a dtype the device cannot compute in refused with one message."""

import pytest
import torch

from draftpool.target import TargetError, resolve_dtype


def test_dtype_names_resolve_on_cpu():
    assert resolve_dtype("auto", "cpu") is torch.float32
    assert resolve_dtype("bfloat16", "cpu") is torch.bfloat16 and resolve_dtype("float32", "cpu") is torch.float32


def test_unknown_or_unusable_dtype_is_one_error():
    with pytest.raises(TargetError, match="float8.*choose from auto"):
        resolve_dtype("float8", "cpu")
    with pytest.raises(TargetError, match="bfloat16 is not supported on meta"):  # a device that computes nothing
        resolve_dtype("bfloat16", "meta")
