//! External memory: partitions streamed from disk (not built yet).
