"""The FULL-mode CIFAR-10 loader, notebooks/shared/cifar10.py, on tiny fake batches (CI cannot download).

`make sync` copies it into the cell tagged `shared:cifar10` of chapters 01 and 04 (tests/test_shared.py checks
that the copies have not drifted); here the source is executed into a namespace.
"""

import hashlib
import io
import pickle
import tarfile
import urllib.error
import urllib.request

import numpy as np
import pytest

from booktools.settings import SHARED

N_PER_BATCH = 4


@pytest.fixture
def loader():
    namespace = {}
    path = SHARED / "cifar10.py"
    exec(compile(path.read_text(), str(path), "exec"), namespace)
    return namespace


def fake_batch(seed):
    rng = np.random.default_rng(seed)
    return {
        b"batch_label": b"fake",
        b"labels": rng.integers(0, 10, N_PER_BATCH).tolist(),
        b"data": rng.integers(0, 256, (N_PER_BATCH, 3072), dtype=np.uint8),
        b"filenames": [b"x.png"] * N_PER_BATCH,
    }


def write_batches(folder):
    folder.mkdir(parents=True)
    batches = {}
    for i, name in enumerate([f"data_batch_{k}" for k in range(1, 6)] + ["test_batch"]):
        batches[name] = fake_batch(i)
        with open(folder / name, "wb") as f:
            pickle.dump(batches[name], f)
    return batches


def test_reads_pickle_batches(loader, tmp_path):
    batches = write_batches(tmp_path / loader["CIFAR_FOLDER"])
    (x_train, y_train), (x_test, y_test) = loader["load_cifar10"](tmp_path)
    assert tuple(x_train.shape) == (5 * N_PER_BATCH, 3, 32, 32) and tuple(
        x_test.shape
    ) == (N_PER_BATCH, 3, 32, 32)
    assert str(x_train.dtype) == "torch.uint8" and str(y_train.dtype) == "torch.int64"
    # CIFAR stores each image as 1024 red, then 1024 green, then 1024 blue values, row by row.
    first = batches["data_batch_1"][b"data"][0]
    assert np.array_equal(x_train[0].numpy(), first.reshape(3, 32, 32))
    assert (
        x_train[0, 1, 0, 0].item() == first[1024]
        and x_train[0, 0, 0, 1].item() == first[1]
    )
    assert y_train.tolist() == sum(
        (batches[f"data_batch_{k}"][b"labels"] for k in range(1, 6)), []
    )
    assert y_test.tolist() == batches["test_batch"][b"labels"]


def make_archive(tmp_path):
    src = tmp_path / "src"
    write_batches(src / "cifar-10-batches-py")
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        tar.add(src / "cifar-10-batches-py", arcname="cifar-10-batches-py")
    return buf.getvalue()


class FakeResponse(io.BytesIO):
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def test_downloads_checks_and_unpacks(loader, tmp_path, monkeypatch):
    data = make_archive(tmp_path)
    loader["CIFAR_MD5"] = hashlib.md5(data).hexdigest()
    urls = []
    monkeypatch.setattr(
        urllib.request,
        "urlopen",
        lambda url, timeout=None: urls.append(url) or FakeResponse(data),
    )
    (x_train, _), (x_test, _) = loader["load_cifar10"](tmp_path / "data")
    assert urls == [loader["CIFAR_URL"]]
    assert len(x_train) == 5 * N_PER_BATCH and len(x_test) == N_PER_BATCH
    # a second call reads the unpacked files and downloads nothing
    loader["load_cifar10"](tmp_path / "data")
    assert len(urls) == 1


def test_bad_checksum_is_a_sentence(loader, tmp_path, monkeypatch):
    monkeypatch.setattr(
        urllib.request,
        "urlopen",
        lambda url, timeout=None: FakeResponse(make_archive(tmp_path)),
    )
    with pytest.raises(SystemExit, match="MD5"):
        loader["load_cifar10"](tmp_path / "data")
    assert not (tmp_path / "data" / "cifar-10-python.tar.gz").exists()


def test_no_network_is_a_sentence(loader, tmp_path, monkeypatch):
    def offline(url, timeout=None):
        raise urllib.error.URLError("no network")

    monkeypatch.setattr(urllib.request, "urlopen", offline)
    with pytest.raises(SystemExit) as excinfo:
        loader["load_cifar10"](tmp_path / "data")
    message = str(excinfo.value)
    assert (
        "could not be downloaded" in message
        and loader["CIFAR_URL"] in message
        and "\n" not in message
    )
    assert not list((tmp_path / "data").glob("*.part"))
