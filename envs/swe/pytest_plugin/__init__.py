"""The pytest plugins of the SWE family's test runs: ``agentgym_swe_plugin`` (node ids in the
JUnit report, the call map) in every run, ``agentgym_swe_guard`` in grading runs only.

This folder is put on ``PYTHONPATH`` inside the sandbox, where the repository's own pytest
imports the plugins as top-level modules (``-p``); it is a package here only so that the wheel
carries them.
"""
