"""Falsify breaks: the command line, the demo page's server and the scripts."""

BREAKS: list[tuple[str, str, str, str]] = [
    (
        "bench total 0 J when all refused",
        "eoc/cli/benchrun.py",
        '"total_j": total_uj / 1e6 if done else None,',
        '"total_j": total_uj / 1e6,',
    ),
    (
        "a set but blank EOC_TRUSTED_KEYS is not checked",
        "eoc/cli/verify.py",
        '    wants_keys = args.public_key or "EOC_TRUSTED_KEYS" in os.environ',
        '    wants_keys = args.public_key or os.environ.get("EOC_TRUSTED_KEYS", "").strip()',
    ),
    (
        "the fake meter's lines are not marked fake",
        "eoc/cli/query.py",
        '        lines = [f"{FAKE_MARK}{line}" for line in [FAKE_METER_NOTE, *lines]]',
        "        lines = [FAKE_METER_NOTE, *lines]",
    ),
    (
        "the fake meter's JSON does not say it is simulated",
        "eoc/cli/query.py",
        '        doc = {"meter": _fake_meter_doc(meter), **doc}',
        "        pass",
    ),
    (
        "serve NUL not refused",
        "web/serve.py",
        '        if "\\x00" in urllib.parse.unquote(url_path, errors="surrogateescape"):',
        "        if False:",
    ),
    (
        "serve symlink out followed",
        "web/serve.py",
        "        if not _inside(real, root):\n            return None\n        folder",
        "        if False:\n            return None\n        folder",
    ),
    (
        "serve index symlink out followed",
        "web/serve.py",
        "            if not _inside(real, root):\n                return None",
        "            if False:\n                return None",
    ),
    (
        "serve falls back to the base class",
        "web/serve.py",
        '        if target is None:\n            self.send_error(HTTPStatus.NOT_FOUND, "File not found")\n            return None',
        "        if target is None:\n            return super().send_head()",
    ),
    (
        "serve drops the connection on a bad path",
        "web/serve.py",
        "        except (OSError, ValueError):  # ValueError",
        "        except OSError:  # ValueError",
    ),
    (
        "readme check: lines the README leaves out pass",
        "scripts/readme_check.py",
        "            result = j == len(actual)",
        "            result = True",
    ),
    (
        "readme check: answers compared by shape like figures",
        "scripts/readme_check.py",
        '    return _ENERGY.sub("<n>", _DURATION.sub("<duration>", line)).rstrip()',
        '    return re.sub(r"\\d+", "<n>", line).rstrip()',
    ),
    (
        "falsify: a moved guard's broken text is applied unshifted",
        "scripts/falsify_anchor.py",
        "            moved_new = shifted(new, by)",
        "            moved_new = new",
    ),
    (
        "falsify: a guard found twice applies at the first",
        "scripts/falsify_anchor.py",
        "        if len(hits) == 1:",
        "        if len(hits) >= 1:",
    ),
]
