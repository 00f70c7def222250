"""The lean forward: the same logits, features and cache as the transformers forward on the Llama-family models it
accepts, a clear fallback or error on the others, and verification rows computed bit for bit as one-token steps
(which is what makes bf16 chains token-exact)."""

import copy
import warnings

import pytest
import torch
from transformers import (
    DynamicCache,
    GraniteConfig,
    GraniteForCausalLM,
    LlamaConfig,
    LlamaForCausalLM,
    MistralConfig,
    MistralForCausalLM,
    Qwen2Config,
    Qwen2ForCausalLM,
)

from draftpool.forward import lean, lean_probe, timing
from draftpool.target import cache_kw
from specsel.decoding.auto import AutoSpec, Costs
from specsel.decoding.eagle3 import Eagle3Drafter
from specsel.decoding.llama import LlamaDrafter
from specsel.decoding.loop import ReducedPrecisionWarning, SpecDecoder
from specsel.decoding.target import CacheError, TargetRunner
from specsel.decoding.tree import TreeSpec
from tests.specsel.decoding.test_real_target import NEW, setup  # noqa: F401 - the real target's fixture
from tests.stubs import SteeredHead

SMALL = dict(vocab_size=96, hidden_size=64, intermediate_size=128, num_hidden_layers=3, num_attention_heads=4,
             num_key_value_heads=2, max_position_embeddings=512)


def seeded(cls, cfg):
    torch.manual_seed(0)
    return cls(cfg).eval()


MODELS = {
    "llama": lambda: seeded(LlamaForCausalLM, LlamaConfig(**SMALL)),
    "llama-untied-gqa1": lambda: seeded(LlamaForCausalLM, LlamaConfig(**{**SMALL, "num_key_value_heads": 4},
                                                                      tie_word_embeddings=False)),
    "qwen2-bias": lambda: seeded(Qwen2ForCausalLM, Qwen2Config(**SMALL)),  # q/k/v projections with biases
}


@pytest.mark.parametrize("name", sorted(MODELS))
@pytest.mark.parametrize("prepack", [True, False])
def test_lean_matches_transformers_logits_features_and_cache(name, prepack):
    model = MODELS[name]()
    fwd, why = lean.build(model, prepack=prepack)
    assert why is None and fwd.prepacked == prepack
    ids = torch.randint(0, 96, (90,), generator=torch.Generator().manual_seed(1))
    aux = [0, 1, 3]  # embeddings, after layer 0, the final-normed output
    cache = DynamicCache(config=model.config)
    with torch.inference_mode():
        fwd.reset()
        # a prefill padded to 48 rows, a one-token step, two verify passes, a 40-row causal pass padded to 48
        for chunk in (ids[:41], ids[41:42], ids[42:46], ids[46:50], ids[50:]):
            want = model(input_ids=chunk[None], **cache_kw(model, cache), use_cache=True, output_hidden_states=True)
            hidden, feats = fwd.forward(chunk.tolist(), None, None, aux)
            torch.testing.assert_close(fwd.lm_head(hidden), want.logits[0], atol=1e-4, rtol=1e-4)
            assert list(feats) == aux  # {HF hidden_states id: [T,H]}
            for i in aux:
                torch.testing.assert_close(feats[i], want.hidden_states[i][0], atol=1e-5, rtol=1e-4)
    assert fwd.n == 90
    for i, layer in enumerate(cache.layers):
        keys, values = fwd.kv(i)
        torch.testing.assert_close(keys, layer.keys, atol=1e-5, rtol=1e-4)
        torch.testing.assert_close(values, layer.values, atol=1e-5, rtol=1e-4)


