"""Environment families, one subpackage each, imported as ``agentgym.envs.<family>``.

Importing a family registers its ids; it must not import the family's heavy dependencies
(those load when an env is made), so a missing extra breaks only that family.
"""
