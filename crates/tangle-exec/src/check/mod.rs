//! Sanitizer hooks. Out-of-bounds accesses are found by [`crate::run::access`] (every access
//! is bounds-checked against its region) and reported as [`crate::Finding::OutOfBounds`]; the
//! step limit and the time limit are [`crate::Trap`]s raised by the interpreter loop. The group
//! instructions' findings are in [`group`], the AccSat dot products' in [`dot`], the
//! cooperative-matrix rules in [`coopmat`].

pub mod arith;
pub mod barrier;
pub mod clock;
pub mod coopmat;
pub mod domain;
pub mod dot;
pub mod group;
pub mod index;
pub mod kind;
pub mod null;
pub mod race;
pub mod robust;
pub mod summary;
pub mod sync;
pub mod touched;
pub mod uninit;
