//! The sanitizer's finding kinds by name: what `--allow KIND,KIND` turns off, what a report
//! groups by (one summary per instruction and kind), and the README's table of kinds.

use std::fmt;

/// A kind of finding, named as `--allow` and the reports spell it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    /// A load, store or atomic outside its buffer or variable.
    OutOfBounds,
    /// A pointer into no memory.
    BadPointer,
    /// Integer division or remainder by zero, or of the minimum value by -1.
    Division,
    /// A shift by at least the operand's width.
    Shift,
    /// A group instruction's undefined case.
    Group,
    /// An AccSat dot product's intermediate overflow.
    DotOverflow,
    /// A cooperative-matrix rule broken.
    Coopmat,
    /// A data race.
    Race,
    /// An `OpControlBarrier` not executed by the whole scope instance.
    Barrier,
    /// An undefined value used.
    Uninit,
    /// A dynamic vector index out of range.
    Index,
    /// An access through a descriptor-array element (buffer, image or sampler) that has
    /// nothing bound.
    Descriptor,
    /// An image instruction's undefined case other than out-of-bounds texels (a value the
    /// format cannot hold, an atomic on a format without atomics).
    Image,
    /// A GLSL.std.450 instruction outside its domain (a warning).
    Domain,
    /// `OpUnreachable` executed.
    Unreachable,
    /// A NoSignedWrap/NoUnsignedWrap operation that wrapped.
    Wrap,
    /// `OpSRem`/`OpSMod` with a negative operand (a warning).
    Remainder,
}

impl Kind {
    /// Every kind, in the README's order.
    pub const ALL: [Kind; 17] = [
        Kind::OutOfBounds,
        Kind::BadPointer,
        Kind::Division,
        Kind::Shift,
        Kind::Group,
        Kind::DotOverflow,
        Kind::Coopmat,
        Kind::Race,
        Kind::Barrier,
        Kind::Uninit,
        Kind::Index,
        Kind::Descriptor,
        Kind::Image,
        Kind::Domain,
        Kind::Unreachable,
        Kind::Wrap,
        Kind::Remainder,
    ];

    /// The name `--allow` takes.
    pub fn name(self) -> &'static str {
        match self {
            Kind::OutOfBounds => "out-of-bounds",
            Kind::BadPointer => "bad-pointer",
            Kind::Division => "division",
            Kind::Shift => "shift",
            Kind::Group => "group",
            Kind::DotOverflow => "dot-overflow",
            Kind::Coopmat => "coopmat",
            Kind::Race => "race",
            Kind::Barrier => "barrier",
            Kind::Uninit => "uninit",
            Kind::Index => "index",
            Kind::Descriptor => "descriptor",
            Kind::Image => "image",
            Kind::Domain => "domain",
            Kind::Unreachable => "unreachable",
            Kind::Wrap => "wrap",
            Kind::Remainder => "negative-remainder",
        }
    }

    /// The kind `--allow` names `name`.
    pub fn by_name(name: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.name() == name)
    }

    /// Whether findings of this kind are warnings: reported, but the run does not fail for
    /// them (a value the spec leaves undefined that most shaders tolerate, such as the NaN of
    /// `sqrt(-1)`).
    pub fn is_warning(self) -> bool {
        matches!(self, Kind::Domain | Kind::Remainder)
    }

    fn bit(self) -> u32 {
        1 << (self as u32)
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A set of kinds (the ones a run allows, that is, does not report).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct KindSet(u32);

impl KindSet {
    /// Whether `k` is in the set.
    pub fn contains(self, k: Kind) -> bool {
        self.0 & k.bit() != 0
    }

    /// Adds `k`.
    pub fn insert(&mut self, k: Kind) {
        self.0 |= k.bit();
    }
}

impl std::str::FromStr for KindSet {
    type Err = String;

    /// A comma-separated list of kind names (`race,uninit`).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let mut set = KindSet::default();
        for name in s.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            let k = Kind::by_name(name).ok_or_else(|| {
                let known: Vec<&str> = Kind::ALL.iter().map(|k| k.name()).collect();
                format!(
                    "unknown finding kind '{name}' (known: {})",
                    known.join(", ")
                )
            })?;
            set.insert(k);
        }
        Ok(set)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_lists_parse() {
        for k in Kind::ALL {
            assert_eq!(Kind::by_name(k.name()), Some(k));
        }
        let set: KindSet = "race, uninit".parse().unwrap_or_default();
        assert!(set.contains(Kind::Race) && set.contains(Kind::Uninit));
        assert!(!set.contains(Kind::Barrier));
        assert!("race,nope".parse::<KindSet>().is_err());
    }

    /// The README documents every kind, in its table of findings.
    #[test]
    fn readme_documents_every_kind() {
        let readme = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../../README.md"));
        for k in Kind::ALL {
            assert!(
                readme.contains(&format!("| `{}` |", k.name())),
                "README lacks the kind {k}"
            );
        }
    }
}
