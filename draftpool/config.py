"""Typed configs from YAML recipes with dotted CLI overrides.

A config is a tree of dataclasses. `load_config(Cls, "recipes/sql/eagle3.yaml", ["train.lr=1e-4"])` reads the YAML,
applies the overrides, and builds the tree; unknown keys and values of the wrong type are rejected with one message
that names the dotted key.
"""

from __future__ import annotations

import dataclasses
import math
import types
import typing
from pathlib import Path
from typing import Any, Literal, TypeVar, get_args, get_origin

import yaml

T = TypeVar("T")


class ConfigError(ValueError):
    """A recipe or override that does not fit the config."""


def field(default: Any = dataclasses.MISSING, *, help: str, default_factory: Any = dataclasses.MISSING) -> Any:
    """A dataclass field with a help text."""
    if default_factory is not dataclasses.MISSING:
        return dataclasses.field(default_factory=default_factory, metadata={"help": help})
    return dataclasses.field(default=default, metadata={"help": help})


@dataclasses.dataclass(frozen=True)
class Override:
    """A CLI override's value as typed: a string field takes the text itself (`serve.requests=-` is "-", not the YAML
    list [None]); every other field takes it parsed as YAML (on first use, so a bad YAML value names its key)."""

    item: str
    raw: str

    def parsed(self) -> Any:
        try:
            return yaml.safe_load(self.raw) if self.raw != "" else ""
        except yaml.YAMLError as e:
            raise ConfigError(f"override {self.item!r}: value is not valid YAML ({e})") from None


def _override_tree(overrides: list[str]) -> dict[str, Any]:
    """["a.b=1", "c=x"] -> {"a": {"b": Override(..)}, "c": Override(..)}."""
    tree: dict[str, Any] = {}
    for item in overrides:
        if "=" not in item:
            raise ConfigError(f"override {item!r} is not of the form key.path=value")
        key, raw = item.split("=", 1)
        key = key.strip().lstrip("-")
        if not key:
            raise ConfigError(f"override {item!r} has an empty key")
        value = Override(item, raw)
        node = tree
        parts = key.split(".")
        for p in parts[:-1]:
            node = node.setdefault(p, {})
            if not isinstance(node, dict):
                raise ConfigError(f"override {item!r} conflicts with another override of {p!r}")
        if isinstance(node.get(parts[-1]), dict):
            raise ConfigError(f"override {item!r} conflicts with another override below {key!r}")
        node[parts[-1]] = value
    return tree


def _parsed(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _parsed(v) for k, v in node.items()}
    return node.parsed() if isinstance(node, Override) else node


def parse_overrides(overrides: list[str]) -> dict[str, Any]:
    """["a.b=1", "c=x"] -> {"a": {"b": 1}, "c": "x"}; values parsed as YAML scalars/lists (`load_config` keeps a
    string field's text as typed)."""
    return _parsed(_override_tree(overrides))


