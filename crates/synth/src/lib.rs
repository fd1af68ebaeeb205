//! Synthetic SPMD traces of known topologies (to be implemented with the foundation issue).
