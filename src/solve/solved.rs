//! Writing a game solved in memory: every partition's file, then the manifest.

use super::SolvedGame;
use crate::format::{
    file_name, write_manifest, write_partition_file, FileEntry, Manifest, ValueEncoding,
};
use crate::game::Game;
use std::path::Path;

/// Writes every partition of `solved` into `dir` (created if missing) and
/// then manifest.json, which is written last: a directory whose manifest
/// exists has all its files.
pub fn write_solved<G: Game>(
    dir: &Path,
    game: &G,
    solved: &SolvedGame,
    encoding: ValueEncoding,
) -> crate::Result<Manifest> {
    std::fs::create_dir_all(dir).map_err(|e| crate::Error::io("creating directory", dir, e))?;
    let info = game.info();
    let mut files = Vec::with_capacity(solved.layout.len());
    for (slot, &p) in solved.layout.order().iter().enumerate() {
        let values = &solved.values[slot];
        let name = game.partition_name(p);
        let entry_name = file_name(&name);
        let summary = write_partition_file(&dir.join(&entry_name), &info, p, encoding, values)?;
        let reachable = solved.reachable.as_ref().map(|r| r.count(slot));
        files.push(FileEntry::new(
            info.kind,
            p,
            &name,
            values,
            &game.weights(p),
            reachable,
            summary,
        ));
    }
    let layers = solved.reachable.as_ref().map(|r| r.layers.clone());
    let manifest = Manifest::new(&info, encoding, files, layers);
    write_manifest(dir, &manifest)?;
    Ok(manifest)
}
