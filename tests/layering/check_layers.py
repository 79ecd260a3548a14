#!/usr/bin/env python3
"""Fails when a stage of the engine includes a stage above it.

Each folder of src/ is a stage with a library of its own, its headers beside
its sources in src/<stage>/ (included as "<stage>/x.h"). A stage may include
only itself and the stages listed for it in LAYERS below; the list is the one
place the layering is written down (src/CMakeLists.txt points here). A stage
missing from the table is an error too, so a new folder must say where it
stands. The installed API is include/infercost/x.h (included as
"infercost/x.h", any stage may): those headers include only each other, never
a stage's header, so an installed tree needs nothing from src/.

    check_layers.py SOURCE_DIR
"""

import os
import re
import sys

# stage: the stages it may include (besides itself). Lower stages first.
LAYERS = {
    "core": set(),
    "text": {"core"},
    "parquet": {"core"},
    "cost": {"core"},
    "record": {"core", "cost"},
    "corpus": {"core", "parquet"},
    "model": {"core", "text", "corpus"},
    "io": {"core", "parquet"},
    "backend": {"core", "text", "model"},
    # The engine (a model loaded on its devices, its settings and metrics) and,
    # on it, the file run (reader -> encoder -> writer, checkpoints, jobs).
    "engine": {"core", "text", "model", "backend", "io", "cost"},
    "run": {"core", "text", "model", "backend", "io", "cost", "engine"},
    "report": {"core", "cost", "record"},
    # The installed C++ API (include/infercost/classifier.h, runner.h, model_info.h) over the engine.
    "api": {"core", "text", "model", "backend", "io", "cost", "engine", "run"},
    "bench": {"core", "cost", "record", "corpus", "text", "model", "backend", "io", "engine", "run"},
    "plan": {"core", "cost", "record", "report", "text", "model", "backend", "io", "engine", "run"},
    "cli": {"core", "text", "parquet", "cost", "record", "corpus", "model", "io", "backend", "engine", "run",
            "report", "bench", "plan"},
    # The Python package's native module (nanobind), beside the CLI.
    "python": {"core", "text", "model", "io", "backend", "engine", "run"},
}

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
SUFFIXES = (".h", ".cc", ".cu", ".cuh")


def files_of(root, stage):
    for folder, _, names in os.walk(os.path.join(root, "src", stage)):
        for name in sorted(names):
            if name.endswith(SUFFIXES):
                yield os.path.join(folder, name)


def included_stage(path):
    parts = path.split("/")
    if len(parts) > 1 and parts[0] in LAYERS:
        return parts[0]
    return None  # a file beside the includer, or a third-party header


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
        return 2
    root = sys.argv[1]
    problems = []
    stages = sorted(d for d in os.listdir(os.path.join(root, "src"))
                    if os.path.isdir(os.path.join(root, "src", d)))
    for stage in stages:
        if stage not in LAYERS:
            problems.append("src/%s: a stage the layering does not place (add it to LAYERS in %s)"
                            % (stage, os.path.relpath(__file__, root)))
    checked = 0
    for stage in stages:
        allowed = LAYERS.get(stage, set()) | {stage}
        for path in files_of(root, stage):
            checked += 1
            with open(path, encoding="utf-8") as f:
                for number, line in enumerate(f, 1):
                    m = INCLUDE.match(line)
                    if not m:
                        continue
                    target = included_stage(m.group(1))
                    if target is not None and target not in allowed:
                        problems.append("%s:%d includes \"%s\": %s may use only %s" % (
                            os.path.relpath(path, root), number, m.group(1), stage,
                            ", ".join(sorted(allowed - {stage})) or "nothing below it"))
    public = os.path.join(root, "include", "infercost")
    for name in sorted(os.listdir(public)):
        path = os.path.join(public, name)
        if os.path.isdir(path):
            problems.append("%s: the installed API is flat (include/infercost/x.h)" % os.path.relpath(path, root))
            continue
        checked += 1
        with open(path, encoding="utf-8") as f:
            for number, line in enumerate(f, 1):
                m = INCLUDE.match(line)
                if m and not m.group(1).startswith("infercost/"):
                    problems.append("%s:%d includes \"%s\": an installed header includes only infercost/*.h" % (
                        os.path.relpath(path, root), number, m.group(1)))
    for p in problems:
        print(p)
    if checked == 0:
        print("no source files found under %s/src" % root)
        return 1
    print("%d files of %d stages checked: %s" % (checked, len(stages),
                                               "layering kept" if not problems else "%d includes break it" % len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
