"""The one user-facing error class. Anything else escaping the CLI is a bug (traceback only with --debug)."""


class KbError(Exception):
    """An error the user can act on; its message is one line naming the file/URL and the place."""
