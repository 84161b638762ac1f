//! Python bindings of tbforge's probe API: the extension module
//! `tbforge._tbforge`, which `python/tbforge/__init__.py` re-exports beside
//! the exception classes (defined there, in Python, so that they can also
//! derive from `ValueError`, `LookupError` and `FileNotFoundError`).
//!
//! Every probe runs with the GIL released: one `Tablebase` may be probed by
//! many Python threads at once (the Rust `Tablebase` is `Send + Sync`).

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyType;
use pyo3::BoundObject;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use tbforge_core::format::{FormatError, MANIFEST_NAME};
use tbforge_core::probe::Tablebase as CoreTablebase;
use tbforge_core::registry::{open_game, AnyGame, GameVisitor};
use tbforge_core::{Error, Game, GameKind, PartitionId, Rank};

/// Which exception of `tbforge/__init__.py` a failure raises.
#[derive(Clone, Copy)]
enum Class {
    NotFound,
    Position,
    NotStored,
    Other,
}

impl Class {
    fn name(self) -> &'static str {
        match self {
            Class::NotFound => "TablebaseNotFoundError",
            Class::Position => "PositionError",
            Class::NotStored => "NotStoredError",
            Class::Other => "TablebaseError",
        }
    }

    /// The class, imported once per process: the classes live in the Python
    /// package, which has finished importing before any method can run.
    fn get(self, py: Python<'_>) -> PyResult<&Bound<'_, PyType>> {
        static CELLS: [PyOnceLock<Py<PyType>>; 4] = [const { PyOnceLock::new() }; 4];
        CELLS[self as usize].import(py, "tbforge", self.name())
    }
}

/// A failure computed without the GIL, raised once it is held again.
struct Failure(Class, String);

impl Failure {
    fn into_py_err(self, py: Python<'_>) -> PyErr {
        match self.0.get(py) {
            Ok(class) => PyErr::from_type(class.clone(), self.1),
            Err(e) => e,
        }
    }
}

impl From<Error> for Failure {
    fn from(e: Error) -> Failure {
        let class = match &e {
            Error::BadPosition { .. } => Class::Position,
            Error::Format(f) => format_class(f),
            _ => Class::Other,
        };
        Failure(class, e.to_string())
    }
}

impl From<FormatError> for Failure {
    fn from(e: FormatError) -> Failure {
        Failure(format_class(&e), e.to_string())
    }
}

fn format_class(e: &FormatError) -> Class {
    match e {
        FormatError::NotInTablebase { .. }
        | FormatError::RankOutOfRange { .. }
        | FormatError::IllegalIndex { .. }
        | FormatError::NotReached { .. } => Class::NotStored,
        _ => Class::Other,
    }
}

/// What a probe says about one position: the fields of `tbforge probe --json`
/// that describe the position (not the game), with the same words.
#[pyclass(frozen, eq, hash, get_all, module = "tbforge")]
#[derive(PartialEq, Eq, Hash)]
struct Probe {
    position: String,
    partition: u32,
    rank: u64,
    outcome: String,
    distance: Option<u32>,
    best_moves: Vec<String>,
    moves: Vec<(String, String, Option<u32>)>,
}

#[pymethods]
impl Probe {
    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!(
            "Probe(position={}, partition={}, rank={}, outcome={}, distance={}, best_moves={})",
            py_repr(py, &self.position)?,
            self.partition,
            self.rank,
            py_repr(py, &self.outcome)?,
            py_repr(py, self.distance)?,
            py_repr(py, &self.best_moves)?,
        ))
    }
}

/// Python's repr of `value`, so that quoting and escapes are Python's.
fn py_repr<'py, T: IntoPyObject<'py>>(py: Python<'py>, value: T) -> PyResult<String>
where
    PyErr: From<T::Error>,
{
    let object = value.into_pyobject(py)?.into_any().into_bound();
    Ok(object.repr()?.to_string())
}

/// Where a probe starts: text in the game's notation, or a perfect-hash index.
enum Query<'a> {
    Text(&'a str),
    Index(PartitionId, Rank),
}

struct ProbeVisit<'a> {
    tb: &'a CoreTablebase,
    query: Query<'a>,
}

