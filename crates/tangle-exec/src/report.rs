//! What a dispatch reports: diagnostics (sanitizer findings) and counters.

use crate::check::kind::Kind;
use crate::check::summary::Summary;
use crate::error::InstRef;
use std::fmt;

/// A sanitizer finding kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Finding {
    /// A load, store or atomic outside its buffer or variable; the load returned 0 and the store
    /// was dropped.
    OutOfBounds {
        /// The memory region (`buffer (set 0, binding 1)`, `workgroup`, ...).
        region: String,
        /// Byte offset of the access (of a composite partly outside: of its first scalar
        /// outside; its padding is no part of the access).
        offset: u64,
        /// Bytes accessed (of such a composite: up to the end of its last scalar outside).
        len: u64,
        /// Size of the region in bytes.
        size: u64,
    },
    /// A load, store or atomic outside its buffer's range under a robustness feature, whose
    /// outcome is the implementation's choice ([`crate::check::robust`]): a warning.
    RobustAccess {
        /// The buffer (`buffer (set 0, binding 1)`).
        region: String,
        /// Byte offset of the access.
        offset: u64,
        /// Bytes accessed.
        len: u64,
        /// Size of the range in bytes.
        size: u64,
        /// What the access did instead, and the spec sentence that allows it.
        what: String,
    },
    /// Integer division or remainder by zero ("behavior is undefined if Operand 2 is 0").
    DivisionByZero,
    /// Signed division or remainder of the most negative value by -1 ("behavior is undefined if
    /// Operand 2 is 0, or if Operand 2 is -1 and Operand 1 is the minimum representable value").
    DivisionOverflow,
    /// A shift amount not below the operand's width (the result is undefined).
    ShiftTooLarge { shift: u64, bits: u32 },
    /// A pointer that points into no known memory (e.g. a bad `OpConvertUToPtr`).
    BadPointer { address: u64 },
    /// An access through an element of a descriptor array (of buffers, images or samplers)
    /// that has nothing bound, or lies past the array's length (Vulkan "Descriptor Set
    /// Binding": descriptors that are used "must be valid"); the load (or sample) returned 0
    /// and the store was dropped.
    UnboundDescriptor {
        /// `DescriptorSet` of the array.
        set: u32,
        /// `Binding` of the array.
        binding: u32,
        /// The element accessed (negative for a negative signed index).
        index: i64,
        /// The array's length (`None`: runtime-sized).
        count: Option<u32>,
    },
    /// An access through a descriptor written with `VK_NULL_HANDLE` while the `nullDescriptor`
    /// feature is off ([`crate::check::null`]): the descriptor is not valid; the load returned
    /// 0 and the store was dropped.
    NullDescriptor {
        /// `DescriptorSet`.
        set: u32,
        /// `Binding`.
        binding: u32,
        /// The array element (`None`: a plain descriptor, element 0).
        element: Option<u32>,
    },
    /// A group instruction's undefined case ([`crate::check::group`]).
    Group(crate::check::group::GroupFinding),
    /// An AccSat dot product's intermediate overflow ([`crate::check::dot`]).
    DotAccSatOverflow(crate::check::dot::DotOverflow),
    /// A cooperative-matrix rule broken ([`crate::check::coopmat`]).
    Coopmat(crate::check::coopmat::CoopmatFinding),
    /// An image instruction's undefined case ([`crate::run::image`]).
    Image(crate::run::image::ImageFinding),
    /// A barrier not executed by its whole scope instance ([`crate::check::barrier`]).
    Barrier(crate::check::barrier::BarrierFinding),
    /// A data race ([`crate::check::race`]).
    Race(crate::check::race::RaceFinding),
    /// An undefined value used ([`crate::check::uninit`]).
    Uninit(crate::check::uninit::UninitFinding),
    /// A dynamic vector index out of range ([`crate::check::index`]).
    IndexOutOfRange {
        /// The index, as a signed value of its width.
        index: i64,
        /// The vector's components.
        count: u32,
    },
    /// An access chain's dynamic index outside the array, vector or matrix it walks
    /// ([`crate::check::index`]).
    ChainIndexOutOfRange {
        /// The index (signed when its type is).
        index: i64,
        /// The elements there are.
        count: u32,
    },
    /// A GLSL.std.450 instruction outside its domain ([`crate::check::domain`]).
    Domain(crate::check::domain::DomainFinding),
    /// An operation decorated NoSignedWrap (`signed`) or NoUnsignedWrap wrapped: "If the
    /// instruction decorated with NoSignedWrap does overflow or underflow, the behavior is
    /// undefined" (operands `a`, `b` of width `bits`; a negation is 0 - b).
    Wrap {
        signed: bool,
        bits: u32,
        a: u64,
        b: u64,
    },
    /// `OpSRem`/`OpSMod` with a negative operand: Vulkan leaves the result undefined (a
    /// warning).
    NegativeRemainder { a: i64, b: i64 },
    /// `OpUnreachable` executed ("Behavior is undefined if this instruction is executed"); the
    /// invocation ends.
    Unreachable,
}

