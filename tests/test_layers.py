"""The package layers import only downward: draftpool (core, models, pool format, the target forward) <- data_gen <-
training (self-distillation and the feature cache run draftpool.forward, the same forward decoding uses);
draftpool <- specsel.decoding <- specsel.selection <- specsel.lookahead <- online. Benchmarks and scripts sit outside
the packages and nothing inside imports them. Checked on the source (every import statement, module level or not)."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# package -> the packages it may import from (its own included)
ALLOWED = {
    "draftpool": {"draftpool"},
    "data_gen": {"draftpool", "data_gen"},
    "training": {"draftpool", "data_gen", "training"},
    "specsel.decoding": {"draftpool", "specsel.decoding"},
    "specsel.selection": {"draftpool", "data_gen", "specsel.decoding", "specsel.selection"},
    "specsel.lookahead": {"draftpool", "specsel.decoding", "specsel.selection", "specsel.lookahead"},
    # serving renders prompts and stops answers with draftpool.chat, never through data generation or training
    "online": {"draftpool", "specsel.decoding", "specsel.selection", "specsel.lookahead", "online"},
}
PROJECT = ("draftpool", "data_gen", "training", "specsel", "online", "benchmarks", "scripts", "tests",
           "train_drafter", "build_pool", "online_adapt")


def layer_of(module: str) -> str | None:
    for layer in sorted(ALLOWED, key=len, reverse=True):
        if module == layer or module.startswith(layer + "."):
            return layer
    return "specsel" if module == "specsel" else None


def imported(path: Path) -> list[str]:
    names = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module)
    return [n for n in names if n.split(".")[0] in PROJECT]


FILES = [p for pkg in ("draftpool", "data_gen", "training", "specsel", "online") for p in (ROOT / pkg).rglob("*.py")]


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_imports_run_downward(path):
    module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
    own = layer_of(module)
    bad = [name for name in imported(path)
           if layer_of(name) is None or (own != "specsel" and layer_of(name) not in ALLOWED[own])]
    assert not bad, f"{module} ({own}) imports {bad}"


def test_the_check_sees_an_upward_import(tmp_path):
    bad = tmp_path / "m.py"
    bad.write_text("def f():\n    from online.adapt import main\n")
    assert imported(bad) == ["online.adapt"] and layer_of("online.adapt") not in ALLOWED["training"]
