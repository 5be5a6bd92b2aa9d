"""The one exception a subcommand raises to stop with a message and an exit status."""


class CommandError(Exception):
    """A failure to report as "fitalloc SUBCOMMAND: message" and exit with `code`.

    Exit statuses: 1 a failure (a missing file, a tool that failed), 2 a usage error, 3 a trace
    that cannot be read (fitalloc-replay's own status, passed through)."""

    def __init__(self, message: str, code: int = 1):
        super().__init__(message)
        self.message = message
        self.code = code
