#!/usr/bin/env python3
"""Fails the build when an #include goes against the area graph.

CMakeLists.txt runs this before compiling any library, with the graph it
declares (GPUSCOPE_AREAS and GPUSCOPE_USES_<area>), as arguments
`AREA=USED,USED,...`. The rules:

- src/<area>/ may include its own headers, those of the areas it lists as
  used (directly; the graph says what each area reaches) and the public core
  headers "gpuscope/...";
- include/gpuscope/ (the public core) may include only "gpuscope/...";
- sim/ (the simulator, its own library) may include its own files and only
  the few headers it shares with the agent, listed in SIM_ALLOWED.

An include counts when its path starts with an area's or "gpuscope"'s folder;
anything else (<fmt/...>, <sys/...>) is not ours and not checked. Each
violation is printed as FILE:LINE: message, and the exit status is 1.

Usage: check_layers.py SOURCE_DIR STAMP AREA=USES...
"""

import pathlib
import re
import sys

SIM_ALLOWED = {"nvml/abi.h", "gpuscope/status.h"}
INCLUDE = re.compile(r'^\s*#\s*include\s*["<]([^">]+)[">]')
SOURCE_SUFFIXES = {".h", ".cc"}


def includes(path):
    """(line number, included path) for each #include of the file."""
    with open(path, encoding="utf-8", errors="replace") as f:
        for number, line in enumerate(f, 1):
            m = INCLUDE.match(line)
            if m:
                yield number, m.group(1)


def sources(folder):
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.rglob("*") if p.suffix in SOURCE_SUFFIXES)


def check_area(root, area, uses, areas):
    """Violations in src/<area>/."""
    allowed = {area, "gpuscope"} | set(uses)
    out = []
    for path in sources(root / "src" / area):
        for line, target in includes(path):
            top = target.split("/", 1)[0]
            if "/" in target and top in areas and top not in allowed:
                used = f"only {', '.join(sorted(uses))}" if uses else "no other area"
                out.append(f'{path.relative_to(root)}:{line}: src/{area} may not include "{target}": '
                           f"area {area} uses {used} (GPUSCOPE_USES_{area} in CMakeLists.txt)")
    return out


def check_public(root, areas):
    """Violations in include/gpuscope/: the public core includes no area."""
    out = []
    for path in sources(root / "include" / "gpuscope"):
        for line, target in includes(path):
            top = target.split("/", 1)[0]
            if "/" in target and top in areas:
                out.append(f'{path.relative_to(root)}:{line}: public header may not include "{target}": '
                           "include/gpuscope/ sits below every area of src/")
    return out


def check_sim(root, areas):
    """Violations in sim/: only its own files and SIM_ALLOWED."""
    out = []
    sim = root / "sim"
    for path in sources(sim):
        for line, target in includes(path):
            top = target.split("/", 1)[0]
            if "/" not in target or (top not in areas and top != "gpuscope"):
                continue
            if target not in SIM_ALLOWED:
                allowed = ", ".join(sorted(SIM_ALLOWED))
                out.append(f'{path.relative_to(root)}:{line}: the simulator may not include "{target}": '
                           f"it shares only {allowed} with the agent")
    return out


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    root = pathlib.Path(argv[1]).resolve()
    stamp = pathlib.Path(argv[2])
    stamp.unlink(missing_ok=True)  # a failed check must run again next build
    graph = {}
    for spec in argv[3:]:
        area, _, used = spec.partition("=")
        graph[area] = [u for u in used.split(",") if u]
    areas = set(graph)
    problems = []
    for area, uses in graph.items():
        unknown = [u for u in uses if u not in areas]
        if unknown:
            problems.append(f"CMakeLists.txt: GPUSCOPE_USES_{area} names unknown areas: {unknown}")
        problems += check_area(root, area, uses, areas)
    problems += check_public(root, areas)
    problems += check_sim(root, areas)
    if problems:
        for problem in problems:
            print(f"layer check: {problem}", file=sys.stderr)
        print(f"layer check: {len(problems)} include(s) against the area graph", file=sys.stderr)
        return 1
    stamp.parent.mkdir(parents=True, exist_ok=True)
    stamp.write_text("ok\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
