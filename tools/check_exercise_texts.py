#!/usr/bin/env python3
"""Every exercise speaks to both kinds of reader, with help in tiers.

For each "/// Exercise N.M — name" in exercises/*/*.hpp: an English statement and "Hint 1:" and "Hint 2:";
then a "/// [vi]" block with the Vietnamese statement and "Gợi ý 1:" and "Gợi ý 2:" (what tools/progress.sh
shows with --lang vi). Exits 1 naming each exercise that lacks one of them.
"""
import glob
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
problems, count = [], 0
for path in sorted(glob.glob(os.path.join(ROOT, "exercises", "*", "*.hpp"))):
    lines = open(path, encoding="utf-8").read().split("\n")
    i = 0
    while i < len(lines):
        m = re.match(r"/// Exercise (\d+\.\d+) — ", lines[i])
        i += 1
        if not m:
            continue
        count += 1
        block = []
        while i < len(lines) and lines[i].startswith("///"):
            block.append(lines[i][3:].strip())
            i += 1
        en = block[: block.index("[vi]")] if "[vi]" in block else block
        vi = block[block.index("[vi]") + 1:] if "[vi]" in block else []
        where = f"{os.path.relpath(path, ROOT)}: exercise {m[1]}"
        for tier in ("Hint 1:", "Hint 2:"):
            if not any(l.startswith(tier) for l in en):
                problems.append(f"{where} has no '{tier}'")
        if not en or en[0].startswith("Hint"):
            problems.append(f"{where} has no English statement")
        if not vi:
            problems.append(f"{where} has no Vietnamese block (/// [vi])")
        else:
            for tier in ("Gợi ý 1:", "Gợi ý 2:"):
                if not any(l.startswith(tier) for l in vi):
                    problems.append(f"{where} has no '{tier}' in its Vietnamese block")
            if vi[0].startswith("Gợi ý"):
                problems.append(f"{where} has no Vietnamese statement")
for p in problems:
    print(p, file=sys.stderr)
if count == 0:
    print("no exercises found", file=sys.stderr)
    sys.exit(1)
print(f"{count} exercises: each with a statement and two hints, in English and in Vietnamese" if not problems else
      f"{len(problems)} problems in {count} exercises")
sys.exit(1 if problems else 0)
