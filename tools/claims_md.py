#!/usr/bin/env python3
"""Writes CLAIMS.md from the section programs' own output, so that it cannot go stale.

Every section program ends with its claims summary (report/claims.hpp): per claim its id, verdict, statement,
the chapter's figures, ours, and why the verdict is what it is. The program tests (`ctest -R _runs`) run each
program as the tests pin it and keep its output in build/test-scratch/<program>_runs/. This script reads those
outputs and writes one entry per claim, in the chapter's order, with its section, the program that prints it
and the tests that assert it.

  ctest --preset release -R _runs            # run the programs (a few minutes)
  tools/claims_md.py --write CLAIMS.md       # regenerate
  tools/claims_md.py --check CLAIMS.md       # what the test suite runs: the verdicts in CLAIMS.md are the
                                             # programs' verdicts now, claim by claim

--check compares the claims and their verdicts, not the figures: timings and a BLAS's rounding move the
figures from machine to machine; the verdicts are pinned by the tests.

The trained claims are also run at the chapter's own setup (`12_language_model <experiment> --full`: hours on a
CPU), and each such run is committed under docs/runs/ (its output, headed by its command, device and wall time).
`12_language_model --judge docs/runs` decides them again by today's rule from their tables (docs/runs/judged.txt):
every trained claim's entry gives that verdict beside the default size's, or says the run is still to do.
"""
import argparse
import glob
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The chapter's sections (Mục 9.x), their Vietnamese titles as the chapter writes them, and English.
SECTIONS = {
    "9.1": ("Attention như phép tra cứu mềm", "Attention as a soft lookup"),
    "9.2": ("Phép chia cho √d_k", "The division by √d_k"),
    "9.3": ("Attention nhiều đầu", "Multi-head attention"),
    "9.4": ("Mặt nạ", "Masks"),
    "9.5": ("Cấu trúc một khối Transformer", "The structure of a Transformer block"),
    "9.6": ("Mã hoá vị trí", "Positional encoding"),
    "9.7": ("Encoder, decoder và encoder–decoder", "Encoder, decoder and encoder–decoder"),
    "9.8": ("Tóm tắt", "Summary"),
}

# Each claim's section: where the chapter states it.
CLAIM_SECTION = {
    **{c: "9.1" for c in ("C01", "C02", "C03", "C04", "C05", "C33")},
    **{c: "9.2" for c in ("C06", "C07", "C08", "C09", "C10", "C11", "C12")},
    **{c: "9.3" for c in ("C13", "C14")},
    **{c: "9.4" for c in ("C15", "C16", "C17", "C18", "C19", "C20")},
    **{c: "9.5" for c in ("C21", "C22", "C23", "C24", "C30", "C31", "C32")},
    **{c: "9.6" for c in ("C25", "C26", "C27", "C28", "C29")},
    **{c: "9.7" for c in ("C34", "C35", "C36")},
    "C37": "9.8",
}

# Claims no program prints, and what checks them instead.
TEST_ONLY = {
    "C32": "our multi-head attention and block against PyTorch's with the same weights: every tensor's largest "
           "|difference| below 1e-6 in fp32 (the chapter: ~1e-7). The reference outputs are committed in "
           "tests/golden/ (tools/make_goldens.py), so the test needs no PyTorch.",
}

CLAIM_LINE = re.compile(r"^  (C\d\d)  (agrees |shape  |DIFFERS|UNRESOLVED)  (.*)$")
DETAIL_LINE = re.compile(r"^              (chapter|ours|within|holds|because): +(.*)$")
SKIP_LINE = re.compile(r"^  (C\d\d)  skipped  (.*)$")
SUMMARY_LINE = re.compile(r"^  verdicts: .*$")


def parse_output(text):
    """The claims of one program's output: [{id, verdict, what, chapter, ours, why}], and the skipped ones."""
    claims, skipped = [], []
    lines = text.splitlines()
    try:
        start = max(i for i, l in enumerate(lines) if l.startswith("Claims recomputed here"))
    except ValueError:
        return claims, skipped
    for line in lines[start + 1:]:
        m = CLAIM_LINE.match(line)
        if m:
            claims.append({"id": m[1], "verdict": m[2].strip().lower(), "what": m[3], "chapter": "", "ours": "",
                           "why": "", "why_kind": ""})
            continue
        m = DETAIL_LINE.match(line)
        if m and claims:
            key = m[1] if m[1] in ("chapter", "ours") else "why"
            claims[-1][key] = m[2]
            if key == "why":
                claims[-1]["why_kind"] = m[1]
            continue
        m = SKIP_LINE.match(line)
        if m:
            skipped.append((m[1], m[2]))
            continue
        if SUMMARY_LINE.match(line):
            break
    return claims, skipped


