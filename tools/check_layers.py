#!/usr/bin/env python3
"""Checks that the library's includes run down its layers, from the #include lines alone.

The library (common/) is read in layers, lowest first, each a folder:

  core       the tensor types, errors, random numbers, parameters, number formatting, .npy files, memory
             measurement, the configuration both engines build from (core/config.hpp), the interface both
             implement (core/language_model.hpp), where a model computes (core/device_settings.hpp), the heads'
             split and merge, the BLAS thread setting, jobs side by side on the cores
  math       the chapter's formulas on plain tensors: softmax, averaging, Definition 9.1, positions,
             statistics, the online softmax, the gradient check
  text       the corpora, byte-level BPE, sampling text from a model
  reference  the plain engine: each layer a forward and a backward on xtensor
  fast       the fast engine: blocked products, threads, fused loops
  train      the training loop, AdamW, checkpoints, which engine computes a model
  gpu        the CUDA module (kernels, the host API, the GPU model) and the choice of device (gpu/placement.hpp)
  tasks      the pronoun task, and training and scoring models on it
  report     claims, tables, SVG, flags, --mine, the explorer page

A file may include its own layer's files and lower layers' only. math and text stand side by side, and so do
reference and fast: neither of a pair includes the other. The reference engine also calls no BLAS or
threading API itself (xtensor-blas does its products): no cblas, no openblas_, no std::thread.

Sections 01-10 (chapters/01_* … chapters/10_*) read the reference engine: none of their files includes a fast
header directly.

  tools/check_layers.py               check common/; exit 1 naming each include that runs upwards
  tools/check_layers.py --self-test   plant one of each kind of violation in a copy and check that each is
                                      reported (so the check cannot pass by finding nothing)
"""
import os
import re
import shutil
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Each folder of common/ and its height: a file includes files of lower height, or of its own folder.
ORDER = {"core": 0, "math": 1, "text": 1, "reference": 2, "fast": 2, "train": 3, "gpu": 4, "tasks": 5, "report": 6}

# What the reference engine must not call: BLAS and threads are the fast engine's business.
FORBIDDEN_IN_REFERENCE = [
    (re.compile(r"\bcblas_\w+|#\s*include\s*<cblas\.h>"), "calls CBLAS directly (xtensor-blas does the products)"),
    (re.compile(r"\bopenblas_\w+"), "calls OpenBLAS directly (core/blas.hpp sets its threads)"),
    (re.compile(r"\bstd::thread\b|\bstd::async\b|#\s*pragma\s+omp"), "starts threads (the reference engine runs on one)"),
]
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)


def layer_of(rel):
    """The layer of a file of common/ (a path relative to common/), or None for a file outside the folders."""
    return rel.split("/")[0] if rel.split("/")[0] in ORDER else None


def resolve(common, including, name):
    """The file of common/ an include names (relative to common/), or None for one outside it."""
    for base in (common, os.path.dirname(including)):
        path = os.path.normpath(os.path.join(base, name))
        if os.path.isfile(path) and path.startswith(common + os.sep):
            return os.path.relpath(path, common)
    return None


def check(common):
    problems = []
    for folder, _, files in os.walk(common):
        for f in sorted(files):
            if not f.endswith((".hpp", ".cpp", ".cuh", ".cu")):
                continue
            path = os.path.join(folder, f)
            rel = os.path.relpath(path, common)
            mine = layer_of(rel)
            if mine is None:
                continue
            text = open(path, encoding="utf-8").read()
            for m in INCLUDE.finditer(text):
                target = resolve(common, path, m.group(1))
                if target is None:
                    if m.group(1).split("/")[0] in ("chapters", "exercises", "solutions", "tests", "tools"):
                        line = text.count("\n", 0, m.start()) + 1
                        problems.append(f"common/{rel}:{line}: includes \"{m.group(1)}\", which is in no layer's folder: "
                                        "the library never reads a section, an exercise or a test")
                    continue
                theirs = layer_of(target)
                line = text.count("\n", 0, m.start()) + 1
                where = f"common/{rel}:{line}"
                if theirs is None:
                    problems.append(f"{where}: {mine} includes \"{m.group(1)}\", which is in no layer's folder")
                elif ORDER[theirs] > ORDER[mine] or (ORDER[theirs] == ORDER[mine] and theirs != mine):
                    problems.append(f"{where}: {mine} includes \"{m.group(1)}\" ({theirs})")
            if mine == "reference":
                for pattern, why in FORBIDDEN_IN_REFERENCE:
                    for m in pattern.finditer(text):
                        line = text.count("\n", 0, m.start()) + 1
                        problems.append(f"common/{rel}:{line}: the reference engine {why}: {m.group(0)}")
    return problems