impl GameVisitor for ProbeVisit<'_> {
    type Output = Result<Probe, Failure>;
    fn visit<G: Game>(self, game: &G) -> Self::Output {
        let pos = match self.query {
            Query::Text(text) => game.parse_position(text)?,
            Query::Index(p, r) => {
                // `unrank` is defined only below the partition's size: the
                // stored code's lookup checks the partition and the rank first.
                self.tb.probe_stored(p, r)?;
                game.unrank(p, r).ok_or(FormatError::IllegalIndex {
                    partition: p,
                    rank: r,
                })?
            }
        };
        let result = self.tb.probe(game, &pos)?;
        let (p, r) = game.rank(&pos);
        Ok(Probe {
            position: game.format_position(&pos),
            partition: p.0,
            rank: r.0,
            outcome: result.outcome.to_string(),
            distance: result.distance,
            best_moves: result.best_moves,
            moves: result
                .moves
                .into_iter()
                .map(|m| (m.mv, m.outcome.to_string(), m.distance))
                .collect(),
        })
    }
}

/// Checks once, at open, that the manifest's game is the one the files hold.
struct CheckGame<'a>(&'a CoreTablebase);

impl GameVisitor for CheckGame<'_> {
    type Output = Result<(), FormatError>;
    fn visit<G: Game>(self, game: &G) -> Self::Output {
        self.0.check_game(game)
    }
}

/// An open tablebase directory.
#[pyclass(frozen, module = "tbforge")]
struct Tablebase {
    tb: CoreTablebase,
    game: AnyGame,
}

fn open(dir: &Path) -> Result<Tablebase, Failure> {
    let tb = CoreTablebase::open(dir).map_err(|e| {
        // Only a missing manifest is "not found"; a damaged one is another failure.
        let missing =
            matches!(e, FormatError::Manifest { .. }) && !dir.join(MANIFEST_NAME).exists();
        let failure = Failure::from(e);
        if missing {
            Failure(Class::NotFound, failure.1)
        } else {
            failure
        }
    })?;
    let manifest = tb.manifest();
    let game = open_game(&manifest.game, &manifest.params)?;
    game.visit(CheckGame(&tb))?;
    Ok(Tablebase { tb, game })
}

impl Tablebase {
    fn run(&self, py: Python<'_>, query: Query<'_>) -> PyResult<Probe> {
        py.detach(|| {
            self.game.visit(ProbeVisit {
                tb: &self.tb,
                query,
            })
        })
        .map_err(|f| f.into_py_err(py))
    }
}

#[pymethods]
impl Tablebase {
    #[new]
    fn new(py: Python<'_>, path: PathBuf) -> PyResult<Self> {
        py.detach(|| open(&path)).map_err(|f| f.into_py_err(py))
    }

    /// The directory, as given.
    #[getter]
    fn path(&self) -> PathBuf {
        self.tb.dir().to_path_buf()
    }

    /// The game's registry name (`tictactoe`, `connect4`).
    #[getter]
    fn game(&self) -> String {
        self.tb.manifest().game.clone()
    }

    /// The game's parameters, every key with its value as text.
    #[getter]
    fn params(&self) -> BTreeMap<String, String> {
        self.tb.manifest().params.clone()
    }

    /// `two-player` or `puzzle`, as the manifest writes it.
    #[getter]
    fn kind(&self) -> &'static str {
        match self.tb.kind() {
            GameKind::TwoPlayer => "two-player",
            GameKind::Puzzle => "puzzle",
        }
    }

    /// Value, distance and best moves of `position`, in the game's notation
    /// (what `tbforge probe` accepts).
    fn probe(&self, py: Python<'_>, position: String) -> PyResult<Probe> {
        self.run(py, Query::Text(&position))
    }

    /// [`Tablebase::probe`] of the position at index (`partition`, `rank`) of
    /// the perfect hash, as `Probe.partition` and `Probe.rank` give it.
    fn probe_rank(&self, py: Python<'_>, partition: u32, rank: u64) -> PyResult<Probe> {
        self.run(py, Query::Index(PartitionId(partition), Rank(rank)))
    }

    /// The manifest as `json.load` reads `manifest.json`.
    fn info<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        static LOADS: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
        let text = serde_json::to_string(self.tb.manifest()).map_err(|e| {
            Failure(
                Class::Other,
                format!("cannot write the manifest as JSON: {e}"),
            )
            .into_py_err(py)
        })?;
        LOADS.import(py, "json", "loads")?.call1((text,))
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!(
            "Tablebase({}, game={})",
            py_repr(py, self.tb.dir().to_string_lossy())?,
            py_repr(py, self.tb.manifest().canonical_game())?,
        ))
    }
}

#[pymodule]
fn _tbforge(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Tablebase>()?;
    m.add_class::<Probe>()?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