def read_runs(scratch):
    """program → (command line, claims, skipped), from the program tests' scratch folders."""
    runs = {}
    for d in sorted(glob.glob(os.path.join(scratch, "*_runs"))):
        out, cmd = os.path.join(d, "stdout.txt"), os.path.join(d, "command.txt")
        if not os.path.exists(out):
            continue
        program = os.path.basename(d)[: -len("_runs")]
        command = open(cmd, encoding="utf-8").read().strip() if os.path.exists(cmd) else program
        claims, skipped = parse_output(open(out, encoding="utf-8").read())
        runs[program] = (command, claims, skipped)
    return runs


RUNS_DIR = os.path.join(ROOT, "docs", "runs")
HEADER_LINE = re.compile(r"^(Command|Device|Wall time|Date): +(.*)$")

# The trained claims of 12_language_model and the experiment that decides each at the chapter's setup.
JUDGE_PROGRAM = "12_language_model --judge docs/runs"

FULL_EXPERIMENT = {"C33": "ladder", "C14": "ladder", "C12": "scale", "C24": "norm", "C29": "positions", "C37": "depth"}


JUDGED = os.path.join(RUNS_DIR, "judged.txt")
FULL_SPREAD_LINE = []  # judged.txt's line on the spread one seed is judged by
RUN_FILE = re.compile(r"docs/runs/[A-Za-z0-9_.-]+-full-[A-Za-z0-9_.-]+\.txt")


def read_full_runs(judged=JUDGED):
    """[(claim, [(file relative to the root, header {Command, Device, Wall time, Date})])] of the committed runs at
    the chapter's setup, as `12_language_model --judge docs/runs` decides them today (docs/runs/judged.txt): each
    claim with the run files it was judged from."""
    if not os.path.exists(judged):
        return []
    text = open(judged, encoding="utf-8").read()
    claims, _ = parse_output(text)
    FULL_SPREAD_LINE.clear()
    for line in text.splitlines():
        if line.startswith("  The spread a run of one seed is judged by: ") or line.startswith("  Only "):
            FULL_SPREAD_LINE.append(line.strip())
    found = []
    for c in claims:
        files = []
        for rel in dict.fromkeys(RUN_FILE.findall(c["what"])):
            header = {}
            path = os.path.join(ROOT, rel)
            if os.path.exists(path):
                for line in open(path, encoding="utf-8").read().splitlines()[:10]:
                    m = HEADER_LINE.match(line)
                    if m:
                        header[m[1]] = m[2]
            files.append((rel, header))
        found.append((c, files))
    return found


# Claims whose figures are a clock: the program tests skip them (a timing under another test's load is not a
# measurement), and each is decided instead by a run on an idle machine committed under docs/runs/.
TIMED_RUNS = {"C31": ("10_block", os.path.join(RUNS_DIR, "10_block-default-cpu.txt"))}


# Claims the default decides over fewer seeds than a committed run: the run's verdict beside the default's (not
# checked against the programs: the tests do not run that many seeds).
MORE_SEEDS_RUNS = {cid: ("10_block --seeds 5", os.path.join(RUNS_DIR, "10_block-seeds5-cpu.txt")) for cid in ("C35", "C36")}


IDLE = " (idle)"  # the key of a timed run's verdict beside its program's name, in verdicts_in_md


def read_timed_runs(table=None):
    """claim id → (program, claim, (file relative to the root, header)) from the committed timed runs (or `table`'s)."""
    found = {}
    for cid, (program, path) in (TIMED_RUNS if table is None else table).items():
        if not os.path.exists(path):
            continue
        text = open(path, encoding="utf-8").read()
        header = {}
        for line in text.splitlines()[:10]:
            m = HEADER_LINE.match(line)
            if m:
                header[m[1]] = m[2]
        claims, _ = parse_output(text)
        for c in claims:
            if c["id"] == cid:
                found[cid] = (program, c, (os.path.relpath(path, ROOT), header))
    return found


