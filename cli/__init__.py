"""Greenloop's command line (Typer)."""
