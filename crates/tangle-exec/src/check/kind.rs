//! The sanitizer's finding kinds by name: what `--allow KIND,KIND` turns off and `--deny`
//! promotes, what a report groups by (one summary per instruction and kind), each kind's
//! severity and the spec sentence it rests on, and `docs/sanitizer.md`'s table of kinds.
//!
//! # Severity
//! SPIR-V 2.2.6 "Validity and Defined Behavior" separates rules that say "behavior is
//! undefined" (or that something "must" hold while the shader runs) from those that only leave
//! a *value* undefined. A kind of the first sort is an [`Severity::Error`]: the run fails. A
//! kind of the second sort (an undefined or implementation-defined value, such as the result
//! of `OpUndef`, `sqrt(-1)` or a shift by 32) is a [`Severity::Warning`]: reported, but every
//! conformant driver may run the shader, so the run passes unless `--deny` names the kind.
//! A kind has one severity: where one instruction's cases differ (an undefined value used as
//! a branch condition or as an index), they are separate kinds.

use std::fmt;

/// Whether a finding fails the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Severity {
    /// Undefined behaviour: the run fails (exit 1).
    Error,
    /// An undefined or implementation-defined value: reported, the run passes (exit 0).
    Warning,
}

impl Severity {
    /// `error` or `warning`, as the reports print it.
    pub fn name(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A kind of finding, named as `--allow` and the reports spell it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    /// A load, store or atomic outside its buffer or variable.
    OutOfBounds,
    /// A load, store or atomic outside its buffer under a robustness feature, where the
    /// outcome is the implementation's choice (a warning, [`crate::check::robust`]).
    RobustAccess,
    /// A pointer into no memory.
    BadPointer,
    /// Integer division or remainder by zero, or of the minimum value by -1.
    Division,
    /// A shift by at least the operand's width (a warning).
    Shift,
    /// A group instruction's undefined behaviour: an operand that must be dynamically uniform
    /// and is not, a bad ClusterSize.
    Group,
    /// A group instruction's undefined result: a read of an inactive invocation, an empty
    /// ballot (a warning).
    GroupValue,
    /// A saturating accumulation's intermediate overflow: an AccSat dot product, a saturating
    /// cooperative-matrix MulAdd (a warning).
    DotOverflow,
    /// A cooperative-matrix rule broken.
    Coopmat,
    /// A data race.
    Race,
    /// An `OpControlBarrier` not executed by the whole scope instance.
    Barrier,
    /// An undefined value deciding a branch or stored where others see it (a warning).
    Uninit,
    /// An undefined value used as an address or index.
    UninitIndex,
    /// A dynamic vector index out of range.
    Index,
    /// An access through a descriptor-array element (buffer, image or sampler) that has
    /// nothing bound, or through a null descriptor without `nullDescriptor`.
    Descriptor,
    /// An image instruction on a format without the feature it needs (atomics, linear
    /// filtering).
    Image,
    /// An integer written to an image format that cannot hold it, or an image read outside
    /// the image without `robustImageAccess2` (a warning: the value is undefined).
    ImageValue,
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
    /// Every kind, in the order of `docs/sanitizer.md`'s table.
    pub const ALL: [Kind; 21] = [
        Kind::OutOfBounds,
        Kind::RobustAccess,
        Kind::BadPointer,
        Kind::Division,
        Kind::Shift,
        Kind::Group,
        Kind::GroupValue,
        Kind::DotOverflow,
        Kind::Coopmat,
        Kind::Race,
        Kind::Barrier,
        Kind::Uninit,
        Kind::UninitIndex,
        Kind::Index,
        Kind::Descriptor,
        Kind::Image,
        Kind::ImageValue,
        Kind::Wrap,
        Kind::Remainder,
        Kind::Unreachable,
        Kind::Domain,
    ];

    /// The name `--allow` and `--deny` take.
    pub fn name(self) -> &'static str {
        match self {
            Kind::OutOfBounds => "out-of-bounds",
            Kind::RobustAccess => "robust-access",
            Kind::BadPointer => "bad-pointer",
            Kind::Division => "division",
            Kind::Shift => "shift",
            Kind::Group => "group",
            Kind::GroupValue => "group-value",
            Kind::DotOverflow => "dot-overflow",
            Kind::Coopmat => "coopmat",
            Kind::Race => "race",
            Kind::Barrier => "barrier",
            Kind::Uninit => "uninit",
            Kind::UninitIndex => "uninit-index",
            Kind::Index => "index",
            Kind::Descriptor => "descriptor",
            Kind::Image => "image",
            Kind::ImageValue => "image-value",
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

    /// The severity of the kind's findings unless `--deny` names it: an error where the spec
    /// sentence ([`Kind::spec`]) makes the behaviour undefined (or states a rule the running
    /// shader must keep), a warning where it leaves only a value undefined.
    pub fn severity(self) -> Severity {
        match self {
            Kind::Shift
            | Kind::RobustAccess
            | Kind::GroupValue
            | Kind::DotOverflow
            | Kind::Uninit
            | Kind::ImageValue
            | Kind::Domain
            | Kind::Remainder => Severity::Warning,
            Kind::OutOfBounds
            | Kind::BadPointer
            | Kind::Division
            | Kind::Group
            | Kind::Coopmat
            | Kind::Race
            | Kind::Barrier
            | Kind::UninitIndex
            | Kind::Index
            | Kind::Descriptor
            | Kind::Image
            | Kind::Unreachable
            | Kind::Wrap => Severity::Error,
        }
    }

    /// The spec sentence the kind rests on, which decides its [`Kind::severity`].
    pub fn spec(self) -> &'static str {
        match self {
            Kind::OutOfBounds => {
                "Vulkan robustBufferAccess: \"If not enabled, applications must not perform out of bounds accesses\""
            }
            Kind::RobustAccess => {
                "Vulkan robustBufferAccess: \"Out-of-bounds buffer loads will return any of the following values: Values from anywhere within the memory range(s) bound to the buffer ... Zero values\"; writes \"may modify values within the memory range(s) bound to the buffer\"; out-of-bounds atomics \"return an undefined value\" (robustBufferAccess2 likewise)"
            }
            Kind::BadPointer => {
                "Vulkan PhysicalStorageBuffer addressing: an access must be through an address inside a buffer"
            }
            Kind::Division => {
                "SPIR-V OpUDiv/OpSDiv/OpUMod/OpSRem/OpSMod: \"Behavior is undefined if Operand 2 is 0\" (or -1 with the minimum value)"
            }
            Kind::Shift => {
                "SPIR-V OpShiftLeftLogical/OpShiftRightLogical/OpShiftRightArithmetic: \"The resulting value is undefined if Shift is greater than or equal to the bit width of the components of Base\""
            }
            Kind::Group => {
                "SPIR-V Non-Uniform Instructions: \"Id must be dynamically uniform within Execution\" (Delta, Index likewise); \"Behavior is undefined unless ClusterSize is at least 1 and a power of 2\""
            }
            Kind::GroupValue => {
                "SPIR-V Non-Uniform Instructions: \"The resulting value is undefined if Id is an inactive invocation, or is greater than or equal to the size of the group\"; BallotFindLSB/MSB: \"If none of the considered bits is set to 1, the resulting value is undefined\""
            }
            Kind::DotOverflow => {
                "SPV_KHR_integer_dot_product AccSat, SPV_KHR_cooperative_matrix SaturatingAccumulation: on an intermediate overflow \"the result of the instruction is undefined\""
            }
            Kind::Coopmat => {
                "SPV_KHR_cooperative_matrix: \"all the invocations in the Scope instance are active or none of them are\"; operands \"must be dynamically uniform\"; Stride \"must be greater than 0\" (store)"
            }
            Kind::Race => {
                "Vulkan Memory Model, Data Race: \"Applications must ensure that no data races occur during the execution of their application\""
            }
            Kind::Barrier => {
                "SPIR-V OpControlBarrier: \"behavior is undefined unless all invocations within Execution execute the same dynamic instance\""
            }
            Kind::Uninit => {
                "SPIR-V OpUndef: \"Make an intermediate object whose value is undefined\"; OpVariable: \"If not present, the variable's value is undefined\" (a value: any path it selects is one a driver may take)"
            }
            Kind::UninitIndex => {
                "an undefined value may be any value, and an index outside its object is undefined behavior: OpVectorExtractDynamic \"Behavior is undefined if Index's value is less than zero or greater than or equal to the number of components\"; Vulkan: \"applications must not perform out of bounds accesses\""
            }
            Kind::Index => {
                "SPIR-V OpVectorExtractDynamic: \"Behavior is undefined if Index's value is less than zero or greater than or equal to the number of components\"; Vulkan: \"applications must not perform out of bounds accesses\""
            }
            Kind::Descriptor => {
                "Vulkan Descriptor Set Binding: descriptors a shader uses \"must be valid\"; \"If the nullDescriptor feature is enabled, a null descriptor is also considered valid\""
            }
            Kind::Image => {
                "Vulkan: an image view used with atomics (linear filtering) \"must\" have VK_FORMAT_FEATURE_STORAGE_IMAGE_ATOMIC_BIT (VK_FORMAT_FEATURE_SAMPLED_IMAGE_FILTER_LINEAR_BIT)"
            }
            Kind::ImageValue => {
                "Vulkan Format Conversion: \"The converted value of any integer that cannot be represented in the target format is undefined\"; Texel Replacement: \"The value returned by a read of an invalid texel is undefined\""
            }
            Kind::Domain => "GLSL.std.450: \"Result is undefined if ...\" for each instruction",
            Kind::Unreachable => {
                "SPIR-V OpUnreachable: \"Behavior is undefined if this instruction is executed\""
            }
            Kind::Wrap => {
                "SPV_KHR_no_integer_wrap_decoration: \"If the instruction decorated with NoSignedWrap does overflow or underflow, the behavior is undefined\" (NoUnsignedWrap likewise)"
            }
            Kind::Remainder => {
                "Vulkan Precision and Operation of SPIR-V Instructions: \"For the OpSRem and OpSMod instructions, if either operand is negative the result is undefined\""
            }
        }
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

/// A set of kinds: the ones a run allows (does not look for, `--allow`) or denies (fails for
/// though they are warnings, `--deny`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct KindSet(u32);

impl KindSet {
    /// Every kind (`all`).
    pub fn all() -> Self {
        let mut set = KindSet::default();
        for k in Kind::ALL {
            set.insert(k);
        }
        set
    }

    /// Whether `k` is in the set.
    pub fn contains(self, k: Kind) -> bool {
        self.0 & k.bit() != 0
    }

    /// Adds `k`.
    pub fn insert(&mut self, k: Kind) {
        self.0 |= k.bit();
    }

    /// The kinds of this set that are not in `other`.
    pub fn without(self, other: KindSet) -> KindSet {
        KindSet(self.0 & !other.0)
    }

    /// The kinds in both sets, in the order of `docs/sanitizer.md`'s table.
    pub fn common(self, other: KindSet) -> Vec<Kind> {
        Kind::ALL
            .into_iter()
            .filter(|&k| self.contains(k) && other.contains(k))
            .collect()
    }
}

impl std::str::FromStr for KindSet {
    type Err = String;

    /// A comma-separated list of kind names (`race,uninit`), or `all`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let mut set = KindSet::default();
        for name in s.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            if name == "all" {
                set = KindSet::all();
                continue;
            }
            let k = Kind::by_name(name).ok_or_else(|| {
                let known: Vec<&str> = Kind::ALL.iter().map(|k| k.name()).collect();
                format!(
                    "unknown finding kind '{name}' (known: {}, or all)",
                    known.join(", ")
                )
            })?;
            set.insert(k);
        }
        Ok(set)
    }
}

/// The kinds an allow list turns off and those a deny list fails the run for, from the two
/// lists as `--allow`/`--deny` (or the driver's `TANGLE_ALLOW`/`TANGLE_DENY`) spell them;
/// `names` are the two options' names for messages. `all` in the deny list denies every kind
/// the allow list leaves on; a kind named by both is an error (off and failing at once means
/// nothing).
pub fn allow_and_deny(
    allow: Option<&str>,
    deny: Option<&str>,
    names: (&str, &str),
) -> Result<(KindSet, KindSet), String> {
    let parse = |flag: &str, list: Option<&str>| -> Result<KindSet, String> {
        list.map_or(Ok(KindSet::default()), |l| {
            l.parse().map_err(|e| format!("{flag} {l}: {e}"))
        })
    };
    let allowed = parse(names.0, allow)?;
    let denied = parse(names.1, deny)?;
    if deny.is_some_and(|l| l.split(',').any(|n| n.trim() == "all")) {
        return Ok((allowed, denied.without(allowed)));
    }
    let both = allowed.common(denied);
    if !both.is_empty() {
        let list: Vec<&str> = both.iter().map(|k| k.name()).collect();
        return Err(format!(
            "{} and {} both name {}: a kind is either not looked for or fails the run",
            names.0,
            names.1,
            list.join(", ")
        ));
    }
    Ok((allowed, denied))
}

/// The severity of a finding of `kind` in a run that denies `deny`: an error if the kind is
/// one, or `--deny` names it.
pub fn severity(kind: Kind, deny: KindSet) -> Severity {
    if deny.contains(kind) {
        Severity::Error
    } else {
        kind.severity()
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
        let all: KindSet = "all".parse().unwrap_or_default();
        assert!(Kind::ALL.iter().all(|&k| all.contains(k)));
        assert_eq!(all.without(set).common(set), Vec::<Kind>::new());
        assert_eq!(all.common(set), vec![Kind::Race, Kind::Uninit]);
    }

    /// `--deny` makes a warning an error; an error stays one.
    #[test]
    fn deny_promotes_warnings() {
        let deny: KindSet = "uninit".parse().unwrap_or_default();
        assert_eq!(
            severity(Kind::Uninit, KindSet::default()),
            Severity::Warning
        );
        assert_eq!(severity(Kind::Uninit, deny), Severity::Error);
        assert_eq!(severity(Kind::Domain, deny), Severity::Warning);
        assert_eq!(severity(Kind::Race, deny), Severity::Error);
        assert_eq!(
            severity(Kind::UninitIndex, KindSet::default()),
            Severity::Error
        );
    }

    /// A warning's spec sentence leaves a value undefined; an error's makes the behaviour
    /// undefined or states a rule ("must") the running shader breaks.
    #[test]
    fn each_severity_matches_its_sentence() {
        for k in Kind::ALL {
            let s = k.spec();
            let behaviour = s.contains("ehavior is undefined") || s.contains("must");
            let value = s.contains("value is undefined")
                || s.contains("result is undefined")
                || s.contains("is undefined\"")
                || s.contains("undefined if")
                // robustBufferAccess: a value among those it lists, the implementation's pick.
                || s.contains("any of the following values");
            match k.severity() {
                Severity::Error => assert!(behaviour, "{k}: {s}"),
                Severity::Warning => assert!(value && !behaviour, "{k}: {s}"),
            }
        }
    }

    /// `docs/sanitizer.md` documents every kind, in its table of findings, with its severity.
    #[test]
    fn the_docs_document_every_kind() {
        let doc = include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../docs/sanitizer.md"
        ));
        for k in Kind::ALL {
            let row = format!("| `{}` | {} |", k.name(), k.severity());
            assert!(doc.contains(&row), "docs/sanitizer.md lacks the row {row}");
        }
    }
}
