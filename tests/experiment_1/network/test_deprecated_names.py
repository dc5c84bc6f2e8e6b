"""The old names keep working for a release, each with a DeprecationWarning that names its removal."""

from __future__ import annotations

import importlib
import sys

import pytest

import experiment_1.network as network
import experiment_1.network.registry as registry


@pytest.mark.parametrize(
    ("alias", "module"), [("experiment_1.gating", network), ("experiment_1.architectures", registry)]
)
def test_an_old_module_path_warns_and_is_the_same_module(alias: str, module: object) -> None:
    sys.modules.pop(alias, None)
    with pytest.warns(
        DeprecationWarning, match=rf"{alias} is deprecated and removed in 0\.2\.0: import from experiment_1\.network"
    ):
        imported = importlib.import_module(alias)
    assert imported is module


def test_build_gated_resnet_warns_and_builds_what_build_gated_stack_builds(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    monkeypatch.setattr(registry, "build_gated_stack", lambda *args, **kwargs: calls.append((args, kwargs)) or "stack")
    with pytest.warns(DeprecationWarning, match="build_gated_resnet is deprecated and removed in 0.2.0"):
        assert registry.build_gated_resnet("resnet18", "random", seed=3) == "stack"
    assert calls == [(("resnet18", "random"), {"seed": 3})]
