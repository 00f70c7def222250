"""The docs name real things.

Every command line in a fenced block of README.md and docs/*.md (```bash / ```sh / ```shell / ```console blocks, and
unlabeled blocks for their lines that start with python, bash, accelerate, .venv/bin/..., pytest or curl), and every
inline code span that is a whole command (`python -m benchmarks.select --per-domain 6 ...`), that
invokes an entry point of this repository (train_drafter.py, build_pool.py, online_adapt.py [--bench],
`python -m benchmarks.X / data_gen.X / training.X`, `bash scripts/X.sh`, `python scripts/X.py`) must name a file that
exists, pass only `--flags` the entry point's argparse accepts (read from its `--help`), and give only `key=value`
overrides that are keys of its config (read from `--help-config` where the entry point has it, plus the fields its
config dataclass nests: an optional sub-config such as `data.user_dataset.*`, and `data.gen.*`, which are
self-distillation keys). Every relative markdown link and image in those files must point at a file that exists,
and a `#anchor` into a markdown file at one of its headings.

All `--help` / `--help-config` texts come from one subprocess (each entry point run with runpy, torch imported once),
cached for the module.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOC_FILES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

COMMAND_LANGS = {"bash", "sh", "shell", "console", "zsh"}
COMMAND_STARTS = ("python", "bash", "accelerate", ".venv/bin/", "pytest", "curl", "sh ")
PYTHONS = re.compile(r"^(?:\S*/)?python(?:3(?:\.\d+)?)?$")
ACCELERATES = re.compile(r"^(?:\S*/)?accelerate$")
ENV_ASSIGN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
OVERRIDE = re.compile(r"^([a-z_][a-z0-9_]*(?:\.[a-z0-9_]+)*)=")
INLINE_STARTS = ("python ", "python3 ", "accelerate launch ", "bash scripts/", ".venv/bin/", "train_drafter ",
                 "build_pool ", "online_adapt ")
INSTALLED = {"train_drafter": "train_drafter.py", "build_pool": "build_pool.py", "online_adapt": "online_adapt.py"}
ROOT_SCRIPTS = {"train_drafter.py", "build_pool.py", "online_adapt.py"}
# entry point -> (module, config dataclass) whose keys its key=value overrides set
CONFIGS = {
    "train_drafter.py": ("training.config", "TrainConfig"),
    "build_pool.py": ("training.config", "TrainConfig"),  # build_pool overrides every head's TrainConfig
    "online_adapt.py": ("online.adapt", "AdaptConfig"),
    "data_gen.generate": ("data_gen.plan", "DataGenConfig"),
}
HAS_HELP_CONFIG = {"train_drafter.py", "online_adapt.py"}
# dict-valued config fields whose keys are another entry point's keys
DICT_KEYS = {"data.gen": "data_gen.generate"}


# ------------------------------------------------------------------------------------------------ reading the docs


def fenced_blocks(text: str) -> list[tuple[str, int, list[str]]]:
    """(language, line number of the first content line, lines) of every fenced block."""
    blocks, lines, i = [], text.splitlines(), 0
    while i < len(lines):
        m = re.match(r"^\s*(`{3,}|~{3,})\s*([\w+-]*)", lines[i])
        if not m:
            i += 1
            continue
        fence, lang, body, start = m.group(1), m.group(2).lower(), [], i + 2
        i += 1
        while i < len(lines) and not lines[i].strip().startswith(fence):
            body.append(lines[i])
            i += 1
        blocks.append((lang, start, body))
        i += 1
    return blocks


def logical_lines(body: list[str], start: int) -> list[tuple[int, str]]:
    """Join backslash continuations; (line number, text)."""
    out, buf, first = [], "", start
    for n, line in enumerate(body, start):
        if not buf:
            first = n
        if line.rstrip().endswith("\\"):
            buf += line.rstrip()[:-1] + " "
            continue
        out.append((first, buf + line))
        buf = ""
    if buf:
        out.append((first, buf))
    return out


def inline_commands(text: str) -> list[tuple[int, str]]:
    """(line number, command) of every inline code span outside fenced blocks that is a whole command line
    (`python -m benchmarks.select --per-domain 6 ...`, possibly wrapped over lines)."""
    lines = text.splitlines()
    in_fence, fence, kept = False, "", []
    for line in lines:  # blank out fenced blocks, keeping line numbers
        m = re.match(r"^\s*(`{3,}|~{3,})", line)
        if m and (not in_fence or line.strip().startswith(fence)):
            in_fence, fence = (not in_fence), m.group(1)
            kept.append("")
            continue
        kept.append("" if in_fence else line)
    flat = "\n".join(kept)
    out = []
    for m in re.finditer(r"(?<!`)`([^`]+)`(?!`)", flat):
        span = " ".join(m.group(1).split())
        if span.startswith(INLINE_STARTS):
            out.append((flat.count("\n", 0, m.start()) + 1, span))
    return out


def doc_commands() -> list[tuple[str, str]]:
    """(where, command line) of every command line of every fenced command block, and of inline commands."""
    cmds = []
    for path in DOC_FILES:
        for n, span in inline_commands(path.read_text()):
            cmds.append((f"{path.relative_to(ROOT)}:{n}", span))
        for lang, start, body in fenced_blocks(path.read_text()):
            if lang and lang not in COMMAND_LANGS:
                continue
            for n, line in logical_lines(body, start):
                s = line.strip()
                if not s or s.startswith("#"):
                    continue
                if not lang and not s.startswith(COMMAND_STARTS):
                    continue
                cmds.append((f"{path.relative_to(ROOT)}:{n}", s))
    return cmds


def split_commands(line: str) -> list[list[str]]:
    """Shell words of each simple command of a line (split at &&, ||, ;, |), comments dropped."""
    lex = shlex.shlex(line, posix=True, punctuation_chars="&|;")
    lex.whitespace_split = True
    parts, cur = [], []
    for tok in lex:
        if tok and set(tok) <= set("&|;"):
            parts.append(cur)
            cur = []
        else:
            cur.append(tok)
    parts.append(cur)
    return [p for p in parts if p]


def invocation(words: list[str]) -> tuple[str, list[str]] | None:
    """(entry point, its arguments) when the words run one of this repository's entry points, else None.

    An entry point is a root script ("train_drafter.py"), a module ("benchmarks.decode") or a script path
    ("scripts/setup.sh", "scripts/freeze_prompts.py"); online_adapt.py --bench is benchmarks.online."""
    while words and ENV_ASSIGN.match(words[0]):
        if "$(" in words[0] and ")" not in words[0].split("$(", 1)[1]:  # KEY=$(cmd args) spans words
            while len(words) > 1 and ")" not in words[1]:
                words = words[1:]
            words = words[1:]
        words = words[1:]
    if not words:
        return None
    prog, rest = words[0], words[1:]
    if prog in INSTALLED:
        entry, args = INSTALLED[prog], rest
    elif PYTHONS.match(prog):
        while rest and rest[0].startswith("-") and rest[0] != "-m":  # python -u, -X ...
            rest = rest[1:]
        if not rest:
            return None
        if rest[0] == "-m":
            if len(rest) < 2 or rest[1].split(".")[0] not in {"benchmarks", "data_gen", "training", "scripts"}:
                return None  # pytest, pip, ...
            entry, args = rest[1], rest[2:]
        else:
            entry, args = rest[0], rest[1:]
    elif ACCELERATES.match(prog):
        if not rest or rest[0] != "launch":
            return None
        rest = rest[1:]
        while rest and not rest[0].endswith(".py"):  # accelerate's own options
            rest = rest[1:]
        if not rest:
            return None
        entry, args = rest[0], rest[1:]
    elif prog in ("bash", "sh"):
        if not rest:
            return None
        entry, args = rest[0], rest[1:]
    else:
        return None
    if entry.startswith("./"):
        entry = entry[2:]
    is_module = "." in entry and not entry.endswith((".py", ".sh"))
    if not (entry in ROOT_SCRIPTS or entry.startswith("scripts/") or is_module):
        return None
    if entry == "online_adapt.py" and "--bench" in args:
        entry, args = "benchmarks.online", [a for a in args if a != "--bench"]
    return entry, args


def entry_file(entry: str) -> Path:
    if entry.endswith((".py", ".sh")):
        return ROOT / entry
    return ROOT / (entry.replace(".", "/") + ".py")


def doc_invocations() -> list[tuple[str, str, str, list[str]]]:
    out = []
    for where, line in doc_commands():
        try:
            commands = split_commands(line)
        except ValueError as e:  # unbalanced quotes
            out.append((where, line, f"!unparsable: {e}", []))
            continue
        for words in commands:
            inv = invocation(words)
            if inv:
                out.append((where, line, *inv))
    return out


# ------------------------------------------------------------------------------------------ asking the entry points

HELPER = textwrap.dedent(
    r'''
    import contextlib, dataclasses, io, json, runpy, sys, typing, types, importlib

    entries, configs, help_config = json.loads(sys.argv[1])
    out = {"help": {}, "help_config": {}, "keys": {}, "dicts": {}}

    def run(entry, argv):
        buf = io.StringIO()
        sys.argv = [entry, *argv]
        try:
            with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(io.StringIO()):
                if entry.endswith(".py"):
                    runpy.run_path(entry, run_name="__main__")
                else:
                    runpy.run_module(entry, run_name="__main__", alter_sys=True)
        except SystemExit:
            pass
        except Exception as e:  # reported as a help text that names no flag
            return f"!{type(e).__name__}: {e}"
        return buf.getvalue()

    def walk(cls, prefix, keys, dicts):
        hints = typing.get_type_hints(cls)
        for f in dataclasses.fields(cls):
            tp, name = hints[f.name], prefix + f.name
            args = typing.get_args(tp) if typing.get_origin(tp) in (typing.Union, types.UnionType) else (tp,)
            sub = [a for a in args if dataclasses.is_dataclass(a)]
            if sub:
                keys.append(name)  # the sub-config as a whole
                walk(sub[0], name + ".", keys, dicts)
            elif any(typing.get_origin(a) is dict or a is dict for a in args):
                keys.append(name)
                dicts.append(name)
            else:
                keys.append(name)

    for entry in entries:
        out["help"][entry] = run(entry, ["--help"])
    for entry in help_config:
        out["help_config"][entry] = run(entry, ["--help-config"])
    for entry, (mod, cls) in configs.items():
        keys, dicts = [], []
        walk(getattr(importlib.import_module(mod), cls), "", keys, dicts)
        out["keys"][entry], out["dicts"][entry] = keys, dicts
    print("\n@@JSON@@" + json.dumps(out))
    '''
)


@pytest.fixture(scope="module")
def entry_points() -> dict:
    return ask_entry_points()


def ask_entry_points() -> dict:
    """--help of every entry point the docs invoke (argparse ones), --help-config and config keys; one process."""
    entries = sorted({e for _, _, e, _ in doc_invocations() if not e.startswith("!")})
    entries = [e for e in entries if entry_file(e).is_file()]
    runnable = []
    for e in entries:
        f = entry_file(e)
        if e.endswith(".sh"):
            companion = f.with_suffix(".py")  # scripts/gpu_check.sh hands its arguments to scripts/gpu_check.py
            if companion.is_file() and "argparse" in companion.read_text():
                runnable.append(str(companion.relative_to(ROOT)))
        elif any(w in f.read_text() for w in ("argparse", "harness.parser")) or e in ROOT_SCRIPTS:  # the benchmarks'
            # parsers come from benchmarks/harness.py
            runnable.append(e)
    payload = json.dumps([runnable, {e: CONFIGS[e] for e in CONFIGS}, sorted(HAS_HELP_CONFIG)])
    res = subprocess.run([sys.executable, "-c", HELPER, payload], cwd=ROOT, capture_output=True, text=True,
                         timeout=600)
    assert "@@JSON@@" in res.stdout, f"the entry points' --help failed:\n{res.stdout[-3000:]}\n{res.stderr[-3000:]}"
    info = json.loads(res.stdout.split("@@JSON@@", 1)[1])
    info["runnable"] = runnable
    return info


def help_flags(text: str) -> tuple[set[str], set[str]]:
    """(every --flag of an argparse --help, those that take a value): the usage block and the option lines."""
    if text.startswith("!"):
        return set(), set()
    lines = text.splitlines()
    usage = []
    for line in lines:
        if usage and not line.strip():
            break
        if usage or line.startswith("usage:"):
            usage.append(line)
    option_lines = [ln for ln in lines if re.match(r"^\s{1,8}(-\w, )?--[\w-]", ln)]
    flags, valued = set(), set()
    for part in [" ".join(usage), *option_lines]:
        for m in re.finditer(r"(--[A-Za-z0-9][\w-]*)(?:[ =]([A-Z_{][\w{},.:|-]*|\[?[A-Z]))?", part):
            flags.add(m.group(1))
            if m.group(2):
                valued.add(m.group(1))
    return flags, valued


def accepted_flags(entry: str, info: dict) -> tuple[set[str], set[str]]:
    f = entry_file(entry)
    key = entry
    if entry.endswith(".sh"):
        companion = str(f.with_suffix(".py").relative_to(ROOT))
        if companion not in info["runnable"]:  # a plain shell script: the flags its text handles
            found = set(re.findall(r"(--[A-Za-z0-9][\w-]*)", f.read_text()))
            return found, found
        key = companion
    return help_flags(info["help"].get(key, ""))


def config_keys(entry: str, info: dict) -> tuple[set[str], list[str]]:
    keys = set(info["keys"].get(entry, []))
    if entry in info["help_config"]:
        keys |= {m.group(1) for m in re.finditer(r"^\s+([\w.]+) = ", info["help_config"][entry], re.M)}
    return keys, info["dicts"].get(entry, [])


def bad_override(entry: str, key: str, info: dict) -> bool:
    keys, dicts = config_keys(entry, info)
    if key in keys:
        return False
    for d in dicts:
        if key.startswith(d + "."):
            other = DICT_KEYS.get(d)
            return other is not None and bad_override(other, key[len(d) + 1:], info)
    return True


# ------------------------------------------------------------------------------------------------------- the tests


def test_the_docs_hold_commands():
    invs = doc_invocations()
    entries = {e for _, _, e, _ in invs}
    assert {"train_drafter.py", "build_pool.py", "online_adapt.py"} <= entries, entries
    text = (ROOT / "README.md").read_text()
    assert "bash scripts/setup.sh && .venv/bin/python -m pytest -q -n 3 --dist worksteal" in text  # CI runs this


@pytest.mark.tier2
def test_commands_name_real_entry_points_flags_and_keys(entry_points):
    problems = []
    for where, line, entry, args in doc_invocations():
        if entry.startswith("!"):
            problems.append(f"{where}: {entry[1:]}: {line}")
            continue
        f = entry_file(entry)
        if not f.is_file():
            problems.append(f"{where}: {entry}: no such file {f.relative_to(ROOT)}")
            continue
        flags, valued = accepted_flags(entry, entry_points)
        prev_takes_value = False
        for a in args:
            if a.startswith("--"):
                name = a.split("=", 1)[0]
                if name not in flags:
                    problems.append(f"{where}: {entry} has no flag {name} (it has {', '.join(sorted(flags))})")
                prev_takes_value = name in valued and "=" not in a
                continue
            m = OVERRIDE.match(a)
            if m and entry in CONFIGS and not prev_takes_value and bad_override(entry, m.group(1), entry_points):
                problems.append(f"{where}: {entry} has no config key {m.group(1)}")
            if a.startswith("recipes/") and a.endswith((".yaml", ".yml")) and not (ROOT / a).is_file():
                problems.append(f"{where}: no such recipe {a}")
            prev_takes_value = False
    assert not problems, "commands in the docs that do not run as written:\n" + "\n".join(problems)


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation but - and _ dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    seen: dict[str, int] = {}
    out = set()
    text = re.sub(r"^```.*?^```", "", path.read_text(), flags=re.S | re.M)
    for m in re.finditer(r"^#{1,6}\s+(.*?)\s*#*\s*$", text, re.M):
        s = slug(m.group(1))
        n = seen.get(s, 0)
        seen[s] = n + 1
        out.add(s if n == 0 else f"{s}-{n}")
    return out


def test_relative_links_point_at_files():
    problems = []
    for path in DOC_FILES:
        text = re.sub(r"^\s*```.*?^\s*```", "", path.read_text(), flags=re.S | re.M)  # no links in code
        text = re.sub(r"`[^`\n]*`", "", text)
        for m in re.finditer(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)", text):
            target = m.group(1)
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
                continue
            file_part, _, anchor = target.partition("#")
            dest = (path.parent / file_part).resolve() if file_part else path
            if not dest.exists():
                problems.append(f"{path.relative_to(ROOT)}: {target}: no such file")
            elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
                problems.append(f"{path.relative_to(ROOT)}: {target}: no heading with that anchor")
    assert not problems, "broken links:\n" + "\n".join(problems)
