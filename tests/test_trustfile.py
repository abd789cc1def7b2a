"""The core's rule for files eoc loads code or mapped data from (eoc/trustfile.py), and the
user's key (eoc/userkey.py): issue 35, item 1.

Files owned by another user need ``chown``: those tests run as root only. In the browser the
checks pass trivially (no other users): the rest is skipped there but for the test saying so.
"""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from eoc.errors import EocError, UntrustedFile
from eoc.files.trust import check_file, check_folder, open_checked, private_folder
from eoc.store import keys as userkey

NOBODY = 65534
posix = pytest.mark.skipif(
    sys.platform == "emscripten" or not hasattr(os, "geteuid"), reason="no other users here"
)
as_root = pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0, reason="chown to another user needs root"
)


@pytest.fixture
def own(tmp_path: Path) -> Path:
    """A folder of ours, private, holding a file of ours (0644)."""
    folder = tmp_path / "own"
    folder.mkdir(mode=0o700)
    f = folder / "lib.so"
    f.write_bytes(b"data")
    f.chmod(0o644)
    return f


def test_untrusted_file_is_an_eoc_error_exiting_1() -> None:
    assert issubclass(UntrustedFile, EocError) and UntrustedFile.exit_code == 1
    assert UntrustedFile.__mro__[1] is EocError


@posix
def test_our_own_file_in_our_own_folders_passes(own: Path) -> None:
    check_file(own, what="a test file")
    check_folder(own.parent, what="a test folder")
    fd = open_checked(own, what="a test file")
    try:
        assert os.read(fd, 10) == b"data"
    finally:
        os.close(fd)


@posix
@pytest.mark.parametrize("mode", [0o664, 0o646, 0o666])
def test_a_file_others_can_write_is_refused(own: Path, mode: int) -> None:
    own.chmod(mode)
    for check in (check_file, open_checked):
        with pytest.raises(UntrustedFile, match=f"{own} can be written by .*mode {mode:o}"):
            check(own, what="a test file")


@posix
def test_a_private_file_may_not_be_readable_by_others(own: Path) -> None:
    with pytest.raises(UntrustedFile, match=r"can be read or written by others \(mode 644"):
        check_file(own, what="a key", private=True)
    own.chmod(0o640)
    with pytest.raises(UntrustedFile, match="mode 640"):
        check_file(own, what="a key", private=True)
    own.chmod(0o600)
    check_file(own, what="a key", private=True)


@posix
def test_a_folder_others_can_write_without_the_sticky_bit_is_refused(own: Path) -> None:
    """Anyone could rename our folder away and put theirs in its place."""
    own.parent.parent.chmod(0o777)
    try:
        with pytest.raises(UntrustedFile, match=r"can be written by others \(mode 777, no sticky"):
            check_file(own, what="a test file")
        with pytest.raises(UntrustedFile, match="mode 777"):
            check_folder(own.parent, what="a test folder")
    finally:
        own.parent.parent.chmod(0o700)


@posix
def test_a_group_writable_folder_on_the_way_is_refused(own: Path) -> None:
    own.parent.chmod(0o770)
    with pytest.raises(UntrustedFile, match="can be written by its group"):
        check_file(own, what="a test file")


@posix
def test_a_sticky_shared_folder_holding_our_own_folder_is_accepted(tmp_path: Path) -> None:
    """Like /tmp (1777): others cannot rename or delete what is ours there; but the shared
    folder itself is never one to look names up in."""
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    mine = private_folder(shared / "kernels", what="a cache folder")
    assert stat.S_IMODE(mine.stat().st_mode) == 0o700
    (mine / "lib.so").write_bytes(b"x")
    check_file(mine / "lib.so", what="a test file")
    (shared / "direct").write_bytes(b"x")  # our own file straight in the sticky folder
    check_file(shared / "direct", what="a test file")
    with pytest.raises(UntrustedFile, match=r"can be written by others \(mode 1777\)"):
        check_folder(shared, what="a cache folder")


