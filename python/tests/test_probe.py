"""The bindings against the tbforge command line, position by position."""

import ast
import json
import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Dict, List, Tuple

import pytest
import tbforge
from conftest import GAMES, Cli, expected_probe, probe_fields


def every_index(tb: tbforge.Tablebase) -> List[Tuple[int, int]]:
    return [(f["partition"], r) for f in tb.info()["files"] for r in range(f["index_size"])]


@pytest.mark.parametrize("game", list(GAMES))
def test_every_position_matches_the_cli(game: str, built: Dict[str, Path], cli: Cli) -> None:
    # Walks every index of the perfect hash: each stored one must probe, by
    # index and by its text, exactly as `tbforge probe --json` does on that
    # text (which also checks that the text ranks back to the same index).
    tb = tbforge.Tablebase(built[game])
    probes = []
    not_stored = 0
    for partition, rank in every_index(tb):
        try:
            probes.append(tb.probe_rank(partition, rank))
        except tbforge.NotStoredError as e:
            not_stored += 1
            assert f"partition {partition} rank {rank} " in str(e), str(e)
    totals = tb.info()["totals"]
    assert len(probes) == totals["classes"]
    assert not_stored == totals["index_size"] - totals["classes"]

    reports = cli.probe_all(built[game], [p.position for p in probes])
    for p, report in zip(probes, reports):
        assert probe_fields(p) == expected_probe(report), p.position
        assert tb.probe(p.position) == p


def test_probes_from_threads_agree(ttt_dir: Path) -> None:
    tb = tbforge.Tablebase(ttt_dir)
    stored = []
    for partition, rank in every_index(tb):
        try:
            stored.append(tb.probe_rank(partition, rank))
        except tbforge.NotStoredError:
            pass
    with ThreadPoolExecutor(max_workers=4) as pool:
        again = list(pool.map(lambda p: tb.probe(p.position), stored))
    assert again == stored


def test_info_is_the_manifest(built: Dict[str, Path], cli: Cli) -> None:
    for game, path in built.items():
        tb = tbforge.Tablebase(path)
        info = tb.info()
        assert info == json.loads((path / "manifest.json").read_text())
        summary = cli.json("info", str(path))
        assert (tb.game, tb.params, tb.kind) == (
            summary["game"],
            summary["params"],
            summary["kind"],
        )
        for key, value in info["totals"].items():
            assert summary[key] == value, (game, key)


def test_probe_object(ttt_dir: Path, cli: Cli) -> None:
    tb = tbforge.Tablebase(str(ttt_dir))
    start = cli.json("probe", str(ttt_dir), ".........")
    p = tb.probe(".........")
    with pytest.raises(AttributeError):
        p.outcome = "win"  # type: ignore[misc]
    assert hash(p) == hash(tb.probe_rank(start["partition"], start["rank"]))
    assert repr(p).startswith(f"Probe(position={start['position']!r}, ")
    assert f"outcome={start['outcome']!r}" in repr(p)
    assert repr(tb) == f"Tablebase({str(ttt_dir)!r}, game={start['game']!r})"
    assert tb.path == ttt_dir


def cli_message(cli: Cli, tb_dir: Path, position: str) -> str:
    return cli.error("probe", str(tb_dir), position)


def test_missing_directory(tmp_path: Path, cli: Cli) -> None:
    missing = tmp_path / "nowhere"
    with pytest.raises(tbforge.TablebaseNotFoundError) as e:
        tbforge.Tablebase(missing)
    assert isinstance(e.value, FileNotFoundError)
    assert str(e.value) == cli_message(cli, missing, ".........")
    assert str(missing) in str(e.value)


def test_malformed_position(ttt_dir: Path, cli: Cli) -> None:
    tb = tbforge.Tablebase(ttt_dir)
    for text in ["", "x", "xxxxxxxxx", "x...o...q"]:
        with pytest.raises(tbforge.PositionError) as e:
            tb.probe(text)
        assert isinstance(e.value, ValueError)
        assert str(e.value) == cli_message(cli, ttt_dir, text)
        assert "\n" not in str(e.value)


def test_index_not_stored(ttt_dir: Path) -> None:
    tb = tbforge.Tablebase(ttt_dir)
    files = tb.info()["files"]
    absent = max(f["partition"] for f in files) + 1
    with pytest.raises(tbforge.NotStoredError) as e:
        tb.probe_rank(absent, 0)
    assert isinstance(e.value, LookupError)
    assert f"partition {absent} " in str(e.value)
    last = files[0]
    with pytest.raises(tbforge.NotStoredError, match=str(last["index_size"])):
        tb.probe_rank(last["partition"], last["index_size"])


def corrupt_copy(src: Path, dst: Path) -> Path:
    """A copy of `src` with one byte of its largest data file flipped."""
    shutil.copytree(src, dst)
    victim = max(dst.glob("*.tbf"), key=lambda f: f.stat().st_size)
    data = bytearray(victim.read_bytes())
    data[len(data) // 2] ^= 0xFF
    victim.write_bytes(bytes(data))
    return victim


def test_corrupted_file(ttt_dir: Path, tmp_path: Path, cli: Cli) -> None:
    victim = corrupt_copy(ttt_dir, tmp_path / "damaged")
    tb = tbforge.Tablebase(victim.parent)  # files are read on first probe
    entry = next(f for f in tb.info()["files"] if f["name"] == victim.name)
    # Any index of the damaged partition reaches the damaged file.
    for rank in range(entry["index_size"]):
        try:
            p = tbforge.Tablebase(ttt_dir).probe_rank(entry["partition"], rank)
            break
        except tbforge.NotStoredError:
            continue
    with pytest.raises(tbforge.TablebaseError) as e:
        tb.probe(p.position)
    assert type(e.value) is tbforge.TablebaseError
    assert victim.name in str(e.value)
    assert str(e.value) == cli_message(cli, victim.parent, p.position)


def test_damaged_manifest(ttt_dir: Path, tmp_path: Path, cli: Cli) -> None:
    copy = tmp_path / "damaged"
    shutil.copytree(ttt_dir, copy)
    manifest = copy / "manifest.json"
    manifest.write_text(manifest.read_text()[:-20])
    with pytest.raises(tbforge.TablebaseError) as e:
        tbforge.Tablebase(copy)
    assert type(e.value) is tbforge.TablebaseError
    assert str(e.value) == cli_message(cli, copy, ".........")


def test_stubs_cover_the_module() -> None:
    # The stubs ship beside the package; a name added to one and not the
    # other would mislead type checkers.
    stub = Path(tbforge.__file__).with_name("__init__.pyi")
    assert stub.with_name("py.typed").is_file()
    tree = ast.parse(stub.read_text())
    classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
    stubbed = set(classes) | {
        t.id for n in tree.body if isinstance(n, ast.AnnAssign) for t in [n.target]
        if isinstance(t, ast.Name)
    }
    assert set(tbforge.__all__) <= stubbed
    for name in ("Probe", "Tablebase"):
        members = {n.name for n in classes[name].body if isinstance(n, ast.FunctionDef)}
        public = {m for m in dir(getattr(tbforge, name)) if not m.startswith("_")}
        assert public == members - {"__init__", "__eq__", "__hash__"}, name
