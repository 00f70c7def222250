"""Pool export: EAGLE-3 head folders round-trip exactly, bad folders are refused, writes are atomic."""

from __future__ import annotations

import dataclasses
import json
import os

import pytest
import torch
from safetensors.torch import load_file, save_file
from transformers import LlamaConfig, LlamaForCausalLM

import draftpool.models.eagle3 as eagle3_files
import draftpool.pool as export
from draftpool.models.eagle3 import (
    Eagle3Head,
    default_aux_layers,
    head_config,
    load_eagle3,
    select_draft_vocab,
    write_eagle3,
)
from draftpool.models.folder import DrafterLoadError
from draftpool.models.llama import load_llama
from draftpool.pool import update_pool_manifest
from draftpool.target import TargetInfo

V, H, LAYERS, VD = 97, 32, 6, 40


def target_config():
    return LlamaConfig(vocab_size=V, hidden_size=H, num_attention_heads=4, num_key_value_heads=2,
                       intermediate_size=64, num_hidden_layers=LAYERS, max_position_embeddings=64)


@pytest.fixture
def info(tmp_path):
    return TargetInfo(name="fake-target", slug="fake-target", path=str(tmp_path / "target"), weights_sha256="ab" * 32,
                      num_layers=LAYERS, hidden_size=H, vocab_size=V, max_position_embeddings=64)


@pytest.fixture
def head():
    torch.manual_seed(0)
    h = Eagle3Head(head_config(target_config(), VD, default_aux_layers(LAYERS)))
    with torch.no_grad():
        for p in h.parameters():
            p.copy_(torch.randn_like(p) * 0.3 + (1.0 if p.dim() == 1 else 0.0))
        d2t, t2d = select_draft_vocab(torch.randint(0, 50, (V,)), VD)
        h.d2t.copy_(d2t)
        h.t2d.copy_(t2d)
    return h.eval()


def meta(info, **kw):
    return {"kind": "eagle3", "target": info.name, "target_weights_sha256": info.weights_sha256, **kw}


@pytest.fixture
def written(tmp_path, head, info):
    out = tmp_path / "pool" / "sql-eagle3"
    write_eagle3(head, out, info, meta(info), speculators=True, k=4)
    return out


def test_round_trip_identical_logits(written, head, info):
    loaded = load_eagle3(written, info, head.embed_tokens.weight).eval()
    g = torch.Generator().manual_seed(1)
    aux, ids = torch.randn(2, 6, 3 * H, generator=g), torch.randint(0, V, (2, 6), generator=g)
    mask = torch.ones(2, 6, dtype=torch.long)
    with torch.no_grad():
        a, b = head(aux, ids, mask, 3)[1], loaded(aux, ids, mask, 3)[1]
    assert all(torch.equal(x, y) for x, y in zip(a, b))
    assert torch.equal(loaded.d2t, head.d2t) and torch.equal(loaded.t2d, head.t2d)


def test_exported_files_are_readable_by_other_users(written):
    """safetensors writes its files 0600; every exported file gets the mode a plain open() gives (0644 here)."""
    mask = os.umask(0)
    os.umask(mask)
    files = [f for f in written.rglob("*") if f.is_file()]
    assert {f.name for f in files} >= {"model.safetensors", "config.json", "draftpool.json"}
    assert {f.name: oct(f.stat().st_mode & 0o777) for f in files} == {f.name: oct(0o666 & ~mask) for f in files}


def test_config_json(written, info):
    cfg = json.loads((written / "config.json").read_text())
    assert cfg["architectures"] == ["LlamaForCausalLMEagle3"]
    assert cfg["draft_vocab_size"] == VD and cfg["num_hidden_layers"] == 1 and cfg["vocab_size"] == info.vocab_size
    assert cfg["tie_word_embeddings"] is False
    assert cfg["eagle_aux_hidden_state_layer_ids"] == default_aux_layers(LAYERS)
    assert json.loads((written / "draftpool.json").read_text()) == meta(info)


def test_flat_tensor_names(written):
    names = set(load_file(str(written / "model.safetensors")))
    assert "fc.weight" in names and "midlayer.self_attn.q_proj.weight" in names and {"d2t", "t2d"} <= names
    assert not any(n.startswith(("model.", "embed_tokens")) for n in names)


