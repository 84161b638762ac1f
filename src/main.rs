//! The `tbforge` command line.
fn main() {}