@posix
def test_private_folder_makes_missing_folders_private_and_refuses_open_ones(
    tmp_path: Path,
) -> None:
    made = private_folder(tmp_path / "a" / "b" / "c", what="a cache folder")
    for p in (made, made.parent, made.parent.parent):
        assert stat.S_IMODE(p.stat().st_mode) == 0o700
    kept = tmp_path / "kept"
    kept.mkdir(mode=0o755)
    kept.chmod(0o755)
    private_folder(kept, what="a cache folder")  # an existing 755 folder keeps its mode
    assert stat.S_IMODE(kept.stat().st_mode) == 0o755
    kept.chmod(0o777)
    with pytest.raises(UntrustedFile, match=f"a cache folder {kept} can be written by others"):
        private_folder(kept, what="a cache folder")


@posix
def test_what_is_no_file_or_no_folder_is_an_os_error_not_a_refusal(tmp_path: Path) -> None:
    with pytest.raises(IsADirectoryError):
        check_file(tmp_path, what="a test file")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(OSError, match="not a regular file"):
        check_file(fifo, what="a test file")
    with pytest.raises(OSError, match="not a regular file"):
        open_checked(fifo, what="a test file")  # never blocks on the FIFO
    (tmp_path / "f").write_text("x")
    with pytest.raises(NotADirectoryError):
        check_folder(tmp_path / "f", what="a folder")
    with pytest.raises(FileNotFoundError):
        check_file(tmp_path / "missing", what="a test file")


@posix
@as_root
def test_a_file_of_another_user_is_refused_saying_whose_and_what_to_do(own: Path) -> None:
    os.chown(own, NOBODY, NOBODY)
    with pytest.raises(UntrustedFile) as got:
        check_file(own, what="eoc's C kernels")
    assert got.value.reason == (
        f"eoc's C kernels {own} is owned by uid {NOBODY}, not by you (uid 0) or root: eoc loads "
        "compiled code and mapped data only from files no one else can change; remove it or "
        "set EOC_CACHE_DIR to a folder only you can write to"
    )
    with pytest.raises(UntrustedFile, match=f"owned by uid {NOBODY}"):
        os.close(open_checked(own, what="eoc's C kernels"))
    with pytest.raises(UntrustedFile, match="chmod it"):
        check_file(own, what="eoc's C kernels", fix="chmod it")


@posix
@as_root
def test_a_folder_of_another_user_on_the_way_is_refused(own: Path) -> None:
    os.chown(own.parent, NOBODY, NOBODY)
    with pytest.raises(UntrustedFile, match=f"the folder {own.parent} holding .* uid {NOBODY}"):
        check_file(own, what="a test file")
    with pytest.raises(UntrustedFile, match=f"uid {NOBODY}"):
        check_folder(own.parent, what="a test folder")


@posix
@as_root
def test_a_link_to_a_file_of_another_user_is_refused(own: Path, tmp_path: Path) -> None:
    theirs = tmp_path / "theirs.so"
    theirs.write_bytes(b"planted")
    os.chown(theirs, NOBODY, NOBODY)
    link = own.parent / "link.so"
    link.symlink_to(theirs)
    with pytest.raises(UntrustedFile, match=f"{link} \\(a link to {theirs}\\) is owned by uid"):
        check_file(link, what="a test file")
    with pytest.raises(UntrustedFile, match=f"uid {NOBODY}"):
        os.close(open_checked(link, what="a test file"))
    ours = own.parent / "ours.so"  # a link to a file of ours, in our folders, is that file
    ours.symlink_to(own)
    check_file(ours, what="a test file")