def check_sections(root):
    """Sections 01-10 include no fast header."""
    problems = []
    chapters = os.path.join(root, "chapters")
    for section in sorted(os.listdir(chapters)):
        if not re.match(r"(0[1-9]|10)_", section):
            continue
        for f in sorted(os.listdir(os.path.join(chapters, section))):
            if not f.endswith((".hpp", ".cpp")):
                continue
            rel = f"chapters/{section}/{f}"
            text = open(os.path.join(root, rel), encoding="utf-8").read()
            fast = [m.group(1) for m in INCLUDE.finditer(text) if m.group(1).startswith("fast/")]
            if fast:
                problems.append(f"{rel}: section {section[:2]} includes the fast engine's {', '.join(fast)} (sections 01-10 read the reference engine)")
    return problems


def self_test():
    plants = [
        ("reference/attention.cpp", '#include "fast/matmul.hpp"\n', "reference includes \"fast/matmul.hpp\" (fast)"),
        ("fast/model.cpp", '#include "reference/model.hpp"\n', "fast includes \"reference/model.hpp\" (reference)"),
        ("core/config.cpp", '#include "math/softmax.hpp"\n', "core includes \"math/softmax.hpp\" (math)"),
        ("math/softmax.cpp", '#include "text/bpe.hpp"\n', "math includes \"text/bpe.hpp\" (text)"),
        ("train/train.cpp", '#include "tasks/pronoun.hpp"\n', "train includes \"tasks/pronoun.hpp\" (tasks)"),
        ("gpu/placement.cpp", '#include "report/svg.hpp"\n', "gpu includes \"report/svg.hpp\" (report)"),
        ("tasks/pronoun.cpp", '#include "chapters/04_learned_attention/claims.hpp"\n', "in no layer's folder"),
        ("reference/layers.cpp", "void f() { openblas_set_num_threads(2); }\n", "calls OpenBLAS directly"),
        ("reference/model.cpp", "void g() { std::thread t; }\n", "starts threads"),
    ]
    failed = 0
    clean = check(os.path.join(ROOT, "common")) + check_sections(ROOT)
    if clean:
        print("check_layers --self-test: the tree itself has problems; fix those first", file=sys.stderr)
        return 1
    for rel, line, expect in plants:
        with tempfile.TemporaryDirectory() as tmp:
            copy = os.path.join(tmp, "common")
            shutil.copytree(os.path.join(ROOT, "common"), copy)
            with open(os.path.join(copy, rel), "a", encoding="utf-8") as f:
                f.write(line)
            found = [p for p in check(copy) if expect in p]
            status = "caught" if found else "MISSED"
            failed += not found
            print(f"  {status}: {line.strip()} planted in common/{rel}")
    section_plants = [("chapters/02_soft_lookup/main.cpp", '#include "fast/matmul.hpp"\n', "section 02 includes the fast engine's")]
    for rel, line, expect in section_plants:
        with tempfile.TemporaryDirectory() as tmp:
            shutil.copytree(os.path.join(ROOT, "chapters"), os.path.join(tmp, "chapters"))
            with open(os.path.join(tmp, rel), "a", encoding="utf-8") as f:
                f.write(line)
            found = [p for p in check_sections(tmp) if expect in p]
            failed += not found
            plants.append((rel, line.strip() + " planted", expect))
            print(f"  {'caught' if found else 'MISSED'}: {line.strip()} planted in {rel}")
    print(f"check_layers --self-test: {len(plants) - failed} of {len(plants)} planted violations reported")
    return 1 if failed else 0


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    if sys.argv[1:]:
        print(__doc__, file=sys.stderr)
        return 2
    problems = check(os.path.join(ROOT, "common")) + check_sections(ROOT)
    for p in problems:
        print(p)
    if problems:
        print(f"check_layers: {len(problems)} include(s) or call(s) break the layers (tools/check_layers.py says which)", file=sys.stderr)
        return 1
    print("check_layers: every folder of common/ (core, math | text, reference | fast, train, gpu, tasks, report) includes "
          "only its own files and lower layers'; "
          "the reference engine calls no BLAS or threads; sections 01-10 include no fast header")
    return 0


if __name__ == "__main__":
    sys.exit(main())
