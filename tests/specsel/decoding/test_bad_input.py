"""Bad decoding setups and requests: one clear error each."""


import pytest
from transformers import LlamaConfig, LlamaForCausalLM

from draftpool.forward.sampling import SamplingParams
from draftpool.models.eagle3 import Eagle3Head, default_aux_layers, head_config
from draftpool.models.folder import DrafterLoadError
from draftpool.models.llama import build_drafter, load_llama, write_llama
from specsel.decoding.eagle3 import Eagle3Drafter
from specsel.decoding.llama import LlamaDrafter
from specsel.decoding.loop import SpecDecoder, SpecError
from specsel.decoding.tree import TreeSpec


def tiny_llama(vocab: int, layers: int = 2, hidden: int = 32) -> LlamaForCausalLM:
    return LlamaForCausalLM(LlamaConfig(vocab_size=vocab, hidden_size=hidden, intermediate_size=64,
                                        num_hidden_layers=layers, num_attention_heads=2, num_key_value_heads=2,
                                        max_position_embeddings=128)).eval()


def real_head(model, info) -> Eagle3Head:
    return Eagle3Head(head_config(model.config, 256, default_aux_layers(info.num_layers))).eval()


def test_drafter_vocabulary_mismatch(target):
    with pytest.raises(SpecError, match="vocabulary 1000 does not match the target's 49152"):
        SpecDecoder(target[0], LlamaDrafter(tiny_llama(1000)), mode="chain")


def test_drafter_tokenizer_mismatch(tmp_path, target, target_info):
    model, tok = target
    tok.save_pretrained(tmp_path / "tok")
    from transformers import AutoTokenizer

    other = AutoTokenizer.from_pretrained(tmp_path / "tok")
    other.add_tokens(["<not-in-the-target>"])
    drafter = build_drafter("llama-tiny", model.config)
    write_llama(drafter, other, tmp_path / "d", {"kind": "llama", "target_weights_sha256": target_info.weights_sha256})
    with pytest.raises(DrafterLoadError, match="tokenizer differs"):
        load_llama(tmp_path / "d", target_info)


@pytest.mark.parametrize("change", ["hidden", "layers"])
def test_head_of_another_target(target, target_info, change):
    model, _ = target
    cfg = LlamaConfig(**{**model.config.to_dict(), **({"hidden_size": 64, "intermediate_size": 128,
                                                       "num_attention_heads": 4, "num_key_value_heads": 4,
                                                       "head_dim": 16} if change == "hidden"
                                                      else {"num_hidden_layers": 8})})
    head = Eagle3Head(head_config(cfg, 256, default_aux_layers(cfg.num_hidden_layers))).eval()
    with pytest.raises(SpecError, match="EAGLE-3 head made for a target"):
        SpecDecoder(model, Eagle3Drafter(head), mode="tree")


@pytest.mark.parametrize("k", [0, -3])
def test_k_below_one(target, target_info, k):
    with pytest.raises(SpecError, match="k \\(draft tokens per cycle\\) must be >= 1"):
        SpecDecoder(target[0], Eagle3Drafter(real_head(target[0], target_info)), mode="chain", k=k)


@pytest.mark.parametrize("spec,msg", [(TreeSpec(2, 4, 30), "does not fit"), (TreeSpec(0, 4, 8), ">= 1"),
                                      (TreeSpec(3, 300, 60), "vocabulary")])
def test_tree_parameters(target, target_info, spec, msg):
    with pytest.raises(SpecError, match=msg):
        SpecDecoder(target[0], Eagle3Drafter(real_head(target[0], target_info)), mode="tree", tree=spec)


def test_tree_needs_a_head(target):
    with pytest.raises(SpecError, match="tree drafting needs drafters that draft trees .* drafts chains only"):
        SpecDecoder(target[0], LlamaDrafter(build_drafter("llama-tiny", target[0].config)), mode="tree")


def test_tree_refuses_sampling(target, target_info):
    dec = SpecDecoder(target[0], Eagle3Drafter(real_head(target[0], target_info)), mode="tree")
    with pytest.raises(SpecError, match="verifies greedily"):
        dec.generate([1, 2, 3], 4, SamplingParams(0.7))


def test_prompt_longer_than_context(target, target_info):
    dec = SpecDecoder(target[0], Eagle3Drafter(real_head(target[0], target_info)), mode="chain", k=4)
    n = target_info.max_position_embeddings
    with pytest.raises(SpecError, match=f"exceeds the target's context of {n} positions"):
        dec.generate([1] * (n - 10), 8)


def test_unknown_mode_and_missing_drafter(target):
    with pytest.raises(SpecError, match="unknown mode 'beam'"):
        SpecDecoder(target[0], mode="beam")
    with pytest.raises(SpecError, match="needs a drafter"):
        SpecDecoder(target[0], mode="chain")


def test_empty_prompt(target):
    with pytest.raises(SpecError, match="empty prompt"):
        SpecDecoder(target[0], mode="plain").generate([], 4)
