"""Experiment 4 steps end to end on a random-init ResNet-18 at 64 px (and the sampler's --min-per-class)."""
from __future__ import annotations

import importlib
from pathlib import Path

import numpy as np
import pytest
import torch

import experiment_1.pipeline as pipeline
from experiment_1.core import evaluate_all_masks
from experiment_1.data import SampleDataset
from experiment_1.errors import PipelineError
from experiment_1.io_utils import read_json
from experiment_1.mobius import mobius_transform
from experiment_1.sample_list import load_sample_list
from experiment_1.step_2_sample import main as sample_main
from experiment_4 import step_1_signatures
from conftest import jpeg_bytes, write_shard

STEPS = ["experiment_4.step_1_signatures"]
RANKINGS = ("vector", "scalar", "scalar_true")


@pytest.mark.parametrize("module", STEPS)
def test_every_step_has_help(module: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        importlib.import_module(module).main(["--help"])
    assert exit_info.value.code == 0
    assert "Question:" in capsys.readouterr().out


def test_min_per_class_keeps_only_large_classes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data_dir = tmp_path / "data"
    write_shard(data_dir / "validation-00000-of-00001.parquet", [jpeg_bytes(i) for i in range(7)], [0, 0, 0, 1, 1, 2, 1])
    output = tmp_path / "samples.json"
    flags = ["--data-dir", str(data_dir), "--pattern", "validation-*.parquet", "--mode", "per-class", "--per-class", "2", "--output", str(output)]
    sample_main(flags + ["--min-per-class", "3"])
    document = read_json(output)
    assert sorted(sample["label"] for sample in document["samples"]) == [0, 0, 1, 1]
    assert document["min_per_class"] == 3 and document["num_classes"] == 2
    assert "kept the 2 of 3 classes with at least 3 images" in capsys.readouterr().out
    sample_main(flags)  # without the flag every class stays, and the file does not mention it
    document = read_json(output)
    assert sorted(sample["label"] for sample in document["samples"]) == [0, 0, 1, 1, 2] and "min_per_class" not in document
    with pytest.raises(PipelineError, match="no class has that many"):
        sample_main(flags + ["--min-per-class", "4"])
    with pytest.raises(PipelineError, match="--min-per-class"):
        sample_main(["--data-dir", str(data_dir), "--pattern", "validation-*.parquet", "--mode", "uniform", "--min-per-class", "2", "--output", str(output)])


def per_class_list(data_dir: Path, path: Path) -> Path:
    """Two images of each of the three labels of ``tiny_shards``."""
    sample_main(["--data-dir", str(data_dir), "--pattern", "validation-*.parquet", "--mode", "per-class", "--per-class", "2", "--seed", "0", "--output", str(path)])
    return path


def step_1_flags(data_dir: Path, sample_index: Path, output_dir: Path, *extra: str) -> list[str]:
    return ["--sample-index", str(sample_index), "--data-dir", str(data_dir), "--weights", "random", "--batch-size", "2",
            "--num-workers", "0", "--device", "cpu", "--seed", "0", "--output-dir", str(output_dir), *extra]


def load_signatures(path: Path) -> dict:
    return torch.load(path, weights_only=True)


def test_signatures_step_rankings_and_resume(tiny_shards: Path, small_input: int, tmp_path: Path) -> None:
    sample_index = per_class_list(tiny_shards, tmp_path / "samples.json")
    output_dir = tmp_path / "results"
    step_1_signatures.main(step_1_flags(tiny_shards, sample_index, output_dir))
    document = load_signatures(output_dir / "signatures.pt")
    assert document["store_k"] == document["num_subsets"] == 256 and document["config"]["store_k"] == 256
    assert document["ranked_vector"].dtype == torch.int16 and document["magnitude_vector"].dtype == torch.float32
    samples = load_sample_list(sample_index)
    assert document["samples"] == [{"source": s.source, "row": s.row, "label": s.label} for s in samples]

    # Oracle: the same model, the same batches, coefficients by the butterfly; magnitudes per ranking from numpy.
    model = pipeline.build_gated_resnet("resnet18", "random", device="cpu", seed=0)
    dataset = SampleDataset(tiny_shards, samples, model.preprocess)
    batches = [torch.stack([dataset[index]["image"] for index in range(start, start + 2)]) for start in range(0, 6, 2)]
    logits = torch.cat([evaluate_all_masks(model, images) for images in batches])
    coefficients = mobius_transform(logits, dim=1, dtype=torch.float64).numpy()
    full = logits[:, -1].numpy()
    labels = np.array([s.label for s in samples])
    rows = np.arange(6)
    expected = {
        "vector": np.sqrt((coefficients**2).sum(axis=2)),
        "scalar": np.abs(coefficients[rows, :, full.argmax(1)]),
        "scalar_true": np.abs(coefficients[rows, :, labels]),
    }
    np.testing.assert_array_equal(document["full_logits"].numpy(), full)
    np.testing.assert_array_equal(document["predicted"].numpy(), full.argmax(1))
    np.testing.assert_array_equal(document["label"].numpy(), labels)
    for ranking in RANKINGS:
        ranked = document[f"ranked_{ranking}"].long().numpy()
        magnitude = document[f"magnitude_{ranking}"].numpy()
        assert (np.sort(ranked, axis=1) == np.arange(256)).all()  # every subset exactly once
        # Stored magnitudes are the oracle's at the stored subsets (float32 storage: rtol 1e-6) and never increase,
        # i.e. the order is by decreasing magnitude without depending on ulp-level near-ties.
        np.testing.assert_allclose(magnitude, np.take_along_axis(expected[ranking], ranked, 1), rtol=1e-6)
        assert (np.diff(np.take_along_axis(expected[ranking], ranked, 1), axis=1) <= 0).all()

    # Resume: drop one finished batch and the output; the rerun recomputes only that batch and writes the same tensors.
    (output_dir / "partial" / step_1_signatures.STAGE / "batch_000001.pt").unlink()
    (output_dir / "signatures.pt").unlink()
    step_1_signatures.main(step_1_flags(tiny_shards, sample_index, output_dir))
    resumed = load_signatures(output_dir / "signatures.pt")
    assert read_json(output_dir / "timing.json")["images_evaluated"] == 2
    for name, value in document.items():
        if torch.is_tensor(value):
            assert torch.equal(resumed[name], value), name

    # A smaller --store-K is a different run: refused in the same folder, fine in another one.
    with pytest.raises(PipelineError, match="different run"):
        step_1_signatures.main(step_1_flags(tiny_shards, sample_index, output_dir, "--store-K", "16"))
    step_1_signatures.main(step_1_flags(tiny_shards, sample_index, tmp_path / "small", "--store-K", "16"))
    small = load_signatures(tmp_path / "small" / "signatures.pt")
    assert torch.equal(small["ranked_scalar"], document["ranked_scalar"][:, :16])


def test_signatures_step_refuses_bad_input(tiny_shards: Path, tmp_path: Path) -> None:
    unlabelled = tmp_path / "test.json"
    sample_main(["--data-dir", str(tiny_shards), "--pattern", "test-*.parquet", "--num-images", "2", "--output", str(unlabelled)])
    with pytest.raises(PipelineError, match="no label"):
        step_1_signatures.main(step_1_flags(tiny_shards, unlabelled, tmp_path / "out"))
    labelled = per_class_list(tiny_shards, tmp_path / "samples.json")
    with pytest.raises(PipelineError, match="--store-K 257"):
        step_1_signatures.main(step_1_flags(tiny_shards, labelled, tmp_path / "out", "--store-K", "257"))