@as_root
def test_in_a_sticky_folder_another_users_folder_is_refused(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    theirs = shared / "kernels"
    theirs.mkdir(mode=0o755)
    (theirs / "lib.so").write_bytes(b"planted")
    os.chown(theirs, NOBODY, NOBODY)
    with pytest.raises(UntrustedFile, match=f"{theirs} holding a test file is owned by uid"):
        check_file(theirs / "lib.so", what="a test file")
    with pytest.raises(UntrustedFile, match=f"uid {NOBODY}"):
        private_folder(theirs, what="a cache folder")


def test_in_the_browser_the_checks_pass(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Pyodide: the file system is the page's own, in memory; there are no other users."""
    monkeypatch.setattr(sys, "platform", "emscripten")  # the one sys every module sees
    f = tmp_path / "f"
    f.write_text("x")
    f.chmod(0o666)
    check_file(f, what="a test file", private=True)
    check_folder(tmp_path, what="a test folder")
    os.close(open_checked(f, what="a test file"))


# -- the user's key -------------------------------------------------------------------------


@pytest.fixture
def key_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    path = tmp_path / "config" / "eoc" / "key"
    monkeypatch.setenv(userkey.KEY_ENV, str(path))
    userkey.forget_keys()
    yield path
    userkey.forget_keys()


def test_where_the_key_is() -> None:
    home = Path("~").expanduser()
    assert userkey.key_path({"EOC_KEY_FILE": "/k/key"}) == Path("/k/key")
    assert userkey.key_path({"XDG_CONFIG_HOME": "/x"}) == Path("/x/eoc/key")
    assert userkey.key_path({"XDG_CONFIG_HOME": "relative"}) == home / ".config/eoc/key"
    assert userkey.key_path({}) == home / ".config/eoc/key"


def test_the_key_is_made_private_once_and_kept(key_file: Path) -> None:
    key = userkey.load_key()
    assert len(key) == 32 and key_file.is_file()
    text = key_file.read_text()
    assert text == key.hex() + "\n"
    if sys.platform != "emscripten":
        assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
        assert stat.S_IMODE(key_file.parent.stat().st_mode) == 0o700
    assert userkey.load_key() == key  # read once: the same bytes
    userkey.forget_keys()
    assert userkey.load_key(key_file) == key  # read again from the file: the same key
    other = key_file.parent / "other"
    assert userkey.load_key(other) != key


def test_a_key_made_first_by_another_process_is_read(key_file: Path) -> None:
    """O_EXCL: the process that loses the race reads the winner's key."""
    key_file.parent.mkdir(parents=True, mode=0o700)
    theirs = bytes(range(32))
    fd = os.open(key_file, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    os.write(fd, theirs.hex().encode() + b"\n")
    os.close(fd)
    userkey._create(key_file)  # the loser's create: leaves theirs
    assert userkey.load_key() == theirs


def test_a_missing_key_without_create_is_not_made(key_file: Path) -> None:
    with pytest.raises(FileNotFoundError):
        userkey.load_key(create=False)
    assert not key_file.exists()


@posix
def test_a_key_others_can_read_is_refused(key_file: Path) -> None:
    userkey.load_key()
    userkey.forget_keys()
    key_file.chmod(0o644)
    with pytest.raises(
        UntrustedFile, match=f"key file {key_file} can be read or written by others"
    ):
        userkey.load_key()
    key_file.chmod(0o600)
    key_file.parent.chmod(0o777)
    try:
        with pytest.raises(UntrustedFile, match="mode 777"):
            userkey.load_key()
    finally:
        key_file.parent.chmod(0o700)


@pytest.mark.parametrize(
    "text", [b"", b"not hex at all\n", b"ab" * 31 + b"\n", b"zz" * 32 + b"\n", b"ab" * 200]
)
def test_a_malformed_key_file_is_refused_saying_what_to_do(key_file: Path, text: bytes) -> None:
    key_file.parent.mkdir(parents=True, mode=0o700)
    key_file.write_bytes(text)
    key_file.chmod(0o600)
    with pytest.raises(UntrustedFile, match=f"{key_file} does not hold one key.*remove {key_file}"):
        userkey.load_key()


def test_derived_keys_ids_and_macs() -> None:
    key = bytes(32)
    assert (
        userkey.derive(key, "a") != userkey.derive(key, "b") and len(userkey.derive(key, "a")) == 32
    )
    kid = userkey.key_id(key)
    assert len(kid) == 16 and kid != userkey.key_id(bytes([1]) * 32) and key.hex()[:16] != kid
    m = userkey.mac(key, "layout", b"a", b"bc")
    assert len(m) == 64 and int(m, 16) >= 0
    assert m != userkey.mac(key, "layout", b"ab", b"c")  # the parts are length-prefixed
    assert m != userkey.mac(key, "store", b"a", b"bc")  # each purpose its own key
    assert m != userkey.mac(bytes([1]) * 32, "layout", b"a", b"bc")
    assert m == userkey.mac(key, "layout", b"a", b"bc")
