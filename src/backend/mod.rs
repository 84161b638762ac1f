//! Expansion backends: CPU (rayon) and CUDA (not built yet).