def test_long_causal_passes_run_at_a_few_row_counts_with_little_padding():
    counts = {lean.padded_rows(t) for t in range(1, 4097)}
    assert len(counts) <= lean.LONG_PASS + 46  # up to 32 rows as they are, then 14 to 256 and 8 per doubling
    for t in range(1, 4097):
        rows = lean.padded_rows(t)
        assert t <= rows <= t + max(15, t // 8)
        assert rows == t or t > lean.LONG_PASS  # chain verification passes are never padded
    fwd, _ = lean.build(MODELS["llama"]())
    seen = []
    block_in = fwd.block_in
    fwd.block_in = lambda h, *a: seen.append(h.shape[0]) or block_in(h, *a)
    fwd.reset()
    for length in (41, 4, 40, 45):  # a prefill, a verify pass, two long causal passes
        seen.clear()
        hidden, _ = fwd.forward(list(range(length)), None, None, None)
        assert hidden.shape[0] == length and set(seen) == {lean.padded_rows(length) if length > 4 else 4}
    assert fwd.n == 41 + 4 + 40 + 45


def test_rollback_and_tree_packing_match_a_fresh_prefill():
    model = MODELS["llama"]()
    fwd, _ = lean.build(model)
    ids = torch.randint(0, 96, (30,), generator=torch.Generator().manual_seed(2)).tolist()
    fwd.reset()
    fwd.forward(ids[:10], None, None, None)
    fwd.forward(ids[10:16], None, None, None)
    fwd.truncate(12)  # rule: a rollback is the pointer
    fwd.forward(ids[12:14], None, None, None)
    # a 4-node "tree" at positions 14..: rows 0,1 siblings at depth 1, row 2 child of row 1, row 3 child of row 2
    n = len_before = fwd.n
    allowed = torch.zeros(4, n + 4, dtype=torch.bool)
    allowed[:, :n] = True
    for row, anc in enumerate([[0], [1], [1, 2], [1, 2, 3]]):
        allowed[row, [n + a for a in anc]] = True
    fwd.forward([ids[14], 7, ids[15], ids[16]], [14, 14, 15, 16], allowed, None)
    fwd.keep(len_before, [1, 2, 3])  # the accepted path: rows 1, 2, 3 (tokens 7, ids[15], ids[16])
    fresh, _ = lean.build(model)
    fresh.reset()
    fresh.forward(ids[:14] + [7, ids[15], ids[16]], None, None, None)
    assert fwd.n == fresh.n == 17
    for i in range(3):
        for got, want in zip(fwd.kv(i), fresh.kv(i)):
            torch.testing.assert_close(got, want, atol=1e-5, rtol=1e-4)


def test_models_it_cannot_run_fall_back_or_are_refused():
    granite = seeded(GraniteForCausalLM, GraniteConfig(**SMALL, logits_scaling=4.0))
    sliding = seeded(MistralForCausalLM, MistralConfig(**SMALL, sliding_window=8))
    assert "granite" in lean.unsupported(granite) and "sliding" in lean.unsupported(sliding)
    for model in (granite, sliding):
        runner = TargetRunner(model)  # auto: the transformers forward, and why
        assert runner.backend == "hf" and runner.lean is None and runner.lean_declined
        with pytest.raises(CacheError, match="lean forward cannot run this target"):
            TargetRunner(model, backend="lean")
    with pytest.raises(CacheError, match="backend 'fast'"):
        TargetRunner(MODELS["llama"](), backend="fast")
    assert TargetRunner(MODELS["llama"]()).backend == "lean"
    assert TargetRunner(MODELS["llama"](), backend="hf").backend == "hf"


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.tier2
def test_verification_rows_are_bitwise_one_token_steps_on_the_real_target(setup, dtype):  # noqa: F811
    """Per-row attention + passes of >= 2 rows make a k-row pass compute each row exactly as a one-token step does
    (on this CPU's oneDNN kernels, which `batch_invariant` measures); without per-row attention it does not."""
    model = copy.deepcopy(setup[0]).to(dtype)
    fwd, why = lean.build(model)
    assert why is None and fwd.batch_invariant, f"kernels not row-invariant in {dtype} on this machine"
    ids = torch.randint(0, model.config.vocab_size, (160,), generator=torch.Generator().manual_seed(1)).tolist()

    def invariant() -> list[bool]:
        return [lean.batch_invariant(fwd, ids, rows=r) for r in (2, 3, 5, 8)]

    assert all(invariant())
    old = lean.PER_ROW_MAX
    try:
        lean.PER_ROW_MAX = 0  # one masked attention call for all rows: rounding depends on the pass length
        assert not all(invariant())
    finally:
        lean.PER_ROW_MAX = old


@pytest.mark.tier2
def test_bfloat16_chains_and_trees_are_token_exact_through_the_lean_forward(setup, target16):  # noqa: F811
    """The target loaded in bf16: chains, `auto` (trees among its plans) and trees, steered to accept 1 or 3 drafts,
    equal bf16 plain decoding token for token, silently (each verified row is a one-token step's bits); a tree's
    masked blocks (what fp32 runs) would not be."""
    model, head, _, prompts, _, stops = setup
    model16, head16 = target16[0], copy.deepcopy(head).to(torch.bfloat16)
    plain = SpecDecoder(model16, mode="plain", stop_ids=stops)
    assert plain.target.backend == "lean"
    ref, _ = plain.generate(prompts["sql"], 3 * NEW)
    cheap = AutoSpec(priors={"drafter": [0.9]}, rank_priors={"drafter": [[0.9, 0.5, 0.3, 0.1]]},
                     costs=Costs({1: 0.05, 9: 0.051}, 0.001, tree_target={17: 0.052}, tree_step={4: 0.001}),
                     trees=((4, 4, 16),), time_weight=0.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ReducedPrecisionWarning)
        for mode, kw in (("chain", {}), ("auto", {"auto": cheap}), ("tree", {"tree": TreeSpec(4, 4, 16)})):
            for correct in (1, 3):
                dec = SpecDecoder(model16, SteeredHead(head16, ref, correct=correct), mode=mode, k=4,
                                  stop_ids=stops, **kw)
                out, m = dec.generate(prompts["sql"], 3 * NEW)
                assert out == ref and dec.token_exact and max(m.accepted) == correct, (mode, correct)
                if mode == "auto":
                    assert dec.auto_trees == ((4, 4, 16),) and "tree 4/4/16" in m.plans
        dec = SpecDecoder(model16, Eagle3Drafter(head16), mode="tree", tree=TreeSpec(4, 4, 16), stop_ids=stops)
        assert dec.generate(prompts["sql"], 3 * NEW)[0] == ref  # a random head: trees rejected, paths of one


@pytest.mark.tier2
def test_bfloat16_tree_rows_are_bitwise_the_one_token_steps_of_their_path(target16):
    """A tree pass in bf16 (root, two children, two grandchildren under one, a great-grandchild) after a 100-token
    prefill: the rows on one root-to-leaf path equal, bit for bit, one-token steps along that path; the masked blocks
    fp32 runs do not (they round otherwise here)."""
    from specsel.decoding.tree import ancestor_mask

    fwd, why = lean.build(target16[0])
    assert why is None and fwd.batch_invariant
    ids = torch.randint(0, fwd.decoder.embed_tokens.num_embeddings, (106,),
                        generator=torch.Generator().manual_seed(1)).tolist()
    n, tokens, parents, depths = 100, ids[100:], [-1, -1, 0, 0, 2], [1, 1, 2, 2, 3]
    allowed = torch.ones(6, n + 6, dtype=torch.bool)
    allowed[:, n:] = ancestor_mask(parents)
    path = [0, 1, 3, 5]  # root, a, its child c, c's child e

    def tree_rows() -> torch.Tensor:
        fwd.reset()
        fwd.forward(ids[:n], None, None, None)
        return fwd.forward(tokens, [n] + [n + d for d in depths], allowed, None)[0][path]

    fwd.reset()
    fwd.forward(ids[:n], None, None, None)
    steps = torch.cat([fwd.forward([tokens[i]], None, None, None)[0] for i in path])
    assert lean.tree_paths(allowed, n, [n] + [n + d for d in depths]) == [[0], [0, 1], [0, 2], [0, 1, 3], [0, 1, 4],
                                                                           [0, 1, 3, 5]]
    assert torch.equal(tree_rows(), steps)
    old = lean.tree_paths
    try:
        lean.tree_paths = lambda *a: None  # the masked blocks
        assert not torch.equal(tree_rows(), steps)
    finally:
        lean.tree_paths = old


@pytest.mark.tier2
def test_bfloat16_suffix_chains_and_per_cycle_selection_are_token_exact(setup, target16):  # noqa: F811
    """In bf16 through the lean forward, a suffix member's chains (seeded with the bf16 answer itself, so they are
    long and mostly accepted) and per-cycle selection over it and a head equal bf16 plain decoding token for token."""
    from draftpool.models.suffix import build_suffix
    from specsel.decoding.suffix import SuffixDrafter
    from specsel.selection.per_cycle import PerCycleSelector

    model, head, _, prompts, _, stops = setup
    model16, head16 = target16[0], copy.deepcopy(head).to(torch.bfloat16)
    ref, _ = SpecDecoder(model16, mode="plain", stop_ids=stops).generate(prompts["sql"], 3 * NEW)
    index = build_suffix([prompts["sql"] + ref], model.config.vocab_size)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ReducedPrecisionWarning)
        out, m = SpecDecoder(model16, SuffixDrafter(index), mode="chain", k=8, stop_ids=stops).generate(
            prompts["sql"], 3 * NEW)
        assert out == ref and max(m.accepted) >= 4
        pool = {"head": Eagle3Drafter(head16), "suffix": SuffixDrafter(index)}
        dec = SpecDecoder(model16, pool, selector=PerCycleSelector(8), mode="chain", k=8, stop_ids=stops)
        out, m = dec.generate(prompts["sql"], 3 * NEW)
        assert out == ref and dec.token_exact and 1 in m.choices


