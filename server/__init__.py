"""Temporal plumbing: the client connection and the embedded dev server."""
