//! The shape of the house, checked: no import cycle between the library's
//! top-level modules, the arrows the design allows and no others, and no
//! game named in the generic layers (`solve/`, `pipeline/`, `backend/`, the
//! command line, the HTTP explorer `serve/`), which reach games through the `Game` trait, its kernel
//! interface and the registry alone.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Lines of code without comments (doc links name modules without using them).
fn code(path: &Path) -> String {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .map(|l| l.split(" // ").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The top-level module a file of `src/` belongs to (`None`: lib.rs, main.rs, cli).
fn module_of(src: &Path, file: &Path) -> Option<String> {
    let rel = file.strip_prefix(src).unwrap();
    let first = rel
        .components()
        .next()?
        .as_os_str()
        .to_string_lossy()
        .into_owned();
    let name = first.trim_end_matches(".rs").to_string();
    // `error` is the root's error enum: it wraps every module's error (a
    // format error, a hash error) and every module returns it, as a crate
    // root would; it is the one node allowed both ways.
    (!["lib", "main", "cli", "error"].contains(&name.as_str())).then_some(name)
}

/// Which top-level modules each one uses (`crate::x` paths).
fn arrows() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for f in &files {
        let Some(from) = module_of(&src, f) else {
            continue;
        };
        let text = code(f);
        let entry = graph.entry(from.clone()).or_default();
        for (i, _) in text.match_indices("crate::") {
            let to: String = text[i + 7..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            // `crate::Error`, `crate::Result`: the root's re-exports of `error`.
            let to = match to.as_str() {
                "Error" | "Result" => "error".to_string(),
                "Rank" | "PartitionId" | "Value" | "Outcome" => "value".to_string(),
                "Game" | "GameKind" | "Status" | "GameInfo" => "game".to_string(),
                "Tablebase" => "probe".to_string(),
                _ => to,
            };
            if to != from && !to.is_empty() && to != "error" {
                entry.insert(to);
            }
        }
    }
    graph
}

#[test]
fn no_import_cycle_between_top_level_modules() {
    let graph = arrows();
    // Depth-first search for a back edge, reporting the cycle.
    fn visit(
        n: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        stack: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) {
        if let Some(i) = stack.iter().position(|s| s == n) {
            panic!("import cycle: {} -> {n}", stack[i..].join(" -> "));
        }
        if done.contains(n) {
            return;
        }
        stack.push(n.to_string());
        for m in graph.get(n).into_iter().flatten() {
            visit(m, graph, stack, done);
        }
        stack.pop();
        done.insert(n.to_string());
    }
    let mut done = BTreeSet::new();
    for n in graph.keys() {
        visit(n, &graph, &mut Vec::new(), &mut done);
    }
    assert!(graph.contains_key("solve") && graph.contains_key("game"));
}

#[test]
fn only_the_designed_arrows() {
    let graph = arrows();
    // What each layer must never reach (DESIGN.md: cli -> registry -> games ->
    // the Game trait -> hash; cli -> solve -> pipeline, backend, format;
    // probe -> format and games; format knows no solver; generic layers know
    // the Game trait, never a game or the registry).
    let forbidden: &[(&str, &[&str])] = &[
        (
            "hash",
            &[
                "game", "registry", "solve", "pipeline", "backend", "format", "probe", "verify",
            ],
        ),
        (
            "game",
            &["registry", "solve", "pipeline", "format", "probe", "verify"],
        ),
        (
            "backend",
            &[
                "game", "registry", "solve", "pipeline", "format", "probe", "verify",
            ],
        ),
        ("pipeline", &["registry", "solve", "probe", "verify"]),
        // The team's collectives move bytes: they know no game, solver or file.
        (
            "dist",
            &[
                "game", "registry", "solve", "pipeline", "backend", "format", "probe", "verify",
            ],
        ),
        ("solve", &["registry", "probe", "verify"]),
        // Symbolic search knows BDDs and its own traits: no game, solver or file.
        (
            "bdd",
            &[
                "game", "registry", "solve", "pipeline", "backend", "format", "probe", "verify",
            ],
        ),
        (
            "format",
            &[
                "registry", "solve", "pipeline", "backend", "probe", "verify",
            ],
        ),
        ("probe", &["solve", "pipeline", "backend", "verify", "dist"]),
        (
            "value",
            &[
                "game", "registry", "solve", "pipeline", "backend", "format", "probe",
            ],
        ),
    ];
    let mut wrong = Vec::new();
    // The tools over built tablebases read them (format, registry, games);
    // they neither solve nor are reached by anything but the command line.
    let tools: &[(&str, &[&str])] = &[
        (
            "compare",
            &["solve", "pipeline", "backend", "verify", "zstd_bench"],
        ),
        (
            "zstd_bench",
            &[
                "game", "registry", "solve", "pipeline", "backend", "probe", "verify", "compare",
            ],
        ),
        // The HTTP explorer serves built tablebases through the probe API:
        // it builds, searches and exports nothing.
        (
            "serve",
            &[
                "solve",
                "pipeline",
                "backend",
                "dist",
                "verify",
                "compare",
                "zstd_bench",
                "search",
                "export",
            ],
        ),
    ];
    for (from, to) in graph
        .iter()
        .flat_map(|(f, t)| t.iter().map(move |t| (f, t)))
    {
        if tools.iter().any(|(tool, _)| tool == to) {
            wrong.push(format!("{from} -> {to}"));
        }
    }
    for (from, never) in forbidden.iter().chain(tools) {
        for to in graph.get(*from).into_iter().flatten() {
            if never.contains(&to.as_str()) {
                wrong.push(format!("{from} -> {to}"));
            }
        }
    }
    assert!(wrong.is_empty(), "arrows against the design: {wrong:?}");
}

#[test]
fn generic_layers_name_no_game() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let names: Vec<String> = tbforge::registry::catalog()
        .iter()
        .map(|g| g.name.to_string())
        .collect();
    assert!(names.len() >= 9, "{names:?}");
    let mut files = Vec::new();
    for dir in [
        "solve", "pipeline", "backend", "dist", "cli", "serve", "bdd",
    ] {
        rust_files(&root.join(dir), &mut files);
    }
    // Generic tools over any registry game, each a single file.
    for file in ["verify.rs", "compare.rs", "zstd_bench.rs"] {
        files.push(root.join(file));
    }
    let mut found = Vec::new();
    for f in &files {
        // Comments count too: a generic layer that explains itself by one
        // game has that game's shape in it.
        let text = std::fs::read_to_string(f).unwrap().to_lowercase();
        // Spelled-out forms of the ids ("Connect Four", "tic-tac-toe").
        let squeezed: String = text.chars().filter(|c| c.is_ascii_alphanumeric()).collect();
        let squeezed = squeezed.replace("connectfour", "connect4");
        for name in &names {
            let whole_word = text.match_indices(name.as_str()).any(|(i, _)| {
                let before = text[..i].chars().next_back();
                let after = text[i + name.len()..].chars().next();
                let word =
                    |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
                !word(before) && !word(after)
            });
            // Short ids ("nim") occur inside other words once squeezed.
            let spelled = name.len() >= 6 && squeezed.contains(name.as_str());
            if whole_word || spelled {
                found.push(format!("{}: {name}", f.display()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "games named in generic layers: {found:#?}"
    );
}

#[test]
fn the_command_line_holds_no_unit_test() {
    // Cargo.toml gives the binary `test = false` (its test harness compiled
    // the whole CLI again in every `cargo test`): a unit test there would
    // never run. Its tests run it as a process, from tests/.
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = vec![root.join("src/main.rs")];
    rust_files(&root.join("src/cli"), &mut files);
    let holding: Vec<_> = files
        .iter()
        .filter(|f| code(f).contains("#[test]") || code(f).contains("#[cfg(test)]"))
        .collect();
    assert!(
        holding.is_empty(),
        "unit tests in the binary, which `cargo test` does not run: {holding:?}"
    );
}