def test_packed_view_computes_the_module_and_follows_in_place_weight_swaps():
    """The drafter's prepacked view shares the module's weights: same outputs, and an online hot swap (`copy_` into
    the parameters) is seen at the next call; the module itself is left untouched."""
    model = MODELS["llama"]()
    view = lean.packed_view(model)
    assert isinstance(view.model.layers[0].mlp.down_proj, lean.PackedLinear)
    assert isinstance(model.model.layers[0].mlp.down_proj, torch.nn.Linear)
    ids = torch.randint(0, 96, (1, 7), generator=torch.Generator().manual_seed(3))
    with torch.no_grad():
        torch.testing.assert_close(view(ids).logits, model(ids).logits, atol=1e-5, rtol=1e-4)
        for p in model.model.layers[1].mlp.parameters():
            p.copy_(torch.randn_like(p))
        want = model(ids).logits
        torch.testing.assert_close(view(ids).logits, want, atol=1e-5, rtol=1e-4)
    long = torch.randint(0, 96, (1, 41), generator=torch.Generator().manual_seed(4))  # a drafter's prefill
    seen = []
    packed = view.model.layers[0].mlp.down_proj
    packed._current()
    inner = packed._packed
    packed._current = lambda: True
    packed._packed = lambda x: seen.append(x.shape[0]) or inner(x)
    with torch.no_grad():
        torch.testing.assert_close(view(long).logits, model(long).logits, atol=1e-5, rtol=1e-4)
    assert seen == [lean.padded_rows(41)] == [48]  # run at one of a few row counts, cut back to 41
    assert lean.packed_view(model.to(torch.float16)) is model  # no oneDNN packing for fp16: the module itself


