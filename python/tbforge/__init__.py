"""Probe tbforge endgame tablebases: open a directory that ``tbforge build``
wrote, then ask for the value, distance and best moves of positions.

>>> import tbforge
>>> tb = tbforge.Tablebase("tablebases/tictactoe")
>>> p = tb.probe("x...o....")
>>> p.outcome, p.distance, p.best_moves[:2]
('draw', None, ['b1', 'c1'])

A ``Tablebase`` may be shared by threads: probes run without the GIL.
"""


# The exceptions are Python classes, not Rust ones, so that each can also be
# the built-in exception a caller would catch for the same mistake; the
# extension looks them up here by name when it raises.
class TablebaseError(Exception):
    """Anything tbforge reports: a missing, damaged or foreign tablebase, a
    position it cannot parse or does not hold. The message is tbforge's
    one-line error, naming the thing at fault and the fix."""


class TablebaseNotFoundError(TablebaseError, FileNotFoundError):
    """The directory does not exist or holds no ``manifest.json``."""


class PositionError(TablebaseError, ValueError):
    """The text names no legal position of the tablebase's game."""


class NotStoredError(TablebaseError, LookupError):
    """The tablebase stores no value there: an illegal index, a position the
    start does not reach (in tablebases of reachable positions only), a
    partition without a file, or a rank beyond the partition's size."""


from ._tbforge import Probe, Tablebase, __version__  # noqa: E402

__all__ = [
    "NotStoredError",
    "PositionError",
    "Probe",
    "Tablebase",
    "TablebaseError",
    "TablebaseNotFoundError",
    "__version__",
]
