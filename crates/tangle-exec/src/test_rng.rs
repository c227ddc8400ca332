//! The unit tests' random numbers: one xorshift step, so that a test's seed gives the same
//! inputs on every run and machine.

/// The next value of the xorshift generator whose state is `x` (never 0).
pub(crate) fn xorshift(x: &mut u64) -> u64 {
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    *x
}
