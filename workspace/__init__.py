"""The run's working copy of the repository: preparing it, confining and
applying edits with backups, rolling them back, and the final patch/branch."""
