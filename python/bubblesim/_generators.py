"""Schedule generators written in Python.

A generator is a function from a :class:`GeneratorInput` (pipeline shape, parameters, per-stage
costs) to a :class:`bubblesim.Table`. Registered under a name, scenarios use it like a built-in:
``schedules: [my-1f1b]``. Raise :class:`bubblesim.ScheduleConstraintError` for inputs the schedule
cannot serve (the schedule's outcome is then ``infeasible``); any other exception is an error that
names the generator.
"""

from __future__ import annotations

import importlib.util
import inspect
import os
import sys
from typing import Any, Callable, Dict, List, Optional, Sequence

from . import _core


class GeneratorInput:
    """What a Python generator receives.

    Attributes: ``devices`` (p), ``microbatches`` (m), ``params`` (dict of the generator's
    parameters, defaults filled in), ``costs`` (one dict per pipeline stage: forward_s,
    backward_input_s, backward_weight_s, recompute_s, backward_recompute_s, recompute_unit_bytes,
    activation_bytes, weight_grad_bytes, p2p_bytes, static_memory_bytes), ``delay_s`` (fixed
    stage-to-stage delay), ``memory_budget`` (bytes per device, empty when none), ``base_dir``
    (the scenario's folder).
    """

    def __init__(self, devices: int, microbatches: int, params: Dict[str, Any],
                 costs: List[Dict[str, float]], delay_s: float, memory_budget: List[int],
                 base_dir: str):
        self.devices = devices
        self.microbatches = microbatches
        self.params = params
        self.costs = costs
        self.delay_s = delay_s
        self.memory_budget = memory_budget
        self.base_dir = base_dir

    def __repr__(self) -> str:
        return (f"GeneratorInput(devices={self.devices}, microbatches={self.microbatches}, "
                f"params={self.params!r})")


class Param:
    """A generator parameter: settable in scenarios (``{name: my-gen, NAME: VALUE}``).

    ``type`` is ``integer``, ``real``, ``boolean``, ``choice`` or ``text``; ``default`` None (for
    an integer) means "derive it"; ``minimum`` bounds integers and reals; ``choices`` lists the
    values of a choice.
    """

    _TYPES = ("integer", "real", "boolean", "choice", "text")

    def __init__(self, name: str, type: str = "integer", default: Any = None, help: str = "",
                 choices: Sequence[str] = (), minimum: Optional[float] = None):
        if type not in self._TYPES:
            raise ValueError(f"Param {name!r}: type {type!r} is not one of {', '.join(self._TYPES)}")
        if default is None and type != "integer":
            raise ValueError(f"Param {name!r}: a {type} parameter needs a default")
        self.name, self.type, self.default, self.help = name, type, default, help
        self.choices, self.minimum = list(choices), minimum

    def _spec(self) -> tuple:
        return (self.name, self.type, self.default, self.help, self.choices, self.minimum)


def register_generator(name: str, generate: Callable[[GeneratorInput], Any], *,
                       description: str = "", placement: str = "straight", source: str = "",
                       params: Sequence[Param] = (),
                       formula: Optional[Callable[[GeneratorInput], Optional[dict]]] = None,
                       replace: bool = False) -> None:
    """Registers ``generate`` as the schedule generator ``name``.

    ``formula``, if given, returns None or a dict with ``bubble_ratio``,
    ``peak_activation_units`` and ``note`` (the closed forms the report's formula level shows and
    the contract checks). ``replace=True`` replaces a Python generator of that name; built-in
    names are refused.
    """
    if not callable(generate):
        raise TypeError(f"register_generator({name!r}): generate must be callable")
    module = getattr(generate, "__module__", "?")
    qualname = getattr(generate, "__qualname__", repr(generate))
    try:
        where = f"{inspect.getsourcefile(generate)}:{inspect.getsourcelines(generate)[1]}"
    except (TypeError, OSError):
        where = f"{module}.{qualname}"
    _core._register_generator(name, description, placement, source,
                              [p._spec() for p in params], generate,
                              formula if formula is not None else None,
                              f"python: {qualname} at {where}", replace)


def generator(name: str, **options: Any) -> Callable:
    """Decorator form of :func:`register_generator`::

        @bubblesim.generator("my-1f1b", description="...")
        def my_1f1b(inp): ...
    """

    def wrap(fn: Callable) -> Callable:
        register_generator(name, fn, **options)
        return fn

    return wrap


def generators() -> List[str]:
    """Every generator name known to this process: built-ins, then those from Python."""
    return list(_core._generator_names())


def explain(name: str) -> Dict[str, Any]:
    """A generator's description, placement, source, origin and parameters (as
    ``bubblesim explain NAME`` lists them)."""
    return _core._generator_info(name)


class ContractResult:
    """The generator contract's outcome: ``failures`` (one message each, empty when it
    passes), and how many grid inputs were ``accepted`` and ``rejected``."""

    def __init__(self, name: str, failures: List[str], accepted: int, rejected: int):
        self.name, self.failures, self.accepted, self.rejected = name, failures, accepted, rejected

    @property
    def ok(self) -> bool:
        return not self.failures and self.accepted > 0

    def __bool__(self) -> bool:
        return self.ok

    def __repr__(self) -> str:
        return (f"<ContractResult {self.name}: {'pass' if self.ok else 'FAIL'}, "
                f"{self.accepted} accepted, {self.rejected} rejected, "
                f"{len(self.failures)} failures>")


def check_generator(name: str, devices: Sequence[int] = (), microbatches: Sequence[int] = (),
                    chunks: Sequence[int] = ()) -> ContractResult:
    """Runs the generator contract of ``bubblesim check-plugin`` on ``name`` (built-in or from
    Python) over its grid of p, m (and v) values; the grid can be narrowed."""
    failures, accepted, rejected = _core._check_contract(name, list(devices), list(microbatches),
                                                         list(chunks))
    return ContractResult(name, failures, accepted, rejected)


def load_plugin(path: str) -> Any:
    """Imports the Python file ``path`` (its module-level code registers generators, for example
    with the :func:`generator` decorator) and returns the module. A file loaded twice is imported
    once."""
    path = os.path.abspath(path)
    key = "bubblesim_plugin_" + str(abs(hash(path)))
    if key in sys.modules:
        return sys.modules[key]
    spec = importlib.util.spec_from_file_location(key, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"{path}: not a Python file that can be imported")
    module = importlib.util.module_from_spec(spec)
    sys.modules[key] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[key]
        raise
    return module