def deep_merge(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for k, v in extra.items():
        if isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = deep_merge(out[k], v)
        else:
            out[k] = v
    return out


SOURCE_ROOT = Path(__file__).resolve().parents[1]  # the checkout draftpool runs from (an editable install's too)


def find_recipe(path: str | Path) -> Path:
    """A recipe path as given, or, when relative and absent from the working directory, the same path in the
    draftpool checkout (so the installed `train_drafter` finds `recipes/...` from any directory)."""
    path = Path(path)
    if path.is_file() or path.is_absolute() or not (SOURCE_ROOT / path).is_file():
        return path
    return SOURCE_ROOT / path


def read_yaml(path: str | Path) -> dict[str, Any]:
    path = find_recipe(path)
    if not path.is_file():
        raise ConfigError(f"recipe {path} does not exist")
    try:
        data = yaml.safe_load(path.read_text()) or {}
    except yaml.YAMLError as e:
        raise ConfigError(f"recipe {path} is not valid YAML: {e}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"recipe {path} must hold a mapping at top level")
    return data


def _takes_text(tp: Any, value: Override) -> bool:
    """A string field (or `str | None`, unless the override says null) takes an override's text as typed."""
    if tp is str:
        return True
    if get_origin(tp) in (typing.Union, types.UnionType) and set(get_args(tp)) == {str, type(None)}:
        return value.raw.strip() not in ("null", "~", "Null", "NULL")
    return False


def _coerce(value: Any, tp: Any, key: str) -> Any:
    if isinstance(value, Override):
        value = value.raw if _takes_text(tp, value) else value.parsed()
    if isinstance(value, dict) and not dataclasses.is_dataclass(tp) and get_origin(tp) is not dict:
        value = _parsed(value)  # a mapping given to a field of type Any
    origin = get_origin(tp)
    if tp is Any:
        return value
    if origin in (typing.Union, types.UnionType):
        args = get_args(tp)
        if value is None and type(None) in args:
            return None
        errors = []
        for a in args:
            if a is type(None):
                continue
            try:
                return _coerce(value, a, key)
            except ConfigError as e:
                errors.append(str(e))
        raise ConfigError(errors[0] if errors else f"{key}: bad value {value!r}")
    if origin is Literal:
        if value not in get_args(tp):
            raise ConfigError(f"{key}: {value!r} is not one of {list(get_args(tp))}")
        return value
    if origin in (list, tuple):
        if not isinstance(value, list | tuple):
            raise ConfigError(f"{key}: expected a list, got {value!r}")
        (inner, *_) = get_args(tp) or (Any,)
        items = [_coerce(v, inner, f"{key}[{i}]") for i, v in enumerate(value)]
        return items if origin is list else tuple(items)
    if origin is dict:
        if not isinstance(value, dict):
            raise ConfigError(f"{key}: expected a mapping, got {value!r}")
        _, vt = get_args(tp) or (Any, Any)
        return {str(k): _coerce(v, vt, f"{key}.{k}") for k, v in value.items()}
    if dataclasses.is_dataclass(tp):
        if isinstance(value, tp):
            return value
        if not isinstance(value, dict):
            raise ConfigError(f"{key}: expected a mapping for {tp.__name__}, got {value!r}")
        return build(tp, value, prefix=f"{key}.")
    if tp is bool:
        if not isinstance(value, bool):
            raise ConfigError(f"{key}: expected true/false, got {value!r}")
        return value
    if tp is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(f"{key}: expected an integer, got {value!r}")
        return value
    if tp is float:
        number = None
        if isinstance(value, str):  # YAML 1.1 reads 1e-4 (no dot) as a string
            try:
                number = float(value)
            except ValueError:
                pass
        if number is None:
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise ConfigError(f"{key}: expected a number, got {value!r}")
            try:
                number = float(value)
            except OverflowError:  # an integer too large for a float
                number = math.inf
        if not math.isfinite(number):  # .nan / .inf: no rate, share, timeout or threshold means that
            raise ConfigError(f"{key}: expected a finite number, got {value!r}")
        return number
    if tp is str:
        if not isinstance(value, str | int | float) or isinstance(value, bool):
            raise ConfigError(f"{key}: expected a string, got {value!r}")
        return str(value)
    raise ConfigError(f"{key}: unsupported type {tp}")


def build(cls: type[T], data: dict[str, Any], prefix: str = "") -> T:
    """Build dataclass `cls` from a mapping, rejecting unknown keys."""
    hints = typing.get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls)}
    unknown = sorted(set(data) - set(fields))
    renamed = getattr(cls, "RENAMED", {})  # a config's {old key: new key}: an old recipe gets the new key's name
    if moved := [u for u in unknown if u in renamed]:
        raise ConfigError("; ".join(f"{prefix + u} was renamed to {prefix + renamed[u]}" for u in moved))
    if unknown:
        raise ConfigError(
            f"unknown key{'s' if len(unknown) > 1 else ''} {', '.join(prefix + u for u in unknown)} "
            f"(known: {', '.join(prefix + k for k in fields)})"
        )
    kwargs = {name: _coerce(value, hints[name], prefix + name) for name, value in data.items()}
    missing = [
        n for n, f in fields.items()
        if n not in kwargs and f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
    ]
    if missing:
        raise ConfigError(f"missing required key(s): {', '.join(prefix + m for m in missing)}")
    obj = cls(**kwargs)
    check = getattr(obj, "validate", None)
    if check is not None:
        check()
    return obj


def load_config(cls: type[T], path: str | Path | None, overrides: list[str] | None = None) -> T:
    """Read a recipe (or nothing), merge dotted overrides, build and validate `cls`."""
    data = read_yaml(path) if path is not None else {}
    data = deep_merge(data, _override_tree(overrides or []))
    return build(cls, data)


def to_dict(cfg: Any) -> dict[str, Any]:
    return dataclasses.asdict(cfg)


def help_text(cls: type, prefix: str = "") -> str:
    """One line per key: dotted name, default, help."""
    lines = []
    hints = typing.get_type_hints(cls)
    for f in dataclasses.fields(cls):
        tp = hints[f.name]
        if dataclasses.is_dataclass(tp):
            lines.append(help_text(tp, prefix + f.name + "."))
            continue
        default = f.default if f.default is not dataclasses.MISSING else (
            f.default_factory() if f.default_factory is not dataclasses.MISSING else "<required>"
        )
        lines.append(f"  {prefix + f.name} = {default!r}  # {f.metadata.get('help', '')}")
    return "\n".join(lines)