def test_a_cpu_that_cannot_pack_a_dtype_runs_unpacked(monkeypatch):
    """oneDNN packs bf16 only with AVX-512 or AVX-NE-CONVERT (an AVX2-only CPU raises): `_packable` probes it once per
    dtype, and where it fails the lean forward and the drafter's view run the plain weights, still reproducing the
    model. The probe is forced here for fp32 so that this test runs on every CPU."""
    model = MODELS["llama"]()
    assert lean._packable(torch.device("cpu"), torch.float32) == torch.backends.mkldnn.is_available()
    monkeypatch.setitem(lean._CAN_PACK, torch.float32, False)
    fwd, why = lean.build(model)
    assert why is None and not fwd.prepacked
    assert lean.packed_view(model) is model
    ids = torch.randint(0, 96, (9,), generator=torch.Generator().manual_seed(2))
    with torch.inference_mode():
        fwd.reset()
        torch.testing.assert_close(fwd.lm_head(fwd.forward(ids.tolist(), None, None, None)[0]),
                                   model(input_ids=ids[None]).logits[0], atol=1e-4, rtol=1e-4)


def test_the_pad_row_count_is_the_fastest_measured_and_every_choice_is_row_invariant(monkeypatch):
    """`fastest_pad` keeps the row count whose one-token step is fastest (the fewest rows on a near tie); a runner
    uses the measured count; verification rows stay bit for bit one-token steps at every count it may choose."""
    model = MODELS["llama"]()
    fwd, _ = lean.build(model)
    ids = list(range(3, 40))
    for rows in lean.PAD_ROWS:
        fwd.pad_rows = rows
        assert lean.batch_invariant(fwd, ids), rows
    clock = [0.0]
    cost = {2: 5.0, 3: 1.0, 4: 1.01}  # seconds per step by pad rows: 3 fastest, 4 within 2% (more rows: not kept)
    real = lean.LeanForward.forward

    def timed(self, tokens, *a):
        clock[0] += cost[self.pad_rows]
        return real(self, tokens, *a)

    monkeypatch.setattr(lean.LeanForward, "forward", timed)
    monkeypatch.setattr(timing.time, "perf_counter", lambda: clock[0])  # the clock `median_time` reads
    assert lean.fastest_pad(fwd, ids) == 3
    cost.update({2: 1.015})
    assert lean.fastest_pad(fwd, ids) == 2
    monkeypatch.undo()
    runner = TargetRunner(model)
    assert runner.lean.pad_rows in lean.PAD_ROWS and runner.forward_id == f"lean/pad{runner.lean.pad_rows}"
    runner.reset()
    runner.forward(ids[:5])
    runner.lean.pad_rows = 4
    runner.forward(ids[5:6])  # one token padded to 4 rows: 3 scratch slots written past the pointer
    assert len(runner) == 6 and torch.equal(runner.lean.k[:, :, 6:9], runner.lean.k[:, :, 5:6].expand(-1, -1, 3, -1))


