//! tangle-amber (being built).
