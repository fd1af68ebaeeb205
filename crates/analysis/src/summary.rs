//! What is in a trace: ranks, calls by kind, bytes, duration, communicators, unmatched messages. To be implemented.
