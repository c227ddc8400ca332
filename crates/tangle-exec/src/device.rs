//! The host API: a [`Device`] built from a [`Profile`], compute [`Pipeline`]s built from modules,
//! and dispatches over [`Resources`].

use crate::error::ExecError;
use crate::profile::Profile;
use crate::program::Program;
use crate::report::Report;
pub use crate::run::resident::Resident;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

/// The most bytes of per-invocation memory (Function and Private variables) one subgroup may
/// hold.
pub const MAX_INVOCATION_MEMORY: u64 = 64 << 20;

/// Specialization constant values by `SpecId`, as bit patterns (low bits hold narrower values;
/// booleans are 0 or 1).
pub type SpecConstants = BTreeMap<u32, u64>;

/// A simulated device.
#[derive(Debug, Clone)]
pub struct Device {
    profile: Profile,
}

impl Device {
    /// A device with the given profile.
    pub fn new(profile: Profile) -> Self {
        Device { profile }
    }

    /// The device's profile.
    pub fn profile(&self) -> &Profile {
        &self.profile
    }

    /// Lowers `entry_point` of a validated module with the given specialization into a pipeline.
    ///
    /// The executor runs only what `tangle_validate::validate` accepted (DESIGN.md: "the
    /// executor trusts only validated modules"), so the type asks for its proof, not a bare
    /// `Module`.
    pub fn compute_pipeline(
        &self,
        module: &tangle_validate::Validated<'_>,
        entry_point: &str,
        spec: &SpecConstants,
    ) -> Result<Pipeline, ExecError> {
        let program = crate::lower::lower(module.module(), entry_point, spec, &self.profile)?;
        crate::run::group::check_supported(&program, &self.profile)?;
        let [x, y, z] = program.local_size;
        // Three u32 factors can exceed u64 (fuzzing found 2^31 x 2^31 x 2^31).
        let invocations = u64::from(x)
            .saturating_mul(u64::from(y))
            .saturating_mul(u64::from(z));
        let max = self.profile.max_workgroup_size;
        if x > max[0]
            || y > max[1]
            || z > max[2]
            || invocations > u64::from(self.profile.max_workgroup_invocations)
        {
            return Err(ExecError::Limit(format!(
                "workgroup size {x}x{y}x{z} exceeds the device's limits ({}x{}x{}, {} invocations)",
                max[0], max[1], max[2], self.profile.max_workgroup_invocations
            )));
        }
        if program.workgroup_bytes > u64::from(self.profile.max_shared_memory) {
            return Err(ExecError::Limit(format!(
                "{} bytes of workgroup memory exceed the device's {} bytes",
                program.workgroup_bytes, self.profile.max_shared_memory
            )));
        }
        let per_subgroup = program
            .invocation_bytes
            .saturating_mul(u64::from(self.profile.subgroup_size));
        if per_subgroup > MAX_INVOCATION_MEMORY {
            return Err(ExecError::Limit(format!(
                "{} bytes of function and private variables per invocation exceed tangle's limit of {} bytes per subgroup",
                program.invocation_bytes, MAX_INVOCATION_MEMORY
            )));
        }
        let program = Arc::new(program);
        let (fast, kept_calls) = match program.functions.len() {
            0 | 1 => (program.as_ref().clone(), None),
            _ => match crate::lower::inline::inline(&program) {
                Ok(inlined) => (inlined, None),
                Err(why) => (program.as_ref().clone(), Some(why)),
            },
        };
        // Variables in invocation memory that the inlined program reaches through known
        // pointers only go to registers ([`crate::lower::promote_inlined`]).
        let fast = match kept_calls {
            None => Arc::new(crate::lower::promote_inlined::promote(&program, fast)),
            Some(_) => program.clone(),
        };
        Ok(Pipeline {
            writes: Arc::new(crate::program::writes::Writes::of(&program)),
            matrix_meets_plain: crate::program::writes::matrix_meets_plain(&program),
            program,
            fast,
            kept_calls,
            profile: self.profile.clone(),
            native: Arc::default(),
        })
    }
}

