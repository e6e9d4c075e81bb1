"""The exceptions of tpusim: one class per kind of failure (base/errors.h, ErrorKind).

Every message is the one the CLI prints after `tpusim COMMAND:`. Each class is a
tpusim.Error, so `except tpusim.Error` catches them all; InvalidArgumentError is also a
ValueError, as Python code expects of a bad argument.
"""


class Error(Exception):
    """A failure tpusim reports: bad arguments, or a run that did not complete."""

    kind = "error"

    def __init__(self, message, report=None):
        super().__init__(message)
        # The run's report (a tpusim.Result) when the failure happened during a run.
        self.report = report


class InvalidArgumentError(Error, ValueError):
    kind = "invalid argument"


class DeadlockError(Error):
    kind = "deadlock"


class SemaphoreNotZeroError(Error):
    kind = "semaphore not zero at exit"


class SemaphoreMisuseError(Error):
    kind = "semaphore misuse"


class RaceError(Error):
    kind = "race"


class KernelMisuseError(Error):
    kind = "kernel misuse"


class OutOfBoundsError(Error):
    kind = "out of bounds"


class CapacityError(Error):
    kind = "over capacity"


class TimeLimitError(Error):
    kind = "time limit"


class InterruptedRunError(Error):
    """A run stopped by its caller's interrupt; run() raises KeyboardInterrupt for Ctrl-C."""

    kind = "interrupted"


_BY_KIND = {
    cls.kind: cls
    for cls in (InvalidArgumentError, DeadlockError, SemaphoreNotZeroError,
                SemaphoreMisuseError, RaceError, KernelMisuseError, OutOfBoundsError,
                CapacityError, TimeLimitError, InterruptedRunError)
}
for _cls in (Error, *_BY_KIND.values()):
    _cls.__module__ = "tpusim"  # tracebacks say tpusim.RaceError, as users spell it


def error_for(kind, message, report=None):
    """The exception of `kind` (ErrorKindName's spelling) carrying `message`."""
    return _BY_KIND.get(kind, Error)(message, report)
