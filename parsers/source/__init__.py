"""Source indexers, one per language, shared by every framework of that
language: they find where a test is defined (file and line) and list the
tests a run's output did not name one by one.

``greenloop.parsers.locate.SourceIndex`` is the language-neutral file index
they all read through (project files, bounded reads, paths as tools print them).
"""