/// A compute pipeline: one entry point, lowered and specialized.
#[derive(Debug, Clone)]
pub struct Pipeline {
    pub(crate) program: Arc<Program>,
    /// The program the fast tiers run: `program` with its calls inlined
    /// ([`crate::lower::inline`]), or `program` itself where it has none or keeps them.
    pub(crate) fast: Arc<Program>,
    /// Why `program` keeps its calls (too large inlined, recursion): the fast tiers' reason.
    pub(crate) kept_calls: Option<String>,
    pub(crate) profile: Profile,
    /// The program compiled to native code, by dispatch key ([`crate::jit`]).
    pub(crate) native: Arc<crate::jit::Cache>,
    /// The regions the program may write: what a dispatch writes back and restores.
    pub(crate) writes: Arc<crate::program::writes::Writes>,
    /// Whether cooperative-matrix and plain accesses may meet in a buffer: with the race check
    /// on, its dispatches run on the reference path
    /// ([`crate::program::writes::matrix_meets_plain`]).
    pub(crate) matrix_meets_plain: bool,
}

impl Pipeline {
    /// The workgroup size (`LocalSize`, `LocalSizeId` or the `WorkgroupSize` built-in).
    pub fn local_size(&self) -> [u32; 3] {
        self.program.local_size
    }

    /// The lowered program (for dumps and tools).
    pub fn program(&self) -> &Program {
        &self.program
    }

    /// The time spent compiling the program to native code so far ([`crate::jit`]): once per
    /// dispatch shape, at its first dispatch.
    pub fn native_compile_time(&self) -> std::time::Duration {
        self.native.compiles().time
    }

    /// What compiling the program to native code cost so far: the time, the longest compile
    /// and the largest compile budget measure ([`crate::jit::Compiles`]).
    pub fn native_compiles(&self) -> crate::jit::Compiles {
        self.native.compiles()
    }

    /// The `(set, binding)` pairs of the buffers the entry point uses.
    pub fn bindings(&self) -> Vec<(u32, u32)> {
        self.program.bindings()
    }

    /// The images and texel buffers the entry point uses.
    pub fn images(&self) -> &[crate::program::ImageBinding] {
        &self.program.images
    }

    /// The descriptor arrays of buffers the entry point uses.
    pub fn descriptor_arrays(&self) -> &[crate::program::DescriptorArray] {
        &self.program.descriptor_arrays
    }

    /// Runs a grid of `groups` workgroups over `resources`; buffers are updated in place. The
    /// same as [`Resident::new`], [`Pipeline::dispatch_resident`] and
    /// [`Resident::into_resources`]; on an error `resources` are left as they were.
    pub fn dispatch(
        &self,
        resources: &mut Resources,
        groups: [u32; 3],
        options: &RunOptions,
    ) -> Result<Report, ExecError> {
        crate::run::dispatch(self, resources, groups, options)
    }

    /// Runs a grid of `groups` workgroups over resident memory, converted once and kept
    /// between dispatches ([`Resident`]): the results and findings are those of
    /// [`Pipeline::dispatch`] over the resources as the last dispatch left them. After an
    /// error the memory holds what the dispatch wrote before it stopped.
    pub fn dispatch_resident(
        &self,
        resident: &mut Resident,
        groups: [u32; 3],
        options: &RunOptions,
    ) -> Result<Report, ExecError> {
        crate::run::dispatch_resident(self, resident, groups, options)
    }

    /// Whether a dispatch of this pipeline may write the buffer at `(set, binding)` (or an
    /// element of the descriptor array there): what it reads back. Every buffer when the
    /// program writes through a pointer it may have made from any address (a
    /// `PhysicalStorageBuffer` pointer, a pointer loaded from memory).
    pub fn may_write(&self, set: u32, binding: u32) -> bool {
        self.writes.binding(set, binding)
    }
}