impl Finding {
    /// Whether this is a memory error (out of bounds, bad pointer) rather than a value the
    /// specs leave undefined; memory errors are reported even with the checks off.
    pub fn is_memory_error(&self) -> bool {
        matches!(
            self,
            Finding::OutOfBounds { .. }
                | Finding::BadPointer { .. }
                | Finding::UnboundDescriptor { .. }
                | Finding::NullDescriptor { .. }
        ) || matches!(self, Finding::Image(i) if i.is_memory_error())
    }

    /// Whether it is reported even with the checks off (`--no-checks`): memory errors, and
    /// `OpUnreachable`, after which the invocation cannot go on.
    pub fn always_reported(&self) -> bool {
        self.is_memory_error() || *self == Finding::Unreachable
    }

    /// The finding's kind, as `--allow` names it; it decides the severity
    /// ([`Kind::severity`]).
    pub fn kind(&self) -> Kind {
        match self {
            Finding::OutOfBounds { .. } => Kind::OutOfBounds,
            Finding::RobustAccess { .. } => Kind::RobustAccess,
            Finding::BadPointer { .. } => Kind::BadPointer,
            Finding::DivisionByZero | Finding::DivisionOverflow => Kind::Division,
            Finding::ShiftTooLarge { .. } => Kind::Shift,
            Finding::Group(g) if g.is_undefined_value() => Kind::GroupValue,
            Finding::Group(_) => Kind::Group,
            Finding::DotAccSatOverflow(_) => Kind::DotOverflow,
            // A saturating accumulation's overflow, like an AccSat dot product's: an undefined
            // result, not undefined behaviour.
            Finding::Coopmat(crate::check::coopmat::CoopmatFinding::SaturatingOverflow {
                ..
            }) => Kind::DotOverflow,
            Finding::Coopmat(_) => Kind::Coopmat,
            Finding::Barrier(_) => Kind::Barrier,
            Finding::Race(_) => Kind::Race,
            Finding::Uninit(u) if u.used_as.selects_memory() => Kind::UninitIndex,
            Finding::Uninit(_) => Kind::Uninit,
            Finding::IndexOutOfRange { .. } | Finding::ChainIndexOutOfRange { .. } => Kind::Index,
            Finding::UnboundDescriptor { .. } | Finding::NullDescriptor { .. } => Kind::Descriptor,
            // No sampler where an array element has nothing bound: like an unbound image.
            Finding::Image(crate::run::image::ImageFinding::NoSampler { .. }) => Kind::BadPointer,
            // Texels outside the image are out-of-bounds accesses like a buffer's.
            Finding::Image(i) if i.is_memory_error() => Kind::OutOfBounds,
            Finding::Image(
                crate::run::image::ImageFinding::NotRepresentable { .. }
                | crate::run::image::ImageFinding::InvalidTexel { .. },
            ) => Kind::ImageValue,
            Finding::Image(_) => Kind::Image,
            Finding::Domain(_) => Kind::Domain,
            Finding::Unreachable => Kind::Unreachable,
            Finding::Wrap { .. } => Kind::Wrap,
            Finding::NegativeRemainder { .. } => Kind::Remainder,
        }
    }
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Finding::OutOfBounds {
                region,
                offset,
                len,
                size,
            } => {
                write!(f, "out-of-bounds access of {len} bytes at byte offset {offset} of {region} ({size} bytes)")
            }
            Finding::RobustAccess {
                region,
                offset,
                len,
                size,
                what,
            } => write!(
                f,
                "{what}: {len} bytes at byte offset {offset} of {region} ({size} bytes)"
            ),
            Finding::DivisionByZero => write!(f, "integer division by zero"),
            Finding::DivisionOverflow => write!(f, "signed division of the minimum value by -1"),
            Finding::ShiftTooLarge { shift, bits } => {
                write!(f, "shift by {shift} of a {bits}-bit value")
            }
            Finding::BadPointer { address } => {
                write!(f, "pointer {address:#x} points into no memory")
            }
            Finding::UnboundDescriptor {
                set,
                binding,
                index,
                count,
            } => match count {
                Some(n) if *index < 0 || *index >= i64::from(*n) => write!(
                    f,
                    "access through element {index} of the descriptor array at set {set}, binding {binding}, which has {n} elements"
                ),
                _ => write!(
                    f,
                    "access through element {index} of the descriptor array at set {set}, binding {binding}, which has nothing bound"
                ),
            },
            Finding::NullDescriptor {
                set,
                binding,
                element,
            } => {
                let at = match element {
                    Some(e) => format!("set {set}, binding {binding}, array element {e}"),
                    None => format!("set {set}, binding {binding}"),
                };
                write!(
                    f,
                    "access through the null descriptor at {at} without the nullDescriptor feature (only with it is a null descriptor valid to access)"
                )
            }
            Finding::Group(g) => write!(f, "{g}"),
            Finding::DotAccSatOverflow(d) => write!(f, "{d}"),
            Finding::Coopmat(c) => write!(f, "{c}"),
            Finding::Image(i) => write!(f, "{i}"),
            Finding::Barrier(b) => write!(f, "{b}"),
            Finding::Race(r) => write!(f, "{r}"),
            Finding::Uninit(u) => write!(f, "{u}"),
            Finding::Domain(d) => write!(f, "{d}"),
            Finding::Wrap { signed, bits, a, b } => {
                let (x, y, which) = if *signed {
                    let s = |v| crate::semantics::sign_extend(*bits, v).to_string();
                    (s(*a), s(*b), "NoSignedWrap")
                } else {
                    (a.to_string(), b.to_string(), "NoUnsignedWrap")
                };
                write!(
                    f,
                    "{bits}-bit operation on {x} and {y} wraps, but is decorated {which} (behavior is undefined)"
                )
            }
            Finding::ChainIndexOutOfRange { index, count } => write!(
                f,
                "access chain index {index} is outside the {count} elements it indexes (behavior undefined)"
            ),
            Finding::NegativeRemainder { a, b } => write!(
                f,
                "signed remainder of {a} by {b}: Vulkan leaves OpSRem/OpSMod undefined when an operand is negative"
            ),
            Finding::Unreachable => write!(
                f,
                "OpUnreachable executed (behavior is undefined); the invocation ends"
            ),
            Finding::IndexOutOfRange { index, count } => write!(
                f,
                "dynamic index {index} of a {count}-component vector is out of range (behavior undefined)"
            ),
        }
    }
}

