"""Falsify breaks: the per-user store ``eoc query`` remembers in (eoc/cli/userstore.py)."""

BREAKS: list[tuple[str, str, str, str]] = [
    (
        "a relative XDG_DATA_HOME is taken",
        "eoc/cli/userstore.py",
        "    if xdg and os.path.isabs(xdg):",
        "    if xdg:",
    ),
    (
        "the per-user store's folder is readable by others",
        "eoc/cli/userstore.py",
        "        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)",
        "        path.parent.mkdir(mode=0o755, parents=True, exist_ok=True)",
    ),
    (
        "--no-store still opens the per-user store",
        "eoc/cli/userstore.py",
        '    if no_store or store == ":memory:":\n        return StoreChoice(None)',
        '    if store == ":memory:":\n        return StoreChoice(None)',
    ),
    (
        "a per-user store that cannot be opened is an error, not memory",
        "eoc/cli/userstore.py",
        "    except StoreUnusable as exc:\n        if not choice.per_user:",
        "    except StoreUnusable as exc:\n        if True:",
    ),
    (
        "a named store that cannot be opened falls back to memory",
        "eoc/cli/userstore.py",
        "        if not choice.per_user:\n            raise\n        note = memory_note(",
        "        if False:\n            raise\n        note = memory_note(",
    ),
    (
        "a damaged per-user store is skipped for memory",
        "eoc/cli/userstore.py",
        "    except StoreUnusable as exc:\n        if not choice.per_user:",
        "    except StoreError as exc:\n        if not choice.per_user:",
    ),
    (
        "answers kept in memory only are not said to be",
        "eoc/cli/userstore.py",
        "    if note:\n        err.write(",
        "    if False:\n        err.write(",
    ),
    (
        "eoc store forget makes a per-user store",
        "eoc/cli/forget.py",
        "    if not path.is_file():",
        "    if False:",
    ),
    (
        "the per-user store holds the pack and hides the graph eoc graph load made",
        "eoc/cli/userstore.py",
        "ttl=ttl, pack_in_store=not choice.per_user)",
        "ttl=ttl, pack_in_store=True)",
    ),
]
