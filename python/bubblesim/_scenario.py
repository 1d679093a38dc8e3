"""Scenarios: validated, and editable by key path.

A :class:`Scenario` holds the validated C++ scenario and the YAML it was read from, with the
edits made to it so far. ``with_`` returns a new scenario with keys set by their dotted paths;
``set`` does the same in place. Each edit is validated as the CLI validates a file: an error on
an edited key names the edit, an error elsewhere points at the key in the source (its file, line
and column). Relative files (a topology, a profile, a table) resolve against ``base_dir``: the
file's folder for a scenario loaded from a path, else the ``base_dir`` given to ``load``.
"""

from __future__ import annotations

import copy
import os
from typing import Any, Dict, List, Mapping, Optional, Tuple

import yaml as _yaml

from . import _core


def _yaml_value(value: Any) -> str:
    """A Python value (number, string, bool, list, dict) as YAML text in flow style."""
    text = _yaml.safe_dump(_plain(value), default_flow_style=True, sort_keys=False)
    for end in ("\n...\n", "\n"):
        if text.endswith(end):
            text = text[: -len(end)]
    return text


# Deeper than any scenario needs; the YAML loader refuses deeper nesting too (tests/errors/
# deep_nesting.yaml), and Python's own recursion limit is not an error a user should read.
_MAX_DEPTH = 64


def _plain(value: Any, path: str = "", active: Optional[set] = None, depth: int = 0) -> Any:
    """Mappings and sequences as dicts and lists, so safe_dump accepts them. A container that
    holds itself (a cycle) or nesting past _MAX_DEPTH raises ScenarioError naming the key path,
    as a bad file does."""
    if not isinstance(value, (Mapping, list, tuple)):
        return value
    active = set() if active is None else active
    where = path or "the top level"
    if id(value) in active:
        raise _dict_error(path, f"{where} holds itself (the dict or list refers back to one that "
                                "contains it): a scenario is a tree")
    if depth >= _MAX_DEPTH:
        raise _dict_error(path, f"{where} is nested more than {_MAX_DEPTH} levels deep")
    active.add(id(value))
    try:
        if isinstance(value, Mapping):
            return {str(k): _plain(v, f"{path}.{k}" if path else str(k), active, depth + 1)
                    for k, v in value.items()}
        return [_plain(v, f"{path}[{i}]", active, depth + 1) for i, v in enumerate(value)]
    finally:
        active.discard(id(value))


def _dict_error(path: str, message: str) -> "_core.ScenarioError":
    """A ScenarioError for a dict given to load(), as the loader words one for a file."""
    error = _core.ScenarioError(f"<dict>: error: {path + ': ' if path else ''}{message}")
    error.diagnostics = [("<dict>", 0, 0, path, message)]
    return error


def _dump_mapping(source: Mapping) -> str:
    """A mapping given as a scenario (or plan) as YAML text; ScenarioError for what YAML cannot
    hold."""
    try:
        return _yaml.safe_dump(_plain(source), sort_keys=False, default_flow_style=False)
    except _yaml.representer.RepresenterError as e:
        value = e.args[1] if len(e.args) > 1 else None
        raise _dict_error("", f"a value of type {type(value).__name__} is not YAML (use "
                              "str, int, float, bool, None, dicts and lists)") from None