/// One sanitizer finding, with the instruction and invocation involved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// What was found.
    pub finding: Finding,
    /// The instruction that did it.
    pub at: InstRef,
    /// The invocation's `GlobalInvocationId`.
    pub invocation: [u32; 3],
    /// Its `WorkgroupId`.
    pub workgroup: [u32; 3],
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [x, y, z] = self.invocation;
        write!(
            f,
            "{}: {} by invocation ({x}, {y}, {z})",
            self.at, self.finding
        )
    }
}

/// Counters of a dispatch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Stats {
    /// Instructions executed, counted once per active invocation.
    pub instructions: u64,
    /// Instructions decoded, counted once per tangle.
    pub tangle_instructions: u64,
    /// Times a tangle split at a divergent branch.
    pub splits: u64,
    /// Times tangles rejoined.
    pub joins: u64,
    /// Workgroups run.
    pub workgroups: u64,
    /// Invocations run.
    pub invocations: u64,
    /// Of those, the invocations run on a fast path: the wide path ([`crate::wide`]) or, among
    /// them, as native code ([`Stats::jit_invocations`]).
    pub wide_invocations: u64,
    /// Of those, the invocations run as native code ([`crate::jit`]).
    pub jit_invocations: u64,
    /// Cooperative-matrix loads, stores and MulAdds the wide path ran on matrices held in
    /// dense form, one per subgroup (`wide/dense.rs`).
    pub dense_matrix_ops: u64,
    /// Diagnostics found beyond those kept in the report.
    pub dropped_diagnostics: u64,
}

