import os
from pathlib import Path
from typing import Any, Dict, List, Literal, Optional, Tuple, Union, final

__version__: str

Outcome = Literal["win", "draw", "loss"]

class TablebaseError(Exception): ...
class TablebaseNotFoundError(TablebaseError, FileNotFoundError): ...
class PositionError(TablebaseError, ValueError): ...
class NotStoredError(TablebaseError, LookupError): ...

@final
class Probe:
    """What a probe says about one position, for the side to move."""

    @property
    def position(self) -> str:
        """The position in the game's notation, as the game writes it."""
    @property
    def partition(self) -> int:
        """Its partition in the perfect hash."""
    @property
    def rank(self) -> int:
        """Its index inside the partition."""
    @property
    def outcome(self) -> Outcome:
        """For puzzles: "win" when the goal is reachable, "draw" when not."""
    @property
    def distance(self) -> Optional[int]:
        """Plies to the end under best play (puzzles: moves to the goal);
        None for draws and in tablebases that store win/draw/loss only."""
    @property
    def best_moves(self) -> List[str]:
        """The moves that keep the optimal value: the quickest win, the
        slowest loss, a draw; empty when the game is over."""
    @property
    def moves(self) -> List[Tuple[str, Outcome, Optional[int]]]:
        """Every legal move with the outcome and distance it leads to, for
        the side that makes it."""
    def __eq__(self, other: object) -> bool: ...
    def __hash__(self) -> int: ...

@final
class Tablebase:
    """An open tablebase directory; data files are opened when first probed."""

    def __init__(self, path: Union[str, "os.PathLike[str]"]) -> None:
        """Raises TablebaseNotFoundError without a manifest, TablebaseError
        for a damaged one or a game this build does not know."""
    @property
    def path(self) -> Path: ...
    @property
    def game(self) -> str:
        """The game's registry name, as `tbforge games` lists it."""
    @property
    def params(self) -> Dict[str, str]: ...
    @property
    def kind(self) -> Literal["two-player", "puzzle"]: ...
    def probe(self, position: str) -> Probe:
        """Raises PositionError for text that names no legal position,
        NotStoredError for one the tablebase does not hold, TablebaseError
        for damaged files."""
    def probe_rank(self, partition: int, rank: int) -> Probe:
        """probe() of the position at that index of the perfect hash;
        NotStoredError where no position is stored."""
    def info(self) -> Dict[str, Any]:
        """The manifest, as json.load reads manifest.json."""
