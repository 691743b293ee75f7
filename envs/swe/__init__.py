"""The SWE family: fix a bug in a real Python repository with bash and an editor.

(Work in progress: the family is being built for issue 18.)
"""