def test_speculators_layout(written, head):
    spec = json.loads((written / "speculators" / "config.json").read_text())
    assert spec["speculators_model_type"] == "eagle3" and spec["draft_vocab_size"] == VD
    assert spec["speculators_config"]["proposal_methods"][0]["speculative_tokens"] == 4
    tensors = load_file(str(written / "speculators" / "model.safetensors"))
    flat = head.export_state_dict()
    expected = {("layers.0." + k[len("midlayer."):] if k.startswith("midlayer.") else k) for k in flat}
    assert set(tensors) == expected and "layers.0.self_attn.q_proj.weight" in tensors
    assert not any(k.startswith("midlayer.") for k in tensors)
    assert torch.equal(tensors["layers.0.mlp.down_proj.weight"], flat["midlayer.mlp.down_proj.weight"])


def test_no_speculators_by_default(tmp_path, head, info):
    write_eagle3(head, tmp_path / "h", info, meta(info))
    assert not (tmp_path / "h" / "speculators").exists()


# --- refusals --------------------------------------------------------------------------------------------------------
def _load(path, info, head):
    return load_eagle3(path, info, head.embed_tokens.weight)


def test_corrupt_safetensors(written, info, head):
    f = written / "model.safetensors"
    f.write_bytes(f.read_bytes()[: f.stat().st_size // 2])
    with pytest.raises(DrafterLoadError, match="missing or corrupt"):
        _load(written, info, head)


def test_missing_tensor(written, info, head):
    tensors = load_file(str(written / "model.safetensors"))
    del tensors["fc.weight"]
    save_file(tensors, str(written / "model.safetensors"))
    with pytest.raises(DrafterLoadError, match=r"missing \['fc.weight'\]"):
        _load(written, info, head)


def test_other_kind(written, info, head):
    (written / "draftpool.json").write_text(json.dumps(meta(info, kind="llama")))
    with pytest.raises(DrafterLoadError, match="'llama' drafter, not a 'eagle3'"):
        _load(written, info, head)


def test_other_target_weights(written, info, head):
    (written / "draftpool.json").write_text(json.dumps(meta(info, target_weights_sha256="cd" * 32)))
    with pytest.raises(DrafterLoadError, match="was trained for target"):
        _load(written, info, head)


@pytest.mark.parametrize("change", [{"hidden_size": 64}, {"vocab_size": 128}, {"num_layers": 8}, {"num_layers": 4}])
def test_other_target_shape(written, info, head, change):
    with pytest.raises(DrafterLoadError, match="target"):
        _load(written, dataclasses.replace(info, **change), head)


# --- atomic writes ---------------------------------------------------------------------------------------------------
def test_failed_write_keeps_previous_folder(written, head, info, monkeypatch):
    before = {p.relative_to(written): p.read_bytes() for p in written.rglob("*") if p.is_file()}
    calls = []

    def boom(tensors, filename, metadata=None):
        calls.append(filename)
        if len(calls) == 2:  # the speculators copy: the flat one is already written in the temp folder
            raise OSError("disk full")
        return save_file(tensors, filename, metadata=metadata)

    monkeypatch.setattr(eagle3_files, "save_file", boom)
    with torch.no_grad():
        head.fc.weight.add_(1.0)
    with pytest.raises(OSError, match="disk full"):
        write_eagle3(head, written, info, meta(info, note="new"), speculators=True)
    after = {p.relative_to(written): p.read_bytes() for p in written.rglob("*") if p.is_file()}
    assert after == before
    assert sorted(p.name for p in written.parent.iterdir()) == [written.name]  # no temp folder left


def test_failed_first_write_leaves_nothing(tmp_path, head, info, monkeypatch):
    monkeypatch.setattr(eagle3_files, "save_file", lambda *a, **k: (_ for _ in ()).throw(OSError("disk full")))
    with pytest.raises(OSError):
        write_eagle3(head, tmp_path / "pool" / "new", info, meta(info))
    assert list((tmp_path / "pool").iterdir()) == []


def test_rewrite_replaces_folder(written, head, info):
    with torch.no_grad():
        head.fc.weight.add_(1.0)
    write_eagle3(head, written, info, meta(info))
    assert not (written / "speculators").exists()
    assert torch.equal(load_file(str(written / "model.safetensors"))["fc.weight"], head.fc.weight)
    assert sorted(p.name for p in written.parent.iterdir()) == [written.name]


# --- pool manifest ---------------------------------------------------------------------------------------------------
def test_update_pool_manifest(tmp_path, info):
    update_pool_manifest(tmp_path, info, "sql-eagle3", {"path": "sql-eagle3", "kind": "eagle3"})
    update_pool_manifest(tmp_path, info, "math-llama68m", {"path": "math-llama68m", "kind": "llama"})
    update_pool_manifest(tmp_path, info, "sql-eagle3", {"path": "sql-eagle3", "kind": "eagle3", "v": 2})
    m = json.loads((tmp_path / "pool.json").read_text())
    assert m["format"] == "draftpool-pool/1" and m["target"] == info.name
    assert m["target_weights_sha256"] == info.weights_sha256
    assert m["drafters"] == {"sql-eagle3": {"path": "sql-eagle3", "kind": "eagle3", "v": 2},
                             "math-llama68m": {"path": "math-llama68m", "kind": "llama"}}


def test_pool_manifest_of_another_target(tmp_path, info):
    update_pool_manifest(tmp_path, info, "sql-eagle3", {"path": "sql-eagle3", "kind": "eagle3"})
    other = dataclasses.replace(info, name="other", weights_sha256="ef" * 32)
    with pytest.raises(DrafterLoadError, match="belongs to another target"):
        update_pool_manifest(tmp_path, other, "x", {"path": "x", "kind": "eagle3"})
    assert set(json.loads((tmp_path / "pool.json").read_text())["drafters"]) == {"sql-eagle3"}


# --- llama drafters --------------------------------------------------------------------------------------------------
def test_load_llama_vocab_mismatch(tmp_path, info):
    cfg = LlamaConfig(vocab_size=V + 3, hidden_size=16, num_attention_heads=2, num_key_value_heads=2,
                      intermediate_size=32, num_hidden_layers=1)
    LlamaForCausalLM(cfg).save_pretrained(tmp_path / "d")
    (tmp_path / "d" / "draftpool.json").write_text(json.dumps(
        {"kind": "llama", "target_weights_sha256": info.weights_sha256}))
    with pytest.raises(DrafterLoadError, match=f"drafter vocab {V + 3} != target vocab {V}"):
        load_llama(tmp_path / "d", info)


def test_load_llama_refuses_eagle3_folder(written, info):
    with pytest.raises(DrafterLoadError, match="'eagle3' drafter, not a 'llama'"):
        load_llama(written, info)


def test_drafter_eval_reads_the_exported_evaluation(tmp_path):
    from draftpool.pool import drafter_eval

    (tmp_path / "draftpool.json").write_text('{"kind": "eagle3", "eval": {"top1_per_step": [0.5, 0.4]}}')
    assert drafter_eval(tmp_path) == {"top1_per_step": [0.5, 0.4]}
    (tmp_path / "draftpool.json").write_text('{"kind": "eagle3"}')
    assert drafter_eval(tmp_path) is None and drafter_eval(tmp_path / "none") is None
    for bad, what in (("{broken", "not valid JSON"), ("[1]", "must hold a JSON object"),
                      ('{"eval": [0.5]}', '"eval" must be a JSON object')):  # corrupt: refused, not taken as none
        (tmp_path / "draftpool.json").write_text(bad)
        with pytest.raises(DrafterLoadError, match=what) as e:
            drafter_eval(tmp_path)
        assert str(tmp_path / "draftpool.json") in str(e.value)


# --- corrupt or foreign pool files: one DrafterLoadError naming the file, never a traceback --------------------------
def _edit_json(path, change):
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


@pytest.mark.parametrize("file, corrupt, message", [
    ("draftpool.json", b"{not json", "draftpool.json is not valid JSON"),
    ("draftpool.json", b"\xff\xfe{}", "draftpool.json is not valid JSON"),
    ("draftpool.json", b'["eagle3"]', "draftpool.json must hold a JSON object, not a list"),
    ("config.json", b"{not json", "config.json is not valid JSON"),
    ("config.json", b"7", "config.json must hold a JSON object, not a int"),
    ("config.json", lambda c: c.update(eagle_aux_hidden_state_layer_ids="1,3,5"), "eagle_aux_hidden_state_layer_ids"),
    ("config.json", lambda c: c.update(eagle_aux_hidden_state_layer_ids=[1, -2]), "eagle_aux_hidden_state_layer_ids"),
    ("config.json", lambda c: c.pop("hidden_size"), "config.json lacks 'hidden_size'"),
    ("config.json", lambda c: c.pop("vocab_size"), "config.json lacks 'vocab_size'"),
    ("config.json", lambda c: c.update(num_attention_heads="4"), "'num_attention_heads' must be a positive integer"),
    ("config.json", lambda c: c.update(intermediate_size=0), "'intermediate_size' must be a positive integer"),
    ("config.json", lambda c: c.update(rms_norm_eps="x"), "'rms_norm_eps' must be a number"),
    ("config.json", lambda c: c.update(architectures="LlamaForCausalLMEagle3"), "config architectures"),
    ("config.json", lambda c: c.update(num_attention_heads=5), "does not describe an EAGLE-3 head"),
])
def test_corrupt_head_files_are_refused_naming_the_file(written, info, head, file, corrupt, message):
    path = written / file
    if callable(corrupt):
        _edit_json(path, corrupt)
    else:
        path.write_bytes(corrupt)
    with pytest.raises(DrafterLoadError, match=message) as e:
        _load(written, info, head)
    assert str(written) in str(e.value)


def test_corrupt_llama_config_is_refused(tmp_path, info):
    cfg = LlamaConfig(vocab_size=V, hidden_size=16, num_attention_heads=2, num_key_value_heads=2,
                      intermediate_size=32, num_hidden_layers=1)
    LlamaForCausalLM(cfg).save_pretrained(tmp_path / "d")
    (tmp_path / "d" / "draftpool.json").write_text(json.dumps(
        {"kind": "llama", "target_weights_sha256": info.weights_sha256}))
    for corrupt, message in ((lambda c: c.update(num_hidden_layers="1"), "'num_hidden_layers' must be a positive"),
                             (lambda c: c.update(architectures=None), "not a LlamaForCausalLM drafter")):
        _edit_json(tmp_path / "d" / "config.json", corrupt)
        with pytest.raises(DrafterLoadError, match=message):
            load_llama(tmp_path / "d", info)
    (tmp_path / "d" / "config.json").write_text("{not json")
    with pytest.raises(DrafterLoadError, match="config.json is not valid JSON"):
        load_llama(tmp_path / "d", info)


@pytest.mark.parametrize("change", [lambda m: m.pop("target_weights_sha256"), lambda m: m.update(
    target_weights_sha256=None), lambda m: m.update(target_weights_sha256="")])
def test_a_head_that_does_not_name_its_target_is_refused(written, info, head, change):
    _edit_json(written / "draftpool.json", change)
    with pytest.raises(DrafterLoadError, match="does not say which target it was trained for; rebuild it"):
        _load(written, info, head)


def test_a_head_without_draftpool_json_is_refused(written, info, head):
    (written / "draftpool.json").unlink()
    with pytest.raises(DrafterLoadError, match="has no draftpool.json: it does not say which target"):
        _load(written, info, head)
    (written / "draftpool.json").write_text(json.dumps(meta(info, target_weights_sha256=12)))
    with pytest.raises(DrafterLoadError, match="must be a string"):
        _load(written, info, head)


def test_a_pool_manifest_that_does_not_name_its_target_is_refused(tmp_path, info):
    update_pool_manifest(tmp_path, info, "sql-eagle3", {"path": "sql-eagle3", "kind": "eagle3"})
    _edit_json(tmp_path / "pool.json", lambda m: m.pop("target_weights_sha256"))
    before = (tmp_path / "pool.json").read_text()
    with pytest.raises(DrafterLoadError, match="does not say which target its drafters were trained for"):
        update_pool_manifest(tmp_path, info, "x", {"path": "x", "kind": "eagle3"})
    assert (tmp_path / "pool.json").read_text() == before


# --- drafter paths stay inside the pool folder -----------------------------------------------------------------------
@pytest.mark.parametrize("where", ["../outside", "ABS", "link", "", "."])
def test_a_drafter_path_leading_out_of_the_pool_is_refused(tmp_path, head, info, where):
    pool = tmp_path / "pool"
    write_eagle3(head, tmp_path / "outside", info, meta(info))  # a valid head, but not the pool's
    write_eagle3(head, pool / "inside", info, meta(info))
    (pool / "link").symlink_to(tmp_path / "outside")
    update_pool_manifest(pool, info, "inside", {"path": "inside", "kind": "eagle3"})
    path = str(tmp_path / "outside") if where == "ABS" else where
    _edit_json(pool / "pool.json", lambda m: m["drafters"].update(bad={"path": path, "kind": "eagle3"}))
    target = LlamaForCausalLM(target_config())
    with pytest.raises(DrafterLoadError, match=r"drafter 'bad' has path .* leads out of the pool folder"):
        export.load_members(pool, info, target)
    with pytest.raises(DrafterLoadError, match="leads out of the pool folder"):
        export.read_manifest(pool)


def test_a_symlink_inside_the_pool_is_followed(tmp_path, head, info):
    pool = tmp_path / "pool"
    write_eagle3(head, pool / "real", info, meta(info))
    (pool / "alias").symlink_to(pool / "real")
    update_pool_manifest(pool, info, "alias", {"path": "alias", "kind": "eagle3"})
    assert [m.name for m in export.load_members(pool, info, LlamaForCausalLM(target_config()))] == ["alias"]


def test_a_llama_drafter_from_elsewhere_needs_only_the_targets_tokenizer(tmp_path, target_info):
    """An independent Llama drafter reads no target features: one without draftpool.json (e.g. a small model from
    a hub with the target's tokenizer) loads; a hash, when it names one, must still be the target's."""
    from transformers import AutoTokenizer

    cfg = LlamaConfig(vocab_size=target_info.vocab_size, hidden_size=16, num_attention_heads=2, num_key_value_heads=2,
                      intermediate_size=32, num_hidden_layers=1)
    LlamaForCausalLM(cfg).save_pretrained(tmp_path / "d")
    AutoTokenizer.from_pretrained(target_info.path).save_pretrained(tmp_path / "d")
    assert load_llama(tmp_path / "d", target_info).config.num_hidden_layers == 1
    (tmp_path / "d" / "draftpool.json").write_text(json.dumps({"kind": "llama", "target_weights_sha256": "ab" * 32}))
    with pytest.raises(DrafterLoadError, match="was trained for target"):
        load_llama(tmp_path / "d", target_info)


def test_members_name_their_kind_and_module(tmp_path, head, info):
    """load_members -> [Member(name, kind, module)] in name order, filtered by kind and by name."""
    pool = tmp_path / "pool"
    for name in ("b-eagle3", "a-eagle3"):
        write_eagle3(head, pool / name, info, meta(info))
        update_pool_manifest(pool, info, name, {"path": name, "kind": "eagle3"})
    target = LlamaForCausalLM(target_config())
    members = export.load_members(pool, info, target)
    assert [(m.name, m.kind) for m in members] == [("a-eagle3", "eagle3"), ("b-eagle3", "eagle3")]
    assert isinstance(members[0].module, Eagle3Head) and dataclasses.is_dataclass(members[0])
    with pytest.raises(dataclasses.FrozenInstanceError):
        members[0].kind = "llama"
    assert [m.name for m in export.load_members(pool, info, target, names=["b-eagle3"])] == ["b-eagle3"]
    assert export.load_members(pool, info, target, ["llama"], at_least=0) == []
    with pytest.raises(DrafterLoadError, match=r"has 0 drafter\(s\) of kind \['llama'\]: this needs >= 1"):
        export.load_members(pool, info, target, ["llama"])


def test_the_pool_module_offers_only_its_own_api():
    """pool.py's API is what it defines: a kind's folder code is asked of the kind (draftpool.models), never
    re-exported here, and the older (names, {name: (kind, module)}) loader is gone."""
    assert all(getattr(export, name).__module__ == "draftpool.pool" for name in export.__all__)
    assert not hasattr(export, "load_pool")
