//! The probe API engines link: open a tablebase directory, probe positions.
//!
//! FIRST CUT: filled in by the tablebase-files issue.
