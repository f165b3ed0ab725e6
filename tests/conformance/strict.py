#!/usr/bin/env python3
"""Stricter than the suite's own verdict: a scenario that warned or skipped a check fails.

Usage: strict.py DIR LEG ALLOWED

DIR is a suite output directory (`-o DIR`): one sub-directory per scenario run, named
`[server-]SCENARIO-<ISO timestamp>`, each with a `checks.json`. For each scenario with a
`WARNING` check, or a `SKIPPED` check that ALLOWED does not excuse, prints one line
`SCENARIO: <what>` (nothing when every scenario is clean). ALLOWED is a file of
`LEG SCENARIO CHECK-NAME   # reason` lines (`#` comments, blank lines ignored; `*` matches any
leg or check name) naming the skips we accept and why.
"""
import json
import pathlib
import re
import sys

STAMP = re.compile(r"-\d{4}-\d\d-\d\dT[\d-]+Z$")


def allowed(path, leg):
    rules = []
    for line in pathlib.Path(path).read_text().splitlines():
        line = line.split("#", 1)[0].split()
        if len(line) == 3 and line[0] in (leg, "*"):
            rules.append((line[1], line[2]))
    return rules


def main():
    root, leg, allow_file = sys.argv[1], sys.argv[2], sys.argv[3]
    rules = allowed(allow_file, leg)
    for checks in sorted(pathlib.Path(root).glob("*/checks.json")):
        name = STAMP.sub("", checks.parent.name)
        name = name[len("server-"):] if name.startswith("server-") else name
        try:
            results = json.loads(checks.read_text())
        except (OSError, ValueError) as e:
            print(f"{name}: unreadable checks.json ({e})")
            continue
        bad = []
        for c in results:
            status, check = c.get("status"), c.get("name") or c.get("id")
            if status == "WARNING":
                bad.append(f"warning {check}")
            elif status == "SKIPPED" and not any(
                s == name and n in (check, "*") for s, n in rules
            ):
                bad.append(f"skipped {check}")
        if bad:
            print(f"{name}: " + ", ".join(bad))


if __name__ == "__main__":
    main()
