//! tangle facade.
