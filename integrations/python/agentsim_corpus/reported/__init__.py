"""Bugs people reported in agent frameworks' trackers, reproduced on the real framework at the
version that had the bug and at the version that fixed it (docs/reported.md)."""
