"""The study's user-facing errors."""


class StudyError(Exception):
    """Bad input or a part that cannot run here: printed as one line, exit status 2.

    Raise it with a message that names the argument (or file, or part) and what is
    accepted; never let a traceback reach the user for something they can fix.
    """


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP, raised in the main thread (core/procutil.py,
    install_signal_handlers) so that every clean-up written for Ctrl-C runs for them too;
    exit status 128 + the signal."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum
