#!/usr/bin/env python3
"""Checks the include-direction rule between the source areas.

Each area is a folder, src/AREA/ with its headers in include/fleetreap/AREA/,
and its README.md (src/AREA/README.md) says what it may include in one line:

    May include: base, model

A file of an area may include its own area's headers and those of the areas
that line names; anything else is a wrong-way include and fails the build.
libssh may be included only by the transport area and yaml-cpp only by the
inventory, escalation and config areas (the inventory, playbook and config
file loaders).
src/main.cc wires everything and may include every area.

Usage: check_layering.py [REPO_ROOT]. Prints one line per violation,
"FILE:LINE: AREA may not include HEADER (May include: ...)", and exits 1 if
there is any; prints nothing and exits 0 otherwise.
"""
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^">]+)[">]')
MAY_INCLUDE = re.compile(r'^May include:\s*(.*)$', re.M)
LIBRARY_OWNERS = {'libssh/': {'transport'}, 'yaml-cpp/': {'inventory', 'escalation', 'config'}}


def areas_of(root):
    areas = {}
    src = os.path.join(root, 'src')
    for name in sorted(os.listdir(src)):
        if not os.path.isdir(os.path.join(src, name)):
            continue
        readme = os.path.join(src, name, 'README.md')
        if not os.path.exists(readme):
            sys.exit(f'{readme}: missing (every area says what it owns and may include)')
        m = MAY_INCLUDE.search(open(readme, encoding='utf-8').read())
        if not m:
            sys.exit(f'{readme}: no "May include: ..." line')
        allowed = {a.strip() for a in m.group(1).split(',') if a.strip() and a.strip() != 'nothing'}
        areas[name] = allowed
    for name, allowed in areas.items():
        for other in allowed:
            if other not in areas:
                sys.exit(f'src/{name}/README.md: "May include" names {other!r}, which is no area')
    return areas


def files_of(root, area):
    for base in (os.path.join(root, 'src', area), os.path.join(root, 'include', 'fleetreap', area)):
        if not os.path.isdir(base):
            continue
        for dirpath, _, names in os.walk(base):
            for n in sorted(names):
                if n.endswith(('.h', '.cc')):
                    yield os.path.join(dirpath, n)


def check(root):
    areas = areas_of(root)
    problems = []
    for area, allowed in areas.items():
        for path in files_of(root, area):
            rel = os.path.relpath(path, root)
            for number, line in enumerate(open(path, encoding='utf-8'), 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                header = m.group(2)
                if m.group(1) == '"' and header.startswith('fleetreap/'):
                    parts = header.split('/')
                    target = parts[1] if len(parts) > 2 else None
                    if target is None or target not in areas:
                        continue  # generated headers (fleetreap/version.h)
                    if target != area and target not in allowed:
                        may = ', '.join(sorted(allowed)) or 'nothing'
                        problems.append(f'{rel}:{number}: {area} may not include {header} (May include: {may})')
                for prefix, owners in LIBRARY_OWNERS.items():
                    if m.group(1) == '<' and header.startswith(prefix) and area not in owners:
                        problems.append(f'{rel}:{number}: only {", ".join(sorted(owners))} may include <{header}>')
    return problems


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), '..')
    problems = check(os.path.abspath(root))
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
