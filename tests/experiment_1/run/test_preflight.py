"""experiment_1.run.preflight: the refusals before a run come in one call, cheap first — the L limit of an
exhaustive pass before the memory check (so --confirm-long-run is offered first), the memory check before
the time limit — each once, and the configuration's masks_per_image reaches the cost estimate."""

from __future__ import annotations

import argparse
from dataclasses import replace
from types import SimpleNamespace

import pytest
import torch

from experiment_1.errors import PipelineError
from experiment_1.run import preflight as run_preflight
from experiment_1.run.preflight import preflight
from experiment_1.run.run_config import RunConfig, add_flags, from_flags

CPU = torch.device("cpu")


class NoImages(list):
    samples: list = []


def config(*argv: str) -> RunConfig:
    parser = argparse.ArgumentParser()
    add_flags(parser, RunConfig, {"output_dir": "out"})
    return from_flags(RunConfig, parser.parse_args(list(argv)))


def stack(blocks: int, classes: int = 1000) -> SimpleNamespace:
    return SimpleNamespace(num_classes=classes, num_blocks=blocks, preprocess=SimpleNamespace(crop=64))


def fake_estimate(blocks: int, seconds: float, seen: list | None = None):
    def estimate(*arguments, **keywords):
        if seen is not None:
            seen.append(arguments)
        return run_preflight.CostEstimate(1.0, 1.0, 1, 1, seconds, 1, blocks, "tree", 2**blocks)

    return estimate


def test_the_block_limit_comes_before_the_memory_check_and_confirming_reaches_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(run_preflight, "estimate", fake_estimate(21, 1.0))
    monkeypatch.setattr(run_preflight, "device_memory", lambda device: 1)  # no logits fit
    with pytest.raises(PipelineError, match=r"^L = 21 gated blocks.*pass --confirm-long-run"):
        preflight(stack(21), NoImages(), config(), CPU)
    with pytest.raises(PipelineError, match=r"^L = 21 blocks: one image's all-mask logits .* cannot hold them"):
        preflight(stack(21), NoImages(), config("--confirm-long-run"), CPU)


def test_a_27_block_network_is_refused_once_naming_confirm_long_run_not_the_batch_size(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # the newcomer's 27-block, 10-class network at the default --batch-size 8: 40 GiB of logits on a 23.5 GiB machine
    monkeypatch.setattr(run_preflight, "estimate", fake_estimate(27, 3443.8 * 3600))
    monkeypatch.setattr(run_preflight, "device_memory", lambda device: int(23.5 * 2**30))
    with pytest.raises(PipelineError) as refused:
        preflight(stack(27, classes=10), NoImages(), config(), CPU)
    line = str(refused.value)
    assert line.startswith("L = 27 gated blocks") and "pass --confirm-long-run" in line and "--batch-size" not in line
    assert line.count("about 3443.8 h per pass") == 1 and capsys.readouterr().out == ""  # the estimate said once
    with pytest.raises(PipelineError, match=r"^--batch-size 8: .* use --batch-size 2 or less$"):  # then memory
        preflight(stack(27, classes=10), NoImages(), config("--confirm-long-run"), CPU)
    assert capsys.readouterr().out == ""


def test_an_accepted_run_prints_its_estimate_once(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from experiment_1.run import preflight as module

    monkeypatch.setattr(run_preflight, "estimate", fake_estimate(4, 1.0))
    monkeypatch.setattr(run_preflight, "device_memory", lambda device: 2**40)
    monkeypatch.setattr(module, "check_set_function", lambda model: None)
    monkeypatch.setattr(module, "check_evaluation_parity", lambda model, dtype: None)
    preflight(stack(4), NoImages(), config(), CPU)
    assert capsys.readouterr().out.count("cost estimate: ") == 1


def test_the_memory_check_comes_before_the_time_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(run_preflight, "estimate", fake_estimate(8, 100 * 3600.0))
    monkeypatch.setattr(run_preflight, "device_memory", lambda device: 1)
    with pytest.raises(PipelineError, match=r"^L = 8 blocks: one image's all-mask logits"):
        preflight(stack(8), NoImages(), config(), CPU)
    monkeypatch.setattr(run_preflight, "device_memory", lambda device: 2**40)
    with pytest.raises(PipelineError, match=r"^this pass is estimated at 100\.0 h"):
        preflight(stack(8), NoImages(), config(), CPU)


def test_masks_per_image_of_the_config_reaches_the_estimate(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list = []
    monkeypatch.setattr(run_preflight, "estimate", fake_estimate(8, 100 * 3600.0, seen))
    monkeypatch.setattr(run_preflight, "device_memory", lambda device: 1)
    with pytest.raises(PipelineError):
        preflight(stack(8), NoImages(), replace(config(), masks_per_image=1), CPU)
    assert seen[-1][-1] == 1


def test_a_mask_family_reaches_the_estimate_and_sizes_the_memory_check(monkeypatch: pytest.MonkeyPatch) -> None:
    from experiment_1.network.mask_family import MaskFamily

    seen: list = []

    def estimate(*arguments, **keywords):
        seen.append(keywords)
        return run_preflight.CostEstimate(1.0, 1.0, 1, 1, 1.0, 1, 50, "tree", keywords["family"].size(50))

    monkeypatch.setattr(run_preflight, "estimate", estimate)
    monkeypatch.setattr(
        run_preflight, "device_memory", lambda device: 2 * 20876 * 1000 * 4
    )  # two images' family logits, no more
    with pytest.raises(PipelineError, match=r"^--batch-size 8: one batch's all-mask logits"):
        preflight(stack(50), NoImages(), replace(config(), mask_family=MaskFamily(3)), CPU)
    assert seen[-1]["family"] == MaskFamily(
        3
    )  # no L-limit refusal at L = 50: the family's 20 876 masks were sized instead


def test_the_too_deep_refusal_offers_the_low_orders_step_and_its_flags_exist(monkeypatch: pytest.MonkeyPatch) -> None:
    """The refusal names experiment_2.step_8_low_orders (what stays exact at any depth) with flags that step has."""
    monkeypatch.setattr(run_preflight, "estimate", fake_estimate(27, 3443.8 * 3600))
    with pytest.raises(PipelineError) as refused:
        preflight(stack(27), NoImages(), config(), CPU)
    line = str(refused.value)
    with pytest.raises(PipelineError) as refused_by_depth:
        run_preflight.check_depth(27, confirmed=False)
    for refusal in (line, str(refused_by_depth.value)):
        assert (
            "pass --confirm-long-run to run it anyway, or, at any depth, run python -m experiment_2.step_8_low_orders ("
            in refusal
        )
        assert "\n" not in refusal
    from experiment_2.step_8_low_orders import COMMAND

    assert "--order" in line and "--dry-run" in line
    parsed = COMMAND.parser().parse_args(["--order", "2", "--dry-run"])  # flags that step has
    assert parsed.order == 2 and parsed.dry_run is True
