"""`python -m agentsim ARGS...` runs `agentsim ARGS...` (the binary this package installed)."""

from __future__ import annotations

import os
import subprocess
import sys

from ._bin import find_agentsim_bin


def main() -> int:
    try:
        binary = find_agentsim_bin()
    except FileNotFoundError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if os.name == "posix":
        os.execv(binary, [binary, *sys.argv[1:]])
    return subprocess.run([binary, *sys.argv[1:]]).returncode


if __name__ == "__main__":
    sys.exit(main())