/// The memory a dispatch sees.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Resources {
    /// Storage and uniform buffers by `(set, binding)`, as bytes in the shader's explicit layout.
    pub buffers: BTreeMap<(u32, u32), Vec<u8>>,
    /// Push-constant bytes.
    pub push_constants: Vec<u8>,
    /// Elements of descriptor arrays of buffers (`buffer B { .. } b[4];`) by
    /// `(set, binding, array element)`; element 0 may also be given in [`Resources::buffers`].
    /// Elements not given are unbound: an access through one is a finding.
    pub elements: BTreeMap<(u32, u32, u32), Vec<u8>>,
    /// Images and texel buffers by `(set, binding)`.
    pub images: BTreeMap<(u32, u32), Image>,
    /// Elements of descriptor arrays of images and texel buffers by `(set, binding, array
    /// element)`; element 0 may also be given in [`Resources::images`].
    pub image_elements: BTreeMap<(u32, u32, u32), Image>,
    /// Samplers by `(set, binding)`: alone, or with the image at the same binding for a
    /// combined image sampler.
    pub samplers: BTreeMap<(u32, u32), crate::semantics::sampler::Sampler>,
    /// Elements of descriptor arrays of samplers and of combined image samplers by `(set,
    /// binding, array element)`; element 0 may also be given in [`Resources::samplers`].
    /// Elements not given are unbound: sampling through one is a finding.
    pub sampler_elements: BTreeMap<(u32, u32, u32), crate::semantics::sampler::Sampler>,
    /// Storage and uniform buffers as views of shared allocations, by `(set, binding, array
    /// element)` (element 0 for a plain buffer): the dispatch runs on the allocations' bytes
    /// in place, views of the same bytes alias, and a binding given here must not be given in
    /// [`Resources::buffers`] or [`Resources::elements`] too ([`crate::allocation`]).
    pub views: BTreeMap<(u32, u32, u32), crate::allocation::BufferView>,
    /// Texel buffers as views of shared allocations, by `(set, binding, array element)`,
    /// aliasing the buffers' views of the same bytes; not given in [`Resources::images`] or
    /// [`Resources::image_elements`] too.
    pub texel_views: BTreeMap<(u32, u32, u32), crate::allocation::TexelView>,
    /// Storage and uniform buffer descriptors written with `VK_NULL_HANDLE` (VK_EXT_robustness2
    /// `nullDescriptor`), by `(set, binding, array element)`: bound to nothing, so loads give
    /// zero, stores and atomics are discarded and `OpArrayLength` is 0 where
    /// [`RunOptions::null_descriptor`] is on, and any access is a finding where it is off
    /// ([`crate::check::null`]). Not given in the other maps too.
    pub null_buffers: std::collections::BTreeSet<(u32, u32, u32)>,
    /// Image, combined image sampler and texel buffer descriptors written with a
    /// `VK_NULL_HANDLE` view (`nullDescriptor`), by `(set, binding, array element)`: reads and
    /// samples give (0, 0, 0, 0), writes and atomics are discarded (an atomic returns zero) and
    /// size queries give 0 where [`RunOptions::null_descriptor`] is on; any access is a
    /// finding where it is off ([`crate::check::null`]). Not given in the other maps too.
    pub null_images: std::collections::BTreeSet<(u32, u32, u32)>,
}

/// An image (or texel buffer) bound to a dispatch: one mip level, one layer, one sample.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Image {
    /// The texel format of the image view.
    pub format: &'static crate::semantics::texel::TexelFormat,
    /// Width, height and depth in texels (1 for the dimensions the image lacks; a texel
    /// buffer's width is its texel count).
    pub extent: [u32; 3],
    /// The texels, tightly packed, x fastest, then y, then z.
    pub texels: Vec<u8>,
}

impl Resources {
    /// The device address (`PhysicalStorageBuffer` pointer value) of a buffer during a dispatch
    /// over these resources: shaders may read it from another buffer and `OpConvertUToPtr` it.
    pub fn device_address(&self, set: u32, binding: u32) -> Option<u64> {
        let index = self.buffers.keys().position(|k| *k == (set, binding))?;
        Some(crate::run::memory::buffer_address(index))
    }
}

