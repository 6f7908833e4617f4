"""The ``skillreg`` command line: the group and its error handling (``app``) and the client's commands.
Nothing else in the package imports it.
"""