@pytest.mark.parametrize("backend", ["lean", "hf"])
@pytest.mark.tier2
def test_compiled_decoding_equals_plain_decoding_in_the_same_settings(backend):
    """torch.compile over the target forward (the lean forward's layer blocks, or the whole transformers forward):
    chain and auto output equals compiled plain output, token for token, with drafts fully and partly accepted."""
    one_layer = LlamaConfig(**{**SMALL, "num_hidden_layers": 1})  # compile time grows with the layers
    model = seeded(LlamaForCausalLM, one_layer)
    torch.manual_seed(5)
    other = LlamaForCausalLM(one_layer).eval()  # a drafter that errs
    prompt = [5, 17, 33, 2, 71, 9]
    plain = SpecDecoder(model, mode="plain", backend=backend, compile=True)
    assert plain.target.compiled and plain.target.forward_id.startswith(f"{backend}+compile")
    ref, _ = plain.generate(prompt, 40)
    eager, _ = SpecDecoder(model, mode="plain", backend=backend).generate(prompt, 40)
    assert ref == eager  # the compiled forward computes the model (fp32, no near tie on this seed)
    cheap = AutoSpec(costs=Costs({1: 0.05, 5: 0.051}, 0.001), priors={"drafter": [0.9]}, time_weight=0.0)
    accepted = set()
    for drafter in (copy.deepcopy(model), other):
        for mode, kw in (("chain", {}), ("auto", {"auto": cheap})):
            dec = SpecDecoder(model, LlamaDrafter(drafter), mode=mode, k=4, backend=backend, compile=True, **kw)
            out, m = dec.generate(prompt, 40)
            assert out == ref, (backend, mode)
            accepted.add(max(m.accepted) == 4)
    assert accepted == {True, False}  # the self-drafter's chains are all taken, the other's are not


