//! Topology identification with proof and rank-to-coordinate mapping (seed 000 §4.2). To be implemented.
