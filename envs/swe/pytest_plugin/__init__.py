"""The pytest plugin of the SWE family's test runs (``agentgym_swe_plugin``).

This folder is put on ``PYTHONPATH`` inside the sandbox, where the plugin is imported as a
top-level module by the repository's own pytest; it is a package here only so that the wheel
carries it.
"""
