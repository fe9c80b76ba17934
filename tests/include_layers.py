#!/usr/bin/env python3
"""include_layers.py SOURCE_ROOT: fails when a file of one floor includes a
header of a floor above it (docs/design.md, "Layers"). Floors, bottom up:
runtime, memory, transport, protocol, coll, mpi_wrappers."""
import os
import re
import sys

FLOORS = ["runtime", "memory", "transport", "protocol", "coll", "mpi_wrappers"]


def floor_of(path):
    parts = path.split("/")
    name = "mpi_wrappers" if parts[0] == "mpi_wrappers" else (parts[1] if parts[0] == "src" else parts[0])
    return FLOORS.index(name) if name in FLOORS else None


def main():
    root = sys.argv[1]
    upward = []
    for top in ("src", "mpi_wrappers"):
        for directory, _, files in os.walk(os.path.join(root, top)):
            for name in files:
                if not name.endswith((".h", ".cc", ".cu", ".def")):
                    continue
                path = os.path.relpath(os.path.join(directory, name), root)
                own = floor_of(path)
                if own is None:
                    continue
                for included in re.findall(r'#include "([^"]+)"', open(os.path.join(root, path)).read()):
                    floor = floor_of(included) if included.startswith("mpi_wrappers/") else floor_of("src/" + included)
                    if floor is not None and floor > own:
                        upward.append(f"{path} includes {included} ({FLOORS[floor]} is above {FLOORS[own]})")
    for line in upward:
        print(line)
    print(f"{len(upward)} includes upwards")
    return 1 if upward else 0


if __name__ == "__main__":
    sys.exit(main())
