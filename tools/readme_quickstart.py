#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The commands of README.md's quick start, and the check that CI runs exactly them.

README's "## Quick start" section holds one ```sh block; each non-empty line of it is
a command, with an optional "# comment" after it. CI (.ci/run) runs those commands
verbatim, in order, before anything else; its list is the QUICKSTART=(...) array
in .ci/run. This tool prints README's list, or checks that the two are the same.

  readme_quickstart.py [--readme README.md]             print the commands, one a line
  readme_quickstart.py --check .ci/run [--readme R]     exit 1 (and say why) on drift
"""
import argparse
import re
import shlex
import sys


def quickstart(readme_text):
    """The commands of the first ```sh block under the '## Quick start' heading."""
    m = re.search(r"^## Quick start\s*$(.*?)(?=^## |\Z)", readme_text, re.M | re.S)
    if not m:
        raise ValueError("README has no '## Quick start' section")
    block = re.search(r"^```sh\s*$(.*?)^```\s*$", m.group(1), re.M | re.S)
    if not block:
        raise ValueError("README's quick start has no ```sh block")
    cmds = []
    for line in block.group(1).splitlines():
        cmd = re.sub(r"\s+#.*$", "", line).strip()
        if cmd and not cmd.startswith("#"):
            cmds.append(cmd)
    if not cmds:
        raise ValueError("README's quick-start block is empty")
    return cmds


def ci_list(ci_text):
    """The QUICKSTART=(...) array of .ci/run, as the shell would split it."""
    m = re.search(r"^QUICKSTART=\((.*?)\)\s*$", ci_text, re.M | re.S)
    if not m:
        raise ValueError(".ci/run has no QUICKSTART=(...) array")
    return shlex.split(m.group(1), comments=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--readme", default="README.md")
    ap.add_argument("--check", metavar="CI_SCRIPT", help="compare with the QUICKSTART array of this script")
    args = ap.parse_args()
    try:
        readme = quickstart(open(args.readme, encoding="utf-8").read())
        if not args.check:
            print("\n".join(readme))
            return 0
        ci = ci_list(open(args.check, encoding="utf-8").read())
    except (OSError, ValueError) as e:
        print(f"readme_quickstart: {e}", file=sys.stderr)
        return 1
    if readme != ci:
        print("readme_quickstart: README's quick start and what CI runs differ:", file=sys.stderr)
        print(f"  {args.readme}: {readme}", file=sys.stderr)
        print(f"  {args.check}: {ci}", file=sys.stderr)
        return 1
    print(f"readme_quickstart: CI runs README's quick start verbatim: {' ; '.join(ci)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
