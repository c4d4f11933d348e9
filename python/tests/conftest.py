"""Shared fixtures: the repository root, the vectors, and the GPU/torch gates."""
import os
import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def have_torch_cuda():
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available() and torch.cuda.get_device_capability()[0] == 9


@pytest.fixture(scope="session")
def repo():
    return REPO


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs torch and a Hopper GPU (skipped otherwise)")


def pytest_collection_modifyitems(config, items):
    if have_torch_cuda():
        return
    skip = pytest.mark.skip(reason="needs torch with a Hopper (sm_90) GPU")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


def tool(name):
    return shutil.which(name) or (f"/usr/local/cuda/bin/{name}"
                                  if os.path.exists(f"/usr/local/cuda/bin/{name}") else None)
