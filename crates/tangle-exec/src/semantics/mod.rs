//! Pure functions giving each instruction its exact result (being written).
