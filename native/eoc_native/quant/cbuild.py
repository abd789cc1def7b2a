"""Building the C kernels (``ckernels.c``, and ``encoder.c`` into the same library) with the
machine's C compiler, once, into eoc's cache.

The library is compiled for this very CPU (``-march=native``) with OpenMP where the compiler has
it: at install (``make`` runs ``python -m eoc_native.quant.cbuild --install``, which keeps it in
``_built/`` beside this module), or else on the first run, into
``$EOC_CACHE_DIR/kernels/eockernels-<key>.so`` (default ``~/.cache/eoc``). The key covers the
sources, the compiler (its file's path, size and time), the flags and the CPU's features, so a
changed source, compiler or machine builds again; a build takes about a second, against about five for
numba's first compile of the same kernels. The file is written under a temporary name and
renamed, so a cut-off build is never loaded.

The library is code that runs as the user: it is loaded only from a file owned by the user or
root, writable by no one else, in folders no one else can write to (:mod:`eoc.files.trust`; issue
35: a library planted in a shared ``$EOC_CACHE_DIR`` ran its constructor as the user of
``eoc query``). Anything else raises :class:`~eoc.errors.UntrustedFile` naming the path: never a
silent fall-back to numba, which would hide the planted file. The ``kernels`` folder is made with
mode 700 (with the cache folder, when missing) and checked before a build writes into it (a
shared sticky folder such as ``/tmp`` may hold it: others cannot rename or delete what is the
user's there), the built file is checked after its rename, and :func:`load` opens the file,
checks what it opened (``fstat``) and has the loader read that very descriptor
(``/proc/self/fd/N`` on Linux), so the file cannot be swapped between the check and the load;
elsewhere it checks the path immediately before the load.

Without a C compiler, or where it fails, :func:`build` raises :class:`~eoc.errors.MissingExtra`
with the reason, and eoc runs the numba kernels instead (:func:`eoc_native.quant.load_kernels`).
"""

from __future__ import annotations

import ctypes
import functools
import hashlib
import os
import platform
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

from eoc.errors import MissingExtra, UntrustedFile
from eoc.files.trust import check_file, check_folder, open_checked, private_folder
from eoc_native import cache_dir

SOURCE = Path(__file__).with_name("ckernels.c")
ENCODER = Path(__file__).with_name("encoder.c")
"""The 8-bit sentence encoder (:mod:`eoc_native.quant.encoder`), built into the same library."""
ENV_CC = "CC"
FLAGS = ("-O3", "-march=native", "-ffp-contract=fast", "-fPIC", "-shared")
OPENMP = "-fopenmp"
BUILD_TIMEOUT_S = 120
INSTALLED = Path(__file__).with_name("_built")
"""Where an install builds the library (``python -m eoc_native.quant.cbuild --install``, which
``make`` runs after pip), so that no first run compiles."""


cache_root = cache_dir  # eoc's cache folder (:func:`eoc_native.cache_dir`)


def compiler() -> str | None:
    """The C compiler: ``$CC``, else ``cc``, ``gcc`` or ``clang`` on the path."""
    named = os.environ.get(ENV_CC, "").strip()
    if named:
        return shutil.which(named.split()[0])
    return next((p for c in ("cc", "gcc", "clang") if (p := shutil.which(c))), None)


@functools.lru_cache(maxsize=1)
def _cpu_features() -> str:
    """What ``-march=native`` compiles for: the CPU's model and feature flags, where told."""
    try:
        text = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return platform.processor() or platform.machine()
    wanted = ("model name", "flags", "Features", "CPU part")
    lines = [ln for ln in text.splitlines() if ln.split(":")[0].strip() in wanted]
    return "\n".join(dict.fromkeys(lines))  # each once: every core says the same


def library_name(cc: str) -> str:
    """The library's file name for this source, compiler, flags and CPU."""
    try:  # the compiler's own file: an upgrade changes it (cheaper than running cc --version)
        real = Path(cc).resolve()
        st = real.stat()
        identity = f"{real}|{st.st_size}|{st.st_mtime_ns}"
    except OSError:
        identity = cc
    sources = [f.read_text(encoding="utf-8") for f in (SOURCE, ENCODER)]
    key = "\n".join([*sources, identity, " ".join(FLAGS), _cpu_features()])
    digest = hashlib.sha256(key.encode("utf-8", "surrogateescape")).hexdigest()[:20]
    return f"eockernels-{platform.machine()}-{digest}.so"


def library_path(cc: str) -> Path:
    """Where the library built by ``cc`` for this source and CPU is: built at install time
    beside this module (:data:`INSTALLED`) when it is there, else in eoc's cache."""
    name = library_name(cc)
    installed = INSTALLED / name
    return installed if installed.is_file() else cache_root() / "kernels" / name