def test_the_probe_is_memoised_by_everything_it_depends_on(monkeypatch):
    """TargetRunner probes the lean forward once per fingerprint: a reloaded copy of a model (a new object, the same
    weights, classes, configuration and settings) gets the first probe's decision and pad rows without a probe, and
    that decision is a fresh probe's; one changed weight, a changed norm epsilon, another thread count or a CPU that
    cannot pack the dtype are other keys; a model with a hook or an instance-level forward is never memoised."""
    from collections import OrderedDict

    monkeypatch.setattr(lean_probe, "_PROBES", OrderedDict())
    real, probed = lean.build, []

    def counted(model, **kw):
        probed.append(model)
        return real(model, **kw)

    monkeypatch.setattr(lean, "build", counted)
    first = TargetRunner(MODELS["llama"]())
    again = TargetRunner(MODELS["llama"]())
    assert len(probed) == 1 and again.backend == first.backend == "lean"
    assert (again.lean.pad_rows, again.lean.batch_invariant) == (first.lean.pad_rows, first.lean.batch_invariant)
    fresh, why = real(MODELS["llama"]())
    assert why is None and fresh.batch_invariant == again.lean.batch_invariant and fresh.pad_rows in lean.PAD_ROWS
    for decline in (lambda: seeded(GraniteForCausalLM, GraniteConfig(**SMALL, logits_scaling=4.0)),) * 2:
        assert TargetRunner(decline()).backend == "hf"
    assert len(probed) == 2  # the declined model: probed once too

    base = lean_probe.fingerprint(MODELS["llama"]())
    assert base is not None and base == lean_probe.fingerprint(MODELS["llama"]())
    weight = MODELS["llama"]()
    with torch.no_grad():
        weight.model.layers[1].mlp.down_proj.weight[3, 5] += 1e-6
    eps = MODELS["llama"]()
    eps.model.layers[2].input_layernorm.variance_epsilon = 1e-3
    assert lean_probe.fingerprint(weight) != base and lean_probe.fingerprint(eps) != base
    TargetRunner(weight)
    assert len(probed) == 3
    threads = torch.get_num_threads()
    try:
        torch.set_num_threads(threads + 1)
        assert lean_probe.fingerprint(MODELS["llama"]()) != base
    finally:
        torch.set_num_threads(threads)
    monkeypatch.setitem(lean._CAN_PACK, torch.float32, not lean._packable(torch.device("cpu"), torch.float32))
    assert lean_probe.fingerprint(MODELS["llama"]()) != base
    monkeypatch.delitem(lean._CAN_PACK, torch.float32)
    def hooked():
        model = MODELS["llama"]()
        model.model.norm.register_forward_hook(lambda m, i, o: o * 2)
        return model

    patched = MODELS["llama"]()
    patched.forward = lambda *a, **k: None
    assert lean_probe.fingerprint(hooked()) is None and lean_probe.fingerprint(patched) is None
    TargetRunner(hooked())
    TargetRunner(hooked())
    assert len(probed) == 5  # never memoised (two new objects: two probes)
