#!/usr/bin/env python3
"""Re-bases mistake patches (tests/mistakes/*.patch) on today's answers in solutions/.

A patch stops applying when lines near its change move, though the change itself (its removed lines, still in
the answer, and the lines that replace them) is as meant. For each patch given that `git apply --check` refuses,
this finds each hunk's removed lines in the answer as it is now, puts the added lines in their place, and writes
the patch again (its Exercise:/Mistake:/Named:/Says: header kept). A patch whose removed lines are no longer in
the answer is reported and left alone: that mistake needs rewriting by hand.

  tools/refresh_mistakes.py tests/mistakes/ex5.3_*.patch
"""
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def hunks(diff):
    """The (removed, added) line blocks of each hunk, each a string of whole lines."""
    out = []
    for hunk in re.split(r"^@@[^\n]*\n", diff, flags=re.M)[1:]:
        removed = "".join(line[1:] + "\n" for line in hunk.splitlines() if line.startswith("-"))
        added = "".join(line[1:] + "\n" for line in hunk.splitlines() if line.startswith("+"))
        out.append((removed, added))
    return out


def refresh(path):
    text = open(path, encoding="utf-8").read()
    if subprocess.run(["git", "-C", ROOT, "apply", "--check", path], capture_output=True).returncode == 0:
        return "applies"
    start = text.index("diff --git ")
    header, diff = text[:start], text[start:]
    target = re.search(r"^diff --git a/(\S+) ", diff, re.M).group(1)
    answer = open(os.path.join(ROOT, target), encoding="utf-8").read()
    mistaken = answer
    for removed, added in hunks(diff):
        if not removed or mistaken.count(removed) != 1:
            return f"NOT refreshed: its removed lines are not in {target} exactly once; rewrite it by hand"
        mistaken = mistaken.replace(removed, added, 1)
    with tempfile.NamedTemporaryFile("w", suffix=".cpp", delete=False, encoding="utf-8") as f:
        f.write(mistaken)
    try:
        new = subprocess.run(["git", "-C", ROOT, "diff", "--no-index", target, f.name], capture_output=True, text=True).stdout
    finally:
        os.unlink(f.name)
    new = re.sub(r"(diff --git a/\S+ )b/\S+", rf"\1b/{target}", new, count=1)
    new = re.sub(r"^\+\+\+ b/\S+", f"+++ b/{target}", new, count=1, flags=re.M)
    open(path, "w", encoding="utf-8").write(header + new)
    ok = subprocess.run(["git", "-C", ROOT, "apply", "--check", path], capture_output=True).returncode == 0
    return "refreshed" if ok else "NOT refreshed: the new patch does not apply (look at it by hand)"


def main():
    if not sys.argv[1:]:
        print(__doc__, file=sys.stderr)
        return 2
    bad = 0
    for path in sys.argv[1:]:
        status = refresh(path)
        bad += status.startswith("NOT")
        print(f"  {os.path.basename(path)}: {status}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
