"""Where the `agentsim` binary is: the one this wheel installed beside the interpreter's scripts."""

from __future__ import annotations

import os
import sys
import sysconfig

_EXE = "agentsim" + (sysconfig.get_config_var("EXE") or "")

# An explicit binary (a `cargo build` of a checkout, say) wins over the installed one.
ENV_VAR = "AGENTSIM"


def find_agentsim_bin() -> str:
    """The path of the `agentsim` binary this package runs.

    `$AGENTSIM` when set (it must name an existing file); otherwise the binary the wheel
    installed into the scripts folder of this interpreter's install scheme (a venv's `bin/`,
    `pip install --user`'s `~/.local/bin`, a `--prefix` or `--target` install). Raises
    `FileNotFoundError` saying what to do when there is none.
    """
    override = os.environ.get(ENV_VAR)
    if override:
        if os.path.isfile(override):
            return override
        raise FileNotFoundError(f"${ENV_VAR} is {override!r}, which is not a file")
    for path in _candidates():
        if os.path.isfile(path):
            return path
    raise FileNotFoundError(
        "no agentsim binary beside this Python package: install the agentsim wheel "
        "(docs/python.md) or set $AGENTSIM to a built binary "
        "(`cargo build --release` makes target/release/agentsim)"
    )


def _candidates() -> list[str]:
    out = [os.path.join(sysconfig.get_path("scripts"), _EXE)]
    user_scheme = f"{os.name}_user"
    if user_scheme in sysconfig.get_scheme_names():
        out.append(os.path.join(sysconfig.get_path("scripts", scheme=user_scheme), _EXE))
    # `pip install --target DIR` / `--prefix PREFIX`: the scripts land in DIR/bin or PREFIX/bin
    # (this file is DIR/agentsim/_bin.py or PREFIX/lib/pythonX.Y/site-packages/agentsim/_bin.py).
    here = os.path.dirname(os.path.abspath(__file__))
    for up in (1, 4):
        root = here
        for _ in range(up):
            root = os.path.dirname(root)
        out.append(os.path.join(root, "bin", _EXE))
    out.append(os.path.join(os.path.dirname(sys.executable), _EXE))
    return out
