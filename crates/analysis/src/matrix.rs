//! Rank-to-rank communication matrix and low-volume filtering (seed 000 §4.1). To be implemented.