impl Stats {
    /// Adds another run's counters to these.
    pub fn add(&mut self, o: &Stats) {
        self.instructions += o.instructions;
        self.tangle_instructions += o.tangle_instructions;
        self.splits += o.splits;
        self.joins += o.joins;
        self.workgroups += o.workgroups;
        self.invocations += o.invocations;
        self.wide_invocations += o.wide_invocations;
        self.jit_invocations += o.jit_invocations;
        self.dense_matrix_ops += o.dense_matrix_ops;
        self.dropped_diagnostics += o.dropped_diagnostics;
    }
}

/// Where the race check was cut short: its log was full, so races may be missed from there on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RaceCutShort {
    /// The earliest workgroup (by number) whose accesses were not all kept.
    pub workgroup: [u32; 3],
    /// The first access not kept; `None` when the check between workgroups dropped the
    /// workgroup's accesses as a whole.
    pub at: Option<InstRef>,
    /// The limit reached.
    pub limit: usize,
}

impl fmt::Display for RaceCutShort {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [x, y, z] = self.workgroup;
        match &self.at {
            Some(at) => write!(
                f,
                "the race check was cut short: its bookkeeping (accesses between two barriers, release sequences) passed {} entries in workgroup ({x}, {y}, {z}) at {at}; races from there on may be missed",
                self.limit
            ),
            None => write!(
                f,
                "the race check between workgroups was cut short: more than {} runs of accesses in all; the accesses of workgroup ({x}, {y}, {z}) (and maybe later ones) were not checked against other workgroups",
                self.limit
            ),
        }
    }
}

/// The outcome of a dispatch that ran to the end.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Report {
    /// Sanitizer findings one by one, the earliest (by workgroup number, then order found) at
    /// most [`crate::RunOptions::max_findings`] (the rest are counted in
    /// [`Stats::dropped_diagnostics`]).
    pub diagnostics: Vec<Diagnostic>,
    /// Every finding, one summary per (instruction, kind) with exact counts
    /// ([`crate::check::summary`]).
    pub summaries: Vec<Summary>,
    /// Counters.
    pub stats: Stats,
    /// Set when the race check could not keep every access
    /// ([`crate::RunOptions::race_log_limit`]): races after that point may be missed.
    pub race_cut_short: Option<RaceCutShort>,
    /// The tangle events, when [`crate::RunOptions::trace`] asked for them.
    pub trace: Option<crate::trace::Trace>,
    /// Where the dispatch's time went.
    pub timing: Timing,
    /// The bytes each buffer binding's accesses touched, when [`crate::RunOptions::touched`]
    /// asked for them and the race check kept every access (`None` otherwise: unknown).
    pub touched: Option<Vec<crate::check::touched::Touched>>,
    /// Why the faster paths did not run it, where they did not.
    pub paths: PathNotes,
}

/// Why the executor's faster paths left a dispatch to a slower one, in their own words
/// (`native: not taken: ...`, `wide: gave up: ...`; empty when the first path tried ran it):
/// for speed work, which [`Stats::jit_invocations`] and [`Stats::wide_invocations`] say the
/// outcome of. Not results: two reports compare equal whatever their notes.
#[derive(Debug, Clone, Default)]
pub struct PathNotes(pub Vec<String>);

impl PartialEq for PathNotes {
    fn eq(&self, _: &PathNotes) -> bool {
        true
    }
}

impl Eq for PathNotes {}

/// Where a dispatch's time went: the worker threads against the host's own work around them
/// (setup, the native tier's compile, the race screen's sweep, the findings' sort, and for
/// [`crate::Pipeline::dispatch`] the buffers' conversion into the executor's memory and back,
/// which [`crate::Pipeline::dispatch_resident`] leaves out), which issue 14 asks to keep small.
///
/// Timings are not results: two reports compare equal whatever their timings.
#[derive(Debug, Clone, Copy, Default)]
pub struct Timing {
    /// The whole dispatch, from the call to the report (for [`crate::Pipeline::dispatch`],
    /// the conversions in and out included).
    pub total: std::time::Duration,
    /// The time worker pools ran, from starting their threads to joining them (every pool of
    /// the dispatch: a fast path that gave up and the reference path after it add up).
    pub workers: std::time::Duration,
}

impl Timing {
    /// The host's own work: the dispatch outside its worker pools.
    pub fn host(&self) -> std::time::Duration {
        self.total.saturating_sub(self.workers)
    }
}

impl PartialEq for Timing {
    fn eq(&self, _: &Timing) -> bool {
        true
    }
}

impl Eq for Timing {}

impl Report {
    /// The most diagnostics a report keeps by default ([`crate::RunOptions::max_findings`]).
    pub const MAX_DIAGNOSTICS: usize = 100;
}
