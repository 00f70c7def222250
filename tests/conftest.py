"""Shared fixtures: the real embedded target (converted once into the draftpool cache) and a scratch folder."""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


@pytest.fixture(scope="session")
def target_info():
    from draftpool.target import resolve_target

    return resolve_target()


@pytest.fixture(scope="session")
def target(target_info):
    """(model, tokenizer) of the embedded SmolLM2-135M-Instruct target, frozen, fp32 on CPU."""
    from draftpool.target import load_target

    return load_target(target_info, "cpu")
