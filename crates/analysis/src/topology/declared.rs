//! The topology the program declared (MPI_Cart_create), against the one observed.
