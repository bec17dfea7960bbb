"""Temporal workflows: deterministic orchestration only, all I/O in activities."""
