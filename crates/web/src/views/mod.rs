//! The views of a loaded trace, one module each. The navigation bar lists [`View::ALL`], so a
//! new view (topology, logical trace, patterns, phases, compare, what-if) is one module and
//! one variant here.

pub mod matrix;
pub mod summary;

/// A view of the loaded trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum View {
    /// What is in the trace.
    Summary,
    /// The rank-to-rank communication matrix.
    Matrix,
}

impl View {
    /// Every view, in navigation order.
    pub const ALL: [View; 2] = [View::Summary, View::Matrix];

    /// Name in the navigation bar.
    pub fn title(self) -> &'static str {
        match self {
            View::Summary => "Summary",
            View::Matrix => "Matrix",
        }
    }

    /// Stable id used in the page (`#view-summary`) and by tests.
    pub fn id(self) -> &'static str {
        match self {
            View::Summary => "summary",
            View::Matrix => "matrix",
        }
    }
}
