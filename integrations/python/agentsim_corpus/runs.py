"""What a corpus run is: a trace a real framework wrote, the mapping file it is read with, and
the verdict agentsim must give on each anomaly.

Verdicts are ``detect --json``'s: ``violated``, ``holds``, or ``cannot tell`` (its ``kind``
says why: ``undecidable``, ``upper_bound``). A run's ``expect`` names every lattice anomaly
(A1, A2, A3, A6), so a run passes only with the exact set.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

# The memory-behind-tools mapping the runs use: the profile tools read and write one cell per
# key, and the planner and the admin share one tool registry.
PROFILE_MAP = """\
# Which tools read or write shared memory, and how to name the cell from the call's arguments.
[[tool]]
name = "read_profile"
reads = "profile/{key}"

[[tool]]
name = "write_profile"
writes = "profile/{key}"
value = "{value}"

# The planner and the admin resolve tools against one registry.
[[registry]]
agents = ["planner", "admin"]
"""


@dataclass
class Run:
    framework: str
    name: str
    trace: Path
    # anomaly → "violated" | "holds" | "cannot tell"
    expect: dict[str, str]
    mapping: Path | None = None
    what: str = ""
    extra: dict[str, str] = field(default_factory=dict)


def lost_update(ops: list[tuple[str, str, str, str]]) -> bool:
    """Whether some agent wrote a key that another agent wrote after this agent last read it
    (the store's own account of A1, from ``(agent, op, key, value)`` in the order they ran)."""
    for i, (agent, op, key, _) in enumerate(ops):
        if op != "read":
            continue
        later = ops[i + 1:]
        own = next((j for j, o in enumerate(later) if o[0] == agent and o[2] == key), None)
        if own is None or later[own][1] != "write":
            continue
        if any(o[0] != agent and o[1] == "write" and o[2] == key for o in later[:own]):
            return True
    return False


def write_mapping(out: Path) -> Path:
    path = out / "profile_map.toml"
    path.write_text(PROFILE_MAP)
    return path
