//! Network what-if: multi-configuration replay and bound classification (seed 004). To be implemented.
