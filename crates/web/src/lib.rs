//! The tracelogic web application (to be implemented).