def tests_by_claim():
    """claim id → the test files that tag it ([C12])."""
    found = {}
    for path in sorted(glob.glob(os.path.join(ROOT, "tests", "chapters", "*.cpp"))):
        text = open(path, encoding="utf-8").read()
        for cid in sorted(set(re.findall(r"\[(C\d\d)\]", text))):
            found.setdefault(cid, []).append(os.path.relpath(path, ROOT))
    return found


# (claim, program) → the verdicts it takes under different OpenBLAS kernels, with the reason beside it. None at
# present: on tiny Shakespeare every pinned verdict is the same under the AVX-512 and the AVX2 kernels.
KERNEL_DEPENDENT = {}

VERDICT_WORD = {"agrees": "agrees", "shape": "shape", "differs": "**differs**", "unresolved": "**unresolved**"}
WHY_WORD = {"within": "Tolerance", "holds": "What holds instead", "because": "Evidence"}


def ran_on(header):
    """" (device …, wall time …, date …)" from a committed run's header, or "" when it names none of them."""
    where = ", ".join(f"{k.lower()} {header[k]}" for k in ("Device", "Wall time", "Date") if k in header)
    return f" ({where})" if where else ""


def figure_lines(c, chapter=True):
    """A verdict's figures under its verdict line: the chapter's (unless left out), ours, and why."""
    lines = [f"  - Chapter: {c['chapter']}"] if chapter else []
    lines.append(f"  - Ours: {c['ours']}")
    if c["why"]:
        lines.append(f"  - {WHY_WORD[c['why_kind']]}: {c['why']}")
    return lines


