import os
import random
import subprocess
import sys

import numpy as np
import pytest
import torch

from graphdata.device import make_generator, resolve_device, seed_everything
from graphdata.errors import GraphDataError, UnknownLabelError, closest_labels


def test_resolve_device_auto_matches_cuda_availability():
    expected = "cuda" if torch.cuda.is_available() else "cpu"
    assert resolve_device("auto").type == expected
    assert resolve_device(torch.device("cpu")) == torch.device("cpu")


def test_resolve_device_rejects_garbage_and_missing_cuda():
    with pytest.raises(GraphDataError, match="device: expected 'auto'"):
        resolve_device("gpu-please")
    if not torch.cuda.is_available():
        with pytest.raises(GraphDataError, match="CUDA is not available.*--device cpu"):
            resolve_device("cuda")


def test_seed_everything_reproduces_all_three_generators():
    seed_everything(7)
    first = (random.random(), np.random.rand(), torch.rand(1).item())
    seed_everything(7)
    assert (random.random(), np.random.rand(), torch.rand(1).item()) == first
    with pytest.raises(GraphDataError, match="non-negative int"):
        seed_everything(-1)


def test_make_generator_is_independent_of_global_state():
    a = torch.rand(5, generator=make_generator(3))
    torch.manual_seed(123)
    torch.rand(10)
    b = torch.rand(5, generator=make_generator(3))
    assert torch.equal(a, b)
    assert not torch.equal(a, torch.rand(5, generator=make_generator(4)))


def test_unknown_label_error_lists_closest_labels():
    known = ["grandparent", "parent", "spouse"]
    err = UnknownLabelError("relation", "grandparnt", known, "relation")
    assert isinstance(err, ValueError)
    assert err.suggestions[0] == "grandparent"
    assert str(err).startswith("relation: unknown relation label 'grandparnt'")
    assert closest_labels("zzz", ["parent"]) == []


@pytest.mark.parametrize("seed", [2**64, -1, 1.5, True])
def test_seeds_outside_64_bits_or_not_ints_are_refused_by_name(seed):
    # 2**64 ended in a bare "Overflow when unpacking long long"; make_generator took -1, 1.5
    # (as 1) and True silently.
    with pytest.raises(GraphDataError, match="seed: expected a non-negative int at most"):
        make_generator(seed)
    with pytest.raises(GraphDataError, match="seed: expected a non-negative int at most"):
        seed_everything(seed)


def test_make_generator_takes_numpy_ints_and_the_largest_seed(monkeypatch):
    a = torch.rand(2, generator=make_generator(np.int64(3)))
    assert torch.equal(a, torch.rand(2, generator=make_generator(3)))
    make_generator(2**64 - 1)  # torch's largest seed
    monkeypatch.setenv("PYTHONHASHSEED", "0")  # restored after the test
    seed_everything(2**64 - 1)
    # A child Python accepts PYTHONHASHSEED in [0, 2**32 - 1] only: a larger one killed every
    # later subprocess ("Fatal Python error: config_init_hash_seed").
    assert os.environ["PYTHONHASHSEED"] == str((2**64 - 1) % 2**32)
    child = subprocess.run([sys.executable, "-c", "print(1)"], capture_output=True, text=True)
    assert child.returncode == 0 and child.stdout == "1\n"


@pytest.mark.skipif(torch.backends.mps.is_available(), reason="needs a machine without MPS")
def test_resolve_device_refuses_mps_where_there_is_none():
    with pytest.raises(GraphDataError, match="device: 'mps' was requested but MPS is not"):
        resolve_device("mps")
