"""The study's user-facing error."""


class StudyError(Exception):
    """Bad input or a part that cannot run here: printed as one line, exit status 2.

    Raise it with a message that names the argument (or file, or part) and what is
    accepted; never let a traceback reach the user for something they can fix.
    """