WHAT = "eoc's C kernels"


def _fix(path: Path) -> str | None:
    """What to do about an untrusted library: the install's folder is the installer's to fix."""
    if INSTALLED in path.parents or path.parent == INSTALLED:
        return f"remove {INSTALLED} (or reinstall eoc as yourself or root), so no one else owns it"
    return None  # the default: remove it, or set EOC_CACHE_DIR to a folder only you can write to


def check(path: Path) -> None:
    """Raise :class:`~eoc.errors.UntrustedFile` unless the library at ``path`` may be loaded
    (:func:`eoc.files.trust.check_file`)."""
    check_file(path, what=WHAT, fix=_fix(path))


def built() -> Path | None:
    """The library, when it is built already (nothing is compiled).

    Raises:
        UntrustedFile: a file is there, but another user could have written it.
    """
    cc = compiler()
    if cc is None:
        return None
    path = library_path(cc)
    if not path.is_file():
        return None
    check(path)
    return path


def load(path: Path) -> ctypes.CDLL:
    """Load the library at ``path`` after checking it (:func:`eoc.files.trust.open_checked`):
    through the checked descriptor where the system names one (``/proc/self/fd/N``), else by its
    path, checked just before.

    Raises:
        UntrustedFile: another user could have written it, or a folder above it.
    """
    fd = open_checked(path, what=WHAT, fix=_fix(path))
    try:
        via = f"/proc/self/fd/{fd}"
        if os.path.exists(via):
            return ctypes.CDLL(via)
        return ctypes.CDLL(os.path.realpath(path))
    finally:
        os.close(fd)


def build(progress: Callable[[str], None] | None = None, *, into: Path | None = None) -> Path:
    """The library's path, compiled first if it is not built yet (into eoc's cache, or the
    folder ``into``).

    ``progress`` is told before a compile starts (the first run only).

    Raises:
        MissingExtra: no C compiler, or it could not build the kernels (the reason says why).
        UntrustedFile: the library there, or the folder it goes in, could have been written by
            another user (:mod:`eoc.files.trust`).
    """
    cc = compiler()
    if cc is None:
        raise MissingExtra(
            "no C compiler (cc, gcc or clang) for eoc's C kernels: install one "
            "(Debian: apt-get install gcc), or eoc uses numba's kernels"
        )
    path = library_path(cc) if into is None else into / library_name(cc)
    if path.is_file():
        check(path)
        return path
    if progress is not None:
        progress("compiling the matmul kernels: the first run only (eoc keeps them)")
    try:
        if into is None:  # the cache's: made private (700), with the cache folder if missing
            private_folder(path.parent, what="the folder of eoc's C kernels")
        else:  # an install's: readable by every user of the install
            path.parent.mkdir(parents=True, exist_ok=True)
            check_folder(path.parent, what="the folder of eoc's C kernels", fix=_fix(path))
    except OSError as exc:
        raise MissingExtra(f"cannot write eoc's kernel cache {path.parent}: {exc}") from None
    part = path.with_name(f"{path.name}.{os.getpid()}.part")
    errors = ""
    try:
        for extra in ((OPENMP,), ()):  # without OpenMP (Apple's clang): one thread
            cmd = [cc, *FLAGS, *extra, "-o", str(part), str(SOURCE), str(ENCODER), "-lm"]
            try:
                done = subprocess.run(
                    cmd, capture_output=True, text=True, timeout=BUILD_TIMEOUT_S, check=False
                )
            except (OSError, subprocess.SubprocessError) as exc:
                errors = str(exc)
                continue
            if done.returncode == 0 and part.is_file():
                part.replace(path)
                check(path)
                return path
            errors = (done.stderr.strip().splitlines() or ["(no message)"])[-1]
    finally:
        part.unlink(missing_ok=True)
    raise MissingExtra(f"{Path(cc).name} could not build eoc's C kernels: {errors}")


def main(argv: list[str] | None = None) -> int:
    """``python -m eoc_native.quant.cbuild [--install]``: build the kernels now (``--install``:
    beside this module, where every later run finds them), and say where they are."""
    import sys

    args = sys.argv[1:] if argv is None else argv
    if args not in ([], ["--install"]):
        print("usage: python -m eoc_native.quant.cbuild [--install]", file=sys.stderr)
        return 2
    try:
        path = build(into=INSTALLED if args else None)
    except (MissingExtra, UntrustedFile) as exc:
        print(f"eoc's C kernels: not built: {exc.reason}", file=sys.stderr)
        return 1
    print(f"eoc's C kernels: {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())


__all__ = [
    "ENCODER",
    "INSTALLED",
    "SOURCE",
    "WHAT",
    "build",
    "built",
    "cache_root",
    "check",
    "compiler",
    "library_name",
    "library_path",
    "load",
    "main",
]
