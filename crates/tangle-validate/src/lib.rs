//! tangle-validate (being built).