/// The default [`RunOptions::memory_limit`]: 4 GiB.
pub const DEFAULT_MEMORY_LIMIT: u64 = 4 << 30;

/// A dispatch's progress hook: called with (workgroups finished, workgroups in the dispatch),
/// from the thread that called [`Pipeline::dispatch`]: with 0 when the workers start, about ten
/// times a second while they run, and once when they have ended; the count never decreases. The executor draws nothing itself: the caller decides how
/// to show it (the CLI draws a progress bar on a terminal).
#[derive(Clone)]
pub struct Progress(pub Arc<dyn Fn(u64, u64) + Send + Sync>);

impl Progress {
    /// A hook calling `f`.
    pub fn new(f: impl Fn(u64, u64) + Send + Sync + 'static) -> Self {
        Progress(Arc::new(f))
    }
}

impl std::fmt::Debug for Progress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Progress(..)")
    }
}

impl PartialEq for Progress {
    /// The same hook (the same allocation), since closures cannot be compared.
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for Progress {}

/// Options of a dispatch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunOptions {
    /// Worker threads; 0 uses every core, and more than the machine's cores
    /// (`std::thread::available_parallelism`) or than the dispatch's workgroups are capped to
    /// those.
    pub threads: usize,
    /// The most instructions one invocation may execute.
    pub step_limit: u64,
    /// The most wall-clock time a dispatch may take, counted from [`RunOptions::started`]:
    /// its fast paths, their native compile and the reference path together. The dispatch
    /// stops within about a tenth of a second past it, however many workgroups remain (a
    /// native compile, bounded by [`crate::jit`]'s compile budget, is not cut short but is
    /// followed by the error); a limit too large to add to the clock means no limit.
    pub time_limit: Duration,
    /// When the time limit starts: a caller whose run validates and lowers the shader before
    /// dispatching it (a `RUN` of an Amber script) sets the instant it began, so that those
    /// count too; `None` starts it at the dispatch.
    pub started: Option<std::time::Instant>,
    /// The most bytes a dispatch may hold: the executor's copy of the bound buffers and push
    /// constants, plus each worker thread's state (register files, workgroup memory, Function
    /// and Private variables). Fewer threads are used when all would not fit; a dispatch that
    /// does not fit with one is refused with [`crate::Trap::MemoryLimit`] before allocating.
    pub memory_limit: u64,
    /// Called with the dispatch's progress ([`Progress`]).
    pub progress: Option<Progress>,
    /// The scheduling policy ([`crate::policy`]). The default, `maximal`, is what an entry point
    /// declaring `MaximallyReconvergesKHR` requires, and a legal choice for any other.
    pub policy: crate::policy::Policy,
    /// Record the tangle events of the dispatch in [`Report::trace`].
    pub trace: bool,
    /// With [`RunOptions::trace`]: the invocations (`GlobalInvocationId`s) whose values the
    /// trace records too, before each instruction they execute (`values` events, what `DEBUG`
    /// shows; [`crate::trace::EventKind::Values`]).
    pub watch: Vec<[u32; 3]>,
    /// Report the sanitizer's undefined-behaviour findings (`--no-checks` turns this off).
    /// Out-of-bounds accesses and bad pointers are reported either way: they are memory errors
    /// of the shader, not values the spec leaves undefined.
    pub checks: bool,
    /// Which invocation holds which cooperative-matrix element ([`crate::policy::CoopmatLayout`]).
    pub coopmat_layout: crate::policy::CoopmatLayout,
    /// The buffer robustness the program enabled (`robustBufferAccess`,
    /// `robustBufferAccess2`): what an access outside a buffer's range does, and whether it
    /// is a finding ([`crate::check::robust`]).
    pub robustness: crate::check::robust::Robustness,
    /// `robustImageAccess2` (VK_EXT_robustness2): an image read, write or atomic outside the
    /// image is defined ([`crate::run::image`]), not a finding.
    pub image_robustness: bool,
    /// `cooperativeMatrixRobustBufferAccess` (VK_KHR_cooperative_matrix): a cooperative-matrix
    /// load or store outside its buffer follows [`RunOptions::robustness`] element by element
    /// ([`crate::check::robust`]); without it such an access stays undefined behaviour.
    pub coopmat_robustness: bool,
    /// `nullDescriptor` (VK_EXT_robustness2): an access through a null descriptor
    /// ([`Resources::null_buffers`]) is defined ([`crate::check::null`]); without it, such an
    /// access is undefined behaviour.
    pub null_descriptor: bool,
    /// Finding kinds not to look for (`--allow race,uninit`): neither reported nor, for the
    /// race and uninitialised-value checks, tracked.
    pub allow: crate::check::kind::KindSet,
    /// Warning kinds the run fails for, as for errors (`--deny uninit`, `--deny all`): they
    /// are found and reported alike, only their severity changes ([`RunOptions::severity`]).
    pub deny: crate::check::kind::KindSet,
    /// The most findings kept one by one in [`Report::diagnostics`] (every finding is still
    /// counted in [`Report::summaries`]); it also bounds the sanitizer's race bookkeeping.
    pub max_findings: usize,
    /// Try the wide path first ([`crate::wide`]): batches across subgroups and workgroups for
    /// programs where the grouping is unobservable, falling back to the reference path on
    /// anything it would report. Off (`--reference`) runs the reference path alone.
    pub wide: bool,
    /// Try the native tier before the wide interpreter ([`crate::jit`]): the wide path's
    /// programs without subgroup operations compiled to machine code, with the same fallback.
    /// Only with `wide`; off (`--no-jit`) leaves the wide interpreter.
    pub jit: bool,
    /// The most accesses the race check logs per workgroup between two barriers, and keeps
    /// for the check between workgroups (default [`crate::check::race::RaceLog::LIMIT`]):
    /// memory stays bounded; past it the check is cut short, and [`Report::race_cut_short`]
    /// says where.
    pub race_log_limit: usize,
    /// The `WorkgroupId` of the dispatch's first workgroup (`vkCmdDispatchBase`'s base):
    /// workgroup ids run from `base` to `base + groups - 1`, and `GlobalInvocationId` follows
    /// them. Only the reference path applies it: a non-zero base skips the fast paths.
    pub base: [u32; 3],
    /// Record the bytes each buffer binding's accesses touched in [`Report::touched`]
    /// ([`crate::check::touched`]), for hazards between dispatches. The record comes from the
    /// race log of the tier that ran the dispatch (with the race check on; `None` otherwise),
    /// which then logs every buffer access, those that cannot race included.
    pub touched: bool,
}

impl RunOptions {
    /// The severity of a finding of `kind` in this run: the kind's own, or an error where
    /// [`RunOptions::deny`] names it.
    pub fn severity(&self, kind: crate::check::kind::Kind) -> crate::check::kind::Severity {
        crate::check::kind::severity(kind, self.deny)
    }
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            threads: 0,
            step_limit: 100_000_000,
            time_limit: Duration::from_secs(60),
            started: None,
            memory_limit: DEFAULT_MEMORY_LIMIT,
            progress: None,
            policy: crate::policy::Policy::default(),
            trace: false,
            watch: Vec::new(),
            checks: true,
            coopmat_layout: crate::policy::CoopmatLayout::default(),
            robustness: crate::check::robust::Robustness::Off,
            image_robustness: false,
            coopmat_robustness: false,
            null_descriptor: false,
            allow: crate::check::kind::KindSet::default(),
            deny: crate::check::kind::KindSet::default(),
            max_findings: Report::MAX_DIAGNOSTICS,
            wide: true,
            jit: true,
            race_log_limit: crate::check::race::RaceLog::LIMIT,
            base: [0; 3],
            touched: false,
        }
    }
}