class Scenario:
    """A validated scenario (``bubblesim.load`` makes one) that edits by key path.

    ``name``, ``file``, ``stages``, ``microbatches`` and ``schedules`` describe it;
    ``get(path)`` reads a key, ``with_({path: value, ...})`` returns an edited copy, ``set(path,
    value)`` edits it in place, ``to_yaml()`` / ``to_dict()`` give the scenario as edited.
    """

    def __init__(self, native: "_core.Scenario", source: str, name: str, base_dir: str,
                 edits: Tuple[Tuple[str, str], ...] = (), text: Optional[str] = None):
        self._native = native
        self._source = source  # the YAML it was read from
        self._name = name      # what errors call it (its path, <string>, <dict>)
        self._base_dir = base_dir
        self._edits = edits    # (path, YAML value) in the order made
        self._text = text if text is not None else source

    name = property(lambda self: self._native.name, doc="The scenario's name: key.")
    file = property(lambda self: self._native.file, doc="The file it was loaded from.")
    stages = property(lambda self: self._native.stages, doc="p: pipeline stages (devices).")
    microbatches = property(lambda self: self._native.microbatches, doc="m: microbatches.")
    schedules = property(lambda self: self._native.schedules,
                         doc="The generator names of its schedules: entries, in order.")
    base_dir = property(lambda self: self._base_dir,
                        doc="The folder relative files of the scenario resolve against.")

    @property
    def edits(self) -> Dict[str, Any]:
        """The keys set by ``with_`` / ``set`` so far, path -> value."""
        return {path: _yaml.safe_load(value) for path, value in self._edits}

    def get(self, path: str, default: Any = None) -> Any:
        """The value at a dotted key path (``"parallelism.dp"``) as Python objects, or
        ``default`` where the scenario does not give it."""
        text = _core._yaml_at(self._text, path)
        return default if text is None else _yaml.safe_load(text)

    def with_(self, edits: Optional[Mapping[str, Any]] = None, **keys: Any) -> "Scenario":
        """A new scenario with each dotted key path set to its value (mappings and lists
        allowed), validated: ``s.with_({"parallelism.dp": 16, "memory.budget": "60GiB"})``.
        Keyword arguments set top-level keys (``s.with_(schedules=["1f1b"])``). Raises
        ScenarioError naming the edit, or the key in the source, when the result is invalid."""
        new = list(self._edits)
        items = list((edits or {}).items()) + list(keys.items())
        if not items:
            return self
        for path, value in items:
            if not isinstance(path, str):
                raise TypeError(f"with_(): key paths are strings, not {type(path).__name__}")
            new.append((path, _yaml_value(value)))
        native, text = _core._load_edited(self._source, self._name, self._base_dir, new)
        return Scenario(native, self._source, self._name, self._base_dir, tuple(new), text)

    def set(self, path: str, value: Any) -> None:
        """Sets one dotted key path in place (validated like ``with_``; on an error the scenario
        is left as it was)."""
        edited = self.with_({path: value})
        self._native, self._edits, self._text = edited._native, edited._edits, edited._text

    def to_yaml(self) -> str:
        """The scenario as YAML text, with the edits (what a run of it reads)."""
        return self._text

    def to_dict(self) -> Dict[str, Any]:
        """The scenario as a dict, with the edits."""
        return copy.deepcopy(_yaml.safe_load(self._text))

    def __repr__(self) -> str:
        edited = f" edits={len(self._edits)}" if self._edits else ""
        return (f"<bubblesim.Scenario '{self.name}' p={self.stages} m={self.microbatches} "
                f"schedules={len(self.schedules)}{edited}>")


def load_scenario(source: Any, name: Optional[str], base_dir: str) -> Scenario:
    """``bubblesim.load``'s work: a Scenario from a path, YAML text or a mapping."""
    if isinstance(source, Scenario):
        return source
    if isinstance(source, Mapping):
        text = _dump_mapping(source)
        label = name or "<dict>"
        return Scenario(_core._load_string(text, label, base_dir), text, label, base_dir)
    if isinstance(source, os.PathLike):
        source = os.fspath(source)
    if isinstance(source, str):
        if _looks_like_yaml(source):
            label = name or "<string>"
            return Scenario(_core._load_string(source, label, base_dir), source, label, base_dir)
        native = _core._load_file(source)
        with open(source, encoding="utf-8") as f:
            text = f.read()
        return Scenario(native, text, source, os.path.dirname(source) or ".")
    raise TypeError(f"load(): expected a path, YAML text, a dict or a Scenario, not "
                    f"{type(source).__name__}")


def _looks_like_yaml(text: str) -> bool:
    return "\n" in text or (":" in text and not os.path.exists(text))


def native(scenario: Scenario) -> "_core.Scenario":
    """The validated C++ scenario a run takes."""
    return scenario._native


__all__: List[str] = ["Scenario", "load_scenario", "native"]
