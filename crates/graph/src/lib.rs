//! Graph algorithms shared by topology, similarity and pattern analyses (to be implemented).
