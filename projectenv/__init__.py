"""The project's own environment: its interpreter and dependencies, built by
a setup phase inside the sandbox, cached by the content of its manifests,
and attached to every test run (``projectenv.setup``, ``projectenv.attach``)."""
