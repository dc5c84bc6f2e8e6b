"""experiment_1.network.allocator: the glibc setting takes effect (a freed 64 MiB buffer is reused without
page faults), and it stays off where the user chose otherwise. Each case runs in a fresh process:
the setting is per process and cannot be undone."""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
ON_GLIBC = sys.platform.startswith("linux") and platform.libc_ver()[0] == "glibc"

# malloc 64 MiB, touch it, free it; malloc it again and count the minor page faults of touching it again
PROBE = """
import ctypes, json, resource
from experiment_1.network.allocator import tune_allocator
record = tune_allocator()
libc = ctypes.CDLL(None)
libc.malloc.restype = ctypes.c_void_p
libc.malloc.argtypes = [ctypes.c_size_t]
libc.free.argtypes = [ctypes.c_void_p]
size = 64 * 2**20
first = libc.malloc(size); ctypes.memset(first, 1, size); libc.free(first)
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
second = libc.malloc(size); ctypes.memset(second, 1, size)
faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before
libc.free(second)
print(json.dumps({"record": record, "faults": faults, "pages": size // resource.getpagesize()}))
"""


def probe(**environment: str) -> dict:
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("GLIBC_TUNABLES", "MOE_MALLOC_TUNING", "LD_PRELOAD")
    }
    result = subprocess.run(
        [sys.executable, "-c", PROBE],
        cwd=REPO,
        env={**env, **environment},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return json.loads(result.stdout)


@pytest.mark.skipif(not ON_GLIBC, reason="mallopt is glibc's")
def test_tuned_allocator_reuses_a_freed_large_buffer_without_page_faults() -> None:
    tuned = probe()
    assert tuned["record"]["tuning"] == "mallopt" and tuned["record"]["mmap_threshold"] == 2**31 - 1
    untuned = probe(MOE_MALLOC_TUNING="off")
    assert untuned["record"]["tuning"] == "none (MOE_MALLOC_TUNING=off)"
    # untuned, glibc maps the buffer afresh (> its 32 MiB dynamic ceiling): every page faults again
    assert untuned["faults"] > untuned["pages"] // 2
    assert tuned["faults"] < tuned["pages"] // 20


@pytest.mark.skipif(not ON_GLIBC, reason="mallopt is glibc's")
def test_the_users_own_allocator_choice_is_left_alone() -> None:
    record = probe(GLIBC_TUNABLES="glibc.malloc.trim_threshold=1048576")["record"]
    assert record["tuning"] == "none (the user's GLIBC_TUNABLES: glibc.malloc.trim_threshold=1048576)"
    assert "mmap_threshold" not in record


@pytest.mark.skipif(not ON_GLIBC, reason="mallopt is glibc's")
def test_a_preload_of_a_missing_library_is_not_taken_for_a_loaded_allocator() -> None:
    # the loader skips a missing LD_PRELOAD library (with a warning) and the process runs on glibc's malloc: tuned
    record = probe(LD_PRELOAD="/nonexistent/libtcmalloc.so.4")["record"]
    assert record["allocator"].startswith("glibc ") and record["tuning"] == "mallopt"


def test_the_loaded_allocator_is_read_from_the_process_maps(tmp_path: Path) -> None:
    from experiment_1.network.allocator import loaded_allocators

    maps = tmp_path / "maps"
    maps.write_text(
        "7f00-7f01 r-xp 00000000 08:01 1 /usr/lib/x86_64-linux-gnu/libc.so.6\n"
        "7f02-7f03 r-xp 00000000 08:01 2 /usr/lib/x86_64-linux-gnu/libjemalloc.so.2\n"
        "7f04-7f05 rw-p 00000000 00:00 0 [heap]\n"
    )
    assert loaded_allocators(str(maps)) == ["jemalloc"]
    maps.write_text("7f00-7f01 r-xp 00000000 08:01 1 /usr/lib/x86_64-linux-gnu/libc.so.6\n")
    assert loaded_allocators(str(maps)) == []
    assert loaded_allocators(str(tmp_path / "missing")) == []


# the README's library block on a small network, no step script: nothing but the engine called can tune the allocator
LIBRARY = """
import json, sys, torch
from experiment_1.network import MaskFamily, build_gated_stack, evaluate_all_masks
from experiment_1.network.allocator import allocator_record
from experiment_1.network.engines import evaluate_mask_family, evaluate_masks_naive
model = build_gated_stack("experiment_1.examples.cifar_resnet20:build_model", "random", seed=0)
images = torch.randn(1, 3, 32, 32)
before = allocator_record()
engine = sys.argv[1]
if engine == "tree":
    evaluate_all_masks(model, images, mask_chunk=64)
elif engine == "family":
    evaluate_mask_family(model, images, MaskFamily(1, "on"))
else:
    evaluate_masks_naive(model, images, [0, 5])
print(json.dumps({"before": before, "after": allocator_record()}))
"""


@pytest.mark.skipif(not ON_GLIBC, reason="mallopt is glibc's")
@pytest.mark.parametrize("engine", ["tree", "family", "naive"])
def test_the_library_path_tunes_the_allocator_on_the_first_engine_call(engine: str) -> None:
    env = {key: value for key, value in os.environ.items() if key not in ("GLIBC_TUNABLES", "MOE_MALLOC_TUNING")}
    run = subprocess.run(
        [sys.executable, "-c", LIBRARY, engine], cwd=REPO, env=env, capture_output=True, text=True, timeout=120
    )
    assert run.returncode == 0, run.stderr
    record = json.loads(run.stdout.strip().splitlines()[-1])
    assert record["before"] is None  # building the model and importing the face leave it alone
    assert record["after"]["tuning"] == "mallopt" and record["after"]["mmap_threshold"] == 2**31 - 1
