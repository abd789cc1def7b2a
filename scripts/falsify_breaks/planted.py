"""Falsify breaks: issue 35, item 1. Code or mapped data planted where others can write is never
loaded (eoc/trustfile.py's rule: the owner, the modes, the sticky-bit exception kept narrow),
the C kernels checked before they load and built only into a private folder, the layout files
under the user's keyed MAC with each array's digest checked, and the key file private. Each runs
the test that catches it (``FOCUS``); the chown cases need root."""

_TRUST = "eoc/files/trust.py"
_CBUILD = "native/eoc_native/quant/cbuild.py"
_LAYOUT = "native/eoc_native/llm/layout_cache.py"
_T_TRUST = "tests/test_trustfile.py"
_T_PLANTED = "tests/native/test_planted_files.py"
_T_LAYOUT = "tests/native/test_layout_cache.py"

BREAKS: list[tuple[str, str, str, str]] = [
    (
        "a file or folder of any owner is trusted",
        _TRUST,
        "    return uid in (os.geteuid(), 0)",
        "    return True",
    ),
    (
        "a file others can write is trusted",
        _TRUST,
        """            f"{what} {shown} can be read or written by others (mode {mode:o}, not 600)", fix
        )
    if mode & 0o022:""",
        """            f"{what} {shown} can be read or written by others (mode {mode:o}, not 600)", fix
        )
    if False:""",
    ),
    (
        "a folder others can write to is trusted on the way without the sticky bit",
        _TRUST,
        "and not (st.st_mode & stat.S_ISVTX and _trusted_owner(below_uid)):",
        "and not (st.st_mode & 0o002 or st.st_mode & stat.S_ISVTX):",
    ),
    (
        "a shared sticky folder is trusted to look names up in",
        _TRUST,
        """        raise NotADirectoryError(errno.ENOTDIR, f"{what} is not a folder", shown)
    mode = stat.S_IMODE(st.st_mode)
    if mode & 0o022:""",
        """        raise NotADirectoryError(errno.ENOTDIR, f"{what} is not a folder", shown)
    mode = stat.S_IMODE(st.st_mode)
    if mode & 0o022 and not mode & stat.S_ISVTX:""",
    ),
    (
        "the C kernels are loaded unchecked",
        _CBUILD,
        "from eoc.files.trust import check_file, check_folder, open_checked, private_folder\n",
        "from eoc.files.trust import check_folder, private_folder\n"
        "check_file = open_checked = lambda path, **_: os.open(path, os.O_RDONLY)  # noqa: E731\n",
    ),
    (
        "the kernels' cache folder is made as the umask says, not private",
        _CBUILD,
        """            private_folder(path.parent, what="the folder of eoc's C kernels")""",
        """            path.parent.mkdir(parents=True, exist_ok=True)""",
    ),
    (
        "a layout index's MAC is not checked",
        _LAYOUT,
        "if key is None or not hmac.compare_digest(tag, self._mac(key, raw)):",
        "if key is None:",
    ),
    (
        "a layout file is mapped unchecked",
        _LAYOUT,
        "            fd = open_checked(self.path, what=WHAT)",
        "            fd = os.open(self.path, os.O_RDONLY)",
    ),
    (
        "a layout array's digest is not checked",
        _LAYOUT,
        "            if not isinstance(digest, str) or not hmac.compare_digest(got, digest):",
        "            if not isinstance(digest, str):",
    ),
    (
        "the key file may be read by others",
        "eoc/store/keys.py",
        """    check_file(path, what="eoc's key file", private=True, fix=_fix(path))""",
        """    check_file(path, what="eoc's key file", private=False, fix=_fix(path))""",
    ),
]

FOCUS: dict[str, list[str]] = {
    "a file or folder of any owner is trusted": [_T_TRUST, _T_PLANTED],
    "a file others can write is trusted": [_T_TRUST],
    "a folder others can write to is trusted on the way without the sticky bit": [_T_TRUST],
    "a shared sticky folder is trusted to look names up in": [_T_TRUST],
    "the C kernels are loaded unchecked": [_T_PLANTED],
    "the kernels' cache folder is made as the umask says, not private": [_T_PLANTED],
    "a layout index's MAC is not checked": [_T_PLANTED],
    "a layout file is mapped unchecked": [_T_PLANTED],
    "a layout array's digest is not checked": [_T_LAYOUT],
    "the key file may be read by others": [_T_TRUST],
}