def render(runs, full_runs=(), timed=None):
    tests = tests_by_claim()
    timed = timed or {}
    more_seeds = read_timed_runs(MORE_SEEDS_RUNS)
    at_full = {}  # claim id → [(claim, [(file, header)])] from the chapter-setup runs, judged today
    for c, files in full_runs:
        at_full.setdefault(c["id"], []).append((c, files))
    entries = {}  # claim id → [(program, command, claim)]
    for program, (command, claims, _) in runs.items():
        for c in claims:
            entries.setdefault(c["id"], []).append((program, command, c))
    counts = {"agrees": 0, "shape": 0, "differs": 0, "unresolved": 0}
    for cid, rows in entries.items():
        for _, _, c in rows:
            counts[c["verdict"]] += 1
    out = []
    out.append("# The chapter's claims, recomputed\n")
    out.append("<!-- Generated by tools/claims_md.py from the section programs' output; do not edit by hand. -->\n")
    out.append("Every checkable statement of the chapter, the program that recomputes it, the test that asserts it, "
               "and the verdict our run gives at the default seed (or seeds, for a trained claim decided over several):\n")
    out.append("- **agrees**: the chapter's statement holds as stated, within the tolerance given (and why it is that).")
    out.append("- **shape**: only a weaker statement holds; the entry names it and says why.")
    out.append("- **differs**: it does not hold in our run; the entry gives what we measured.")
    out.append("- **unresolved**: a trained claim whose seeds disagree; the entry gives each seed's figure.\n")
    out.append("A trained claim is decided over seeds by one rule (README, \"What a program prints\"): a figure's "
               "tolerance is its spread over the seeds of that run (their sample sd), at that setup on that corpus; a "
               "figure holds when it is > 0 at every seed but at most one and its mean lies beyond 3 standard errors of 0; "
               "the chapter's size agrees when it lies within 2 sd of our mean. **agrees**: every figure holds and every "
               "size agrees; **shape**: a named weaker statement holds instead; **differs**: a chapter's size lies outside "
               "2 sd of our mean (the entry gives the gap in sd), whatever the signs do, or the opposite holds; "
               "**unresolved**: the seeds disagree and the chapter's sizes lie inside our spread. Each entry says how many "
               "seeds decided it and names its setup (task or tokens, size, steps). One claim is decided at one seed "
               "outside 12_language_model: C24 in 08_normalization, its tolerances from the spread measured over seeds.\n")
    out.append(f"Verdict lines of the programs: {counts['agrees']} agree, {counts['shape']} shape, {counts['differs']} differ, "
               f"{counts['unresolved']} unresolved "
               f"(a claim printed by two programs counts twice). The figures below are those of the run that wrote this "
               f"file; timings and the last digits of trained results move from machine to machine, the verdicts do not "
               f"(the program tests pin them, under OpenBLAS's AVX-512 and AVX2 kernels alike).\n")
    judged = [c for c, _ in full_runs]
    full_counts = {v: sum(1 for c in judged if c["verdict"] == v) for v in counts}
    out.append("The trained claims of `12_language_model` are pinned at a size the tests can run (`--quick`: minutes). "
               "Each also ran at the chapter's own setup — tiny Shakespeare, BPE of 1024, width 128, context 128, "
               "3000 steps of AdamW at 1e-3, batch 64 — by `12_language_model <experiment> --full`, an hour or more a "
               "seed on a CPU; those runs are committed under `docs/runs/`, each headed by its command, device and wall "
               f"time. `{JUDGE_PROGRAM}` decides them by today's rule from the tables they printed: the ladder over "
               "its committed seeds together, every experiment that ran once by the spread the ladder's seeds show at "
               "that setup. " + (FULL_SPREAD_LINE[0] + ". " if FULL_SPREAD_LINE else "") +
               f"Its output is `docs/runs/judged.txt` (a test holds the file to the program's output); each trained "
               f"entry gives its verdict under \"Verdict at the chapter's setup\". There: {full_counts['agrees']} agree, "
               f"{full_counts['shape']} shape, {full_counts['differs']} differ, {full_counts['unresolved']} unresolved.\n")
    out.append("Regenerate with `ctest --preset release -R _runs && tools/claims_md.py --write CLAIMS.md`.\n")
    ids = sorted(set(CLAIM_SECTION), key=lambda c: int(c[1:]))
    by_section = {}
    for cid in ids:
        by_section.setdefault(CLAIM_SECTION[cid], []).append(cid)
    for sec in sorted(by_section, key=lambda s: float(s)):
        vi, en = SECTIONS[sec]
        out.append(f"## Mục {sec}, \"{vi}\" ({en})\n")
        for cid in by_section[sec]:
            test_files = ", ".join(f"`{t}`" for t in tests.get(cid, [])) or "none"
            if cid in TEST_ONLY:
                out.append(f"### {cid} — checked by its test only\n")
                out.append(TEST_ONLY[cid] + "\n")
                out.append(f"- Test: {test_files} (`ctest --preset release -R {cid}`)\n")
                continue
            rows = entries.get(cid, [])
            if not rows and not at_full.get(cid) and cid not in timed:
                out.append(f"### {cid} — not recomputed by any program\n")
                out.append(f"- Test: {test_files}\n")
                continue
            # the statement, from the program that prints it, or (where the size the tests run skips it) from the
            # chapter-setup judgement, without the run's setup
            title = (rows[0][2]["what"] if rows else timed[cid][1]["what"] if cid in timed
                     else at_full[cid][0][0]["what"].split(" (committed run")[0])
            out.append(f"### {cid} — {title}\n")
            skipped_here = [(p, why) for p, (_, _, sk) in runs.items() for c2, why in sk if c2 == cid]
            for p, why in skipped_here:
                if not rows:
                    out.append(f"- Skipped (`{p}` as the tests run it): {why}")
            for program, command, c in rows:
                out.append(f"- Verdict (`{program}`): {VERDICT_WORD[c['verdict']]}")
                out.extend(figure_lines(c))
                if len(rows) > 1 and c["what"] != rows[0][2]["what"]:
                    out.append(f"  - Statement there: {c['what']}")
                out.append(f"  - Program: `build/bin/{command}`")
            if cid in timed:
                program, c, (path, header) = timed[cid]
                out.append(f"- Verdict (`{program}` on an idle machine, a clock: `{path}`): {VERDICT_WORD[c['verdict']]}")
                out.extend(figure_lines(c))
                out.append(f"  - Run: `{header.get('Command', '?')}`" + ran_on(header) +
                           "; the program tests skip its timings (`--no-timing`): under another test's load a clock "
                           "measures the load")
            if cid in more_seeds:
                program, c, (path, header) = more_seeds[cid]
                out.append(f"- Verdict over more seeds than the default's (`{program}`, `{path}`): {VERDICT_WORD[c['verdict']]}")
                out.extend(figure_lines(c, chapter=False))
                out.append(f"  - Run: `{header.get('Command', '?')}`" + ran_on(header))
            for c, files in at_full.get(cid, []):
                out.append(f"- Verdict at the chapter's setup (`{JUDGE_PROGRAM}`): {VERDICT_WORD[c['verdict']]}")
                out.append(f"  - Statement, and the setup it ran: {c['what']}")
                out.extend(figure_lines(c))
                for path, header in files:
                    out.append(f"  - Run `{path}`: `{header.get('Command', '?')}`" + ran_on(header))
            if cid in FULL_EXPERIMENT and cid not in at_full:
                out.append(f"- At the chapter's setup: not run yet (`build/bin/12_language_model {FULL_EXPERIMENT[cid]} --full`, "
                           f"hours on a CPU)")
            out.append(f"- Test: {test_files}\n")
    skipped = [(p, cid, why) for p, (_, _, sk) in runs.items() for cid, why in sk]
    if skipped:
        out.append("## Not reached by the default runs\n")
        for p, cid, why in skipped:
            out.append(f"- {cid} in `{p}`: {why}")
        out.append("")
    out.append("## Claims that need a GPU\n")
    out.append("`11_gpu_block` recomputes C31 on the device (attention memory and time against n) and exits "
               "with code 77 (skipped) where there is none; `tools/gpu_check.sh` runs it on a machine with a GPU.\n")
    return "\n".join(out)


