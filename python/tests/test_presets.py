"""Presets listed and inspected from Python, the same as `bubblesim list --presets`."""

import pytest

import bubblesim
from conftest import run_cli


def test_presets_listed_and_inspected(cli):
    names = bubblesim.presets()
    assert names["models"] and names["gpus"]
    assert bubblesim.presets("model") == names["models"]
    assert bubblesim.presets("gpus") == names["gpus"]
    listing = run_cli(cli, "list", "--presets").stdout
    for name in names["models"] + names["gpus"]:
        assert name in listing
        assert isinstance(bubblesim.preset("model" if name in names["models"] else "gpu", name),
                          dict)
    gpu = bubblesim.preset("gpu", names["gpus"][0])
    assert gpu  # its values, with their sources
    assert "megatron-core" in names["frameworks"]
    for name in names["frameworks"]:
        assert name in listing
        assert "sources" in bubblesim.preset("framework", name)
    with pytest.raises(KeyError, match="known"):
        bubblesim.preset("model", "no-such-model")
    with pytest.raises(ValueError):
        bubblesim.presets("cpu")

