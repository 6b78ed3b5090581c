# CIFAR-10 from the python-pickle batches, without torchvision.
import hashlib  # noqa: F811 (the slider cell may have imported it already)
import pickle
import shutil
import tarfile
import urllib.error
import urllib.request
from pathlib import Path

import numpy as np  # noqa: F811 (the chapter may have imported it already)
import torch

CIFAR_URL = "https://www.cs.toronto.edu/~kriz/cifar-10-python.tar.gz"
CIFAR_MD5 = "c58f30108f718f92721af3b95e74349a"
CIFAR_FOLDER = "cifar-10-batches-py"


def md5sum(path):
    digest = hashlib.md5()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def download_cifar10(root):
    """Download the archive into `root` (unless a good copy is there), check its MD5,
    and unpack it."""
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    archive = root / CIFAR_URL.rsplit("/", 1)[1]
    if not archive.exists() or md5sum(archive) != CIFAR_MD5:
        part = archive.with_name(archive.name + ".part")
        try:
            with (
                urllib.request.urlopen(CIFAR_URL, timeout=60) as response,
                open(part, "wb") as f,
            ):
                shutil.copyfileobj(response, f)
        except (urllib.error.URLError, OSError) as e:
            part.unlink(missing_ok=True)
            raise SystemExit(
                f"CIFAR-10 is not in {root.resolve()} and could not be downloaded "
                f"({e}): download {CIFAR_URL} by hand, put it in that folder and run "
                "this cell again."
            ) from None
        part.replace(archive)
    if md5sum(archive) != CIFAR_MD5:
        archive.unlink()
        raise SystemExit(
            f"The CIFAR-10 archive failed its MD5 check (expected {CIFAR_MD5}), so it "
            "was deleted: run this cell again to download it afresh."
        )
    with tarfile.open(archive, "r:gz") as tar:
        if hasattr(tarfile, "data_filter"):
            tar.extractall(root, filter="data")  # refuses paths outside root
        else:
            tar.extractall(root)


def read_batch(path):
    """One pickle batch -> images (N, 3, 32, 32) uint8 and labels (N,) int64."""
    with open(path, "rb") as f:
        batch = pickle.load(f, encoding="bytes")
    images = np.asarray(batch[b"data"], dtype=np.uint8).reshape(-1, 3, 32, 32)
    labels = np.asarray(batch[b"labels"], dtype=np.int64)
    return torch.from_numpy(images), torch.from_numpy(labels)


def load_cifar10(root):
    """((x_train, y_train), (x_test, y_test)) as uint8 images and int64 labels;
    downloads when missing."""
    folder = Path(root) / CIFAR_FOLDER
    names = [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"]
    if not all((folder / name).exists() for name in names):
        download_cifar10(root)
    parts = [read_batch(folder / name) for name in names]
    x_train = torch.cat([x for x, _ in parts[:5]])
    y_train = torch.cat([y for _, y in parts[:5]])
    return (x_train, y_train), parts[5]