def verdicts_in_md(text):
    """(claim id, program, verdict) for every verdict line of a CLAIMS.md."""
    found, current = [], None
    for line in text.splitlines():
        m = re.match(r"^### (C\d\d) ", line)
        if m:
            current = m[1]
            continue
        m = re.match(r"^- Verdict(?: at the chapter's setup)? \(`([^`]+)`( on an idle machine)?[^)]*\): \**(agrees|shape|differs|unresolved)\**$", line)
        if m and current:
            found.append((current, m[1] + (IDLE if m[2] else ""), m[3]))
    return found


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scratch", default=os.path.join(ROOT, "build", "test-scratch"),
                    help="the program tests' scratch folder (default: build/test-scratch)")
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--write", metavar="FILE", help="write the generated CLAIMS.md here")
    g.add_argument("--check", metavar="FILE", help="exit 1 unless FILE's verdicts are the programs' verdicts now")
    a = ap.parse_args()
    runs = read_runs(a.scratch)
    if not runs:
        print(f"claims_md.py: no program output under {a.scratch}; run `ctest --preset release -R _runs` first",
              file=sys.stderr)
        return 1
    full_runs = read_full_runs()
    if full_runs:  # docs/runs/judged.txt: its freshness is its own test's (tests/programs/CMakeLists.txt)
        runs_checked = dict(runs)
        runs_checked[JUDGE_PROGRAM] = None
    else:
        runs_checked = dict(runs)
    timed = read_timed_runs()
    for program, _, _ in timed.values():  # a timed run's verdict is checked like a program's
        runs_checked[program + IDLE] = None
    text = render(runs, full_runs, timed)
    if a.write:
        with open(a.write, "w", encoding="utf-8") as f:
            f.write(text)
        print(f"wrote {a.write} from {len(runs)} programs' output")
        return 0
    try:
        committed = open(a.check, encoding="utf-8").read()
    except OSError as e:
        print(f"claims_md.py: cannot read {a.check}: {e.strerror}", file=sys.stderr)
        return 1
    want, have = verdicts_in_md(text), verdicts_in_md(committed)
    # Only the programs that ran: a check on some programs' output checks their entries.
    ran = set(runs_checked)
    def keep(rows):
        return [(cid, prog, v) for cid, prog, v in rows if prog in ran]
    # A verdict that moves with the OpenBLAS kernel (tests/programs/CMakeLists.txt pins its alternatives):
    # CLAIMS.md holds one machine's; another machine's alternative is not stale.
    def same(rows):
        return {(cid, prog, "any" if v in KERNEL_DEPENDENT.get((cid, prog), ()) else v) for cid, prog, v in rows}
    missing = sorted(same(keep(want)) - same(keep(have)))
    stale = sorted(same(keep(have)) - same(keep(want)))
    if missing or stale:
        print(f"{a.check} is stale: regenerate it with `tools/claims_md.py --write {os.path.basename(a.check)}`",
              file=sys.stderr)
        for cid, prog, v in stale:
            print(f"  {a.check} says {cid} ({prog}) {v}", file=sys.stderr)
        for cid, prog, v in missing:
            print(f"  the program says {cid} ({prog}) {v}", file=sys.stderr)
        return 1
    print(f"{a.check}: the verdicts of {len(keep(want))} claim lines match {len(runs)} programs' output and the committed runs' judgement")
    return 0


if __name__ == "__main__":
    sys.exit(main())
