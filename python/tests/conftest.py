"""Fixtures: the tbforge command line and small tablebases built with it.

The expected values come from the command line (`tbforge probe --json`,
`tbforge info --json`), never from numbers written here: the bindings must
say what the CLI says.
"""

import json
import os
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Dict, Iterable, List, Tuple

import pytest

REPO = Path(__file__).resolve().parents[2]

# Small instances of each kind of game: two-player with all positions stored,
# a layered game (only reachable positions stored), a puzzle, and one with
# several tiny partitions. Every position of each is compared with the CLI.
GAMES: Dict[str, List[str]] = {
    "tictactoe": [],
    "connect4": ["width=4", "height=2"],
    "pancake": ["n=5"],
    "nim": ["heaps=1,2,3"],
}


class Cli:
    """Runs the tbforge binary."""

    def __init__(self, binary: Path) -> None:
        self.binary = binary

    def run(self, *args: str) -> "subprocess.CompletedProcess[str]":
        return subprocess.run(
            [str(self.binary), *args], capture_output=True, text=True, check=False
        )

    def json(self, *args: str) -> Any:
        done = self.run(*args, "--json")
        if done.returncode != 0:
            raise AssertionError(f"tbforge {' '.join(args)} failed: {done.stderr.strip()}")
        return json.loads(done.stdout)

    def error(self, *args: str) -> str:
        """The one-line message of a command expected to fail."""
        done = self.run(*args)
        assert done.returncode != 0, f"tbforge {' '.join(args)} succeeded"
        message = done.stderr.strip()
        prefix = "tbforge: error: "
        assert message.startswith(prefix), message
        return message[len(prefix):]

    def probe_all(self, tb_dir: Path, positions: Iterable[str]) -> List[Dict[str, Any]]:
        # One process per position: threads keep both of CI's cores busy.
        def one(position: str) -> Dict[str, Any]:
            return self.json("probe", str(tb_dir), position)

        with ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2)) as pool:
            return list(pool.map(one, positions))


@pytest.fixture(scope="session")
def cli() -> Cli:
    default = REPO / "target" / "release" / "tbforge"
    binary = Path(os.environ.get("TBFORGE_BIN", default))
    if not binary.is_file():
        pytest.fail(
            f"tbforge binary {binary} not found: run `cargo build --release` "
            "or set TBFORGE_BIN to the binary",
            pytrace=False,
        )
    return Cli(binary)


@pytest.fixture(scope="session")
def built(cli: Cli, tmp_path_factory: pytest.TempPathFactory) -> Dict[str, Path]:
    """Each game of GAMES built once, by name."""
    root = tmp_path_factory.mktemp("tablebases")
    dirs = {}
    for game, params in GAMES.items():
        out = root / game
        args = ["build", game, "--out", str(out), "--backend", "cpu", "--threads", "2"]
        for p in params:
            args += ["--param", p]
        done = cli.run(*args)
        assert done.returncode == 0, f"tbforge {' '.join(args)}: {done.stderr.strip()}"
        dirs[game] = out
    return dirs


@pytest.fixture(scope="session")
def ttt_dir(built: Dict[str, Path]) -> Path:
    return built["tictactoe"]


def expected_probe(report: Dict[str, Any]) -> Tuple[Any, ...]:
    """The CLI's probe report in the order of `probe_fields`."""
    return (
        report["position"],
        report["partition"],
        report["rank"],
        report["outcome"],
        report["distance"],
        report["best_moves"],
        [(m["move"], m["outcome"], m["distance"]) for m in report["moves"]],
    )


def probe_fields(p: Any) -> Tuple[Any, ...]:
    return (p.position, p.partition, p.rank, p.outcome, p.distance, p.best_moves, p.moves)
