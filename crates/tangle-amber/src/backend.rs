//! The interface between the runner and whatever executes a compute dispatch: tangle's CPU
//! executor, a Vulkan driver, or a fake in tests.
//!
//! The runner hands a [`Backend`] one self-contained [`ComputeJob`] per `RUN` (the SPIR-V words,
//! the entry point, specialization, the bytes of every bound buffer) and gets the buffers back.

pub use crate::script::{
    AddressMode, BindingKind, BorderColor, Filter, RequiredSize, Requirement, SamplerState,
    SubgroupControl,
};
use tangle_spirv::TargetEnv;

/// One buffer bound to a job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobBinding {
    /// `DESCRIPTOR_SET`.
    pub set: u32,
    /// `BINDING`.
    pub binding: u32,
    /// Storage or uniform.
    pub kind: BindingKind,
    /// The element of a descriptor array (`BIND BUFFER_ARRAY`); 0 for a plain binding. Several
    /// bindings share `(set, binding)` exactly when they are elements of one array; a backend
    /// that binds no arrays must refuse a job with an element other than 0.
    pub element: u32,
    /// The bound bytes (the descriptor's range of the script buffer; an image's texels).
    pub bytes: Vec<u8>,
    /// Which script buffer the bytes come from (an index into `Script::buffers`), so a backend
    /// that compares results (`tangle diff`) can read them with the buffer's element types.
    pub buffer: usize,
    /// Where in that buffer the bound range starts, in bytes.
    pub offset: usize,
    /// For the image kinds ([`BindingKind::is_image`]): the texels' format and shape.
    pub image: Option<JobImage>,
    /// For `combined_image_sampler` and `BIND SAMPLER`: the sampler.
    pub sampler: Option<SamplerState>,
}

/// The bindings of `bindings` in runs that share bytes: each run is the bindings (by index, in
/// order of their start) whose ranges of one script buffer overlap one after another; a binding
/// that overlaps no other is a run of its own. Samplers and empty ranges are in none. A backend
/// that aliases bindings ([`Backend::aliases_bindings`]) gives each run one memory.
pub fn shared_runs(bindings: &[JobBinding]) -> Vec<Vec<usize>> {
    let mut order: Vec<usize> = (0..bindings.len())
        .filter(|&i| bindings[i].kind != BindingKind::Sampler && !bindings[i].bytes.is_empty())
        .collect();
    order.sort_by_key(|&i| (bindings[i].buffer, bindings[i].offset, i));
    let mut runs: Vec<Vec<usize>> = Vec::new();
    let mut end = 0usize;
    for i in order {
        let b = &bindings[i];
        let joins = runs
            .last()
            .and_then(|r| r.first())
            .is_some_and(|&f| bindings[f].buffer == b.buffer && b.offset < end);
        match runs.last_mut() {
            Some(run) if joins => run.push(i),
            _ => {
                runs.push(vec![i]);
                end = 0;
            }
        }
        end = end.max(b.offset.saturating_add(b.bytes.len()));
    }
    runs
}

/// The texel layout of an image or texel buffer binding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobImage {
    /// The Vulkan format name without `VK_FORMAT_` (`R8G8B8A8_UNORM`).
    pub format: String,
    /// 1, 2 or 3 (a texel buffer: 1).
    pub dimensions: u8,
    /// Width, height, depth in texels (1 for the dimensions the image lacks).
    pub extent: [u32; 3],
}

/// The buffer robustness a script enables with its `DEVICE_FEATURE`s: what an access outside a
/// buffer's range does (Vulkan `robustBufferAccess`, VK_EXT_robustness2's
/// `robustBufferAccess2`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub enum BufferRobustness {
    /// Neither: an access outside the range is undefined behaviour.
    #[default]
    None,
    /// `DEVICE_FEATURE robustBufferAccess`.
    Buffer,
    /// `DEVICE_FEATURE Robustness2FeaturesEXT.robustBufferAccess2`.
    Buffer2,
}

impl BufferRobustness {
    /// The `DEVICE_FEATURE` that enables [`BufferRobustness::Buffer`].
    pub const BUFFER_FEATURE: &'static str = "robustBufferAccess";
    /// The `DEVICE_FEATURE` that enables [`BufferRobustness::Buffer2`].
    pub const BUFFER2_FEATURE: &'static str = "Robustness2FeaturesEXT.robustBufferAccess2";
    /// The `DEVICE_FEATURE` that enables `robustImageAccess2` ([`ComputeJob::image_robustness`]).
    pub const IMAGE2_FEATURE: &'static str = "Robustness2FeaturesEXT.robustImageAccess2";
    /// The `DEVICE_FEATURE` that enables `nullDescriptor` ([`ComputeJob::null_descriptor`]).
    pub const NULL_FEATURE: &'static str = "Robustness2FeaturesEXT.nullDescriptor";

    /// The `DEVICE_FEATURE` that enables `cooperativeMatrixRobustBufferAccess`
    /// ([`ComputeJob::coopmat_robustness`]).
    pub const COOPMAT_FEATURE: &'static str =
        "CooperativeMatrixFeaturesKHR.cooperativeMatrixRobustBufferAccess";

    /// Whether `requirements` enable `robustImageAccess2`.
    pub fn images(requirements: &[crate::script::Requirement]) -> bool {
        Self::enables(requirements, Self::IMAGE2_FEATURE)
    }

    /// Whether `requirements` enable the `DEVICE_FEATURE` `feature`.
    pub fn enables(requirements: &[crate::script::Requirement], feature: &str) -> bool {
        requirements
            .iter()
            .any(|r| matches!(r, crate::script::Requirement::Feature(f) if f == feature))
    }

    /// The robustness `requirements` enable (the strongest named).
    pub fn of(requirements: &[crate::script::Requirement]) -> BufferRobustness {
        requirements
            .iter()
            .map(|r| match r {
                crate::script::Requirement::Feature(f) if f == Self::BUFFER_FEATURE => {
                    BufferRobustness::Buffer
                }
                crate::script::Requirement::Feature(f) if f == Self::BUFFER2_FEATURE => {
                    BufferRobustness::Buffer2
                }
                _ => BufferRobustness::None,
            })
            .max()
            .unwrap_or_default()
    }
}

/// Everything one dispatch needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ComputeJob {
    /// The module's words.
    pub spirv: Vec<u32>,
    /// The environment the shader was built for (its `TARGET_ENV`, spv1.0 by default).
    pub target_env: TargetEnv,
    /// The entry point's name.
    pub entry_point: String,
    /// Specialization constants: SpecId → the constant's 32-bit pattern.
    pub spec_constants: Vec<(u32, u32)>,
    /// Bound buffers.
    pub bindings: Vec<JobBinding>,
    /// Push-constant bytes, from offset 0.
    pub push_constants: Vec<u8>,
    /// Workgroup counts (x, y, z).
    pub groups: [u32; 3],
    /// The pipeline's `SUBGROUP` block.
    pub subgroup: SubgroupControl,
    /// The line of the `RUN` this job executes (for reports that name it).
    pub line: u32,
    /// `DEBUG`: the `GlobalInvocationId`s whose paths [`JobOutput::debug_paths`] returns; a
    /// backend that cannot follow invocations refuses a job with any
    /// ([`BackendError::Unsupported`]).
    pub debug: Vec<[u32; 3]>,
    /// The buffer robustness the script enables.
    pub robustness: BufferRobustness,
    /// Whether the script enables `robustImageAccess2` ([`BufferRobustness::IMAGE2_FEATURE`]).
    pub image_robustness: bool,
    /// Whether the script enables `cooperativeMatrixRobustBufferAccess`
    /// ([`BufferRobustness::COOPMAT_FEATURE`]).
    pub coopmat_robustness: bool,
    /// Whether the script enables `nullDescriptor` ([`BufferRobustness::NULL_FEATURE`]):
    /// accesses through descriptors bound to nothing are defined. AmberScript has no way to
    /// bind a null descriptor, so a script's own bindings are never null; the feature is
    /// passed on as the device would have it.
    pub null_descriptor: bool,
}

/// What a dispatch left behind.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct JobOutput {
    /// The bytes of every binding after the run, in [`ComputeJob::bindings`] order and with
    /// unchanged lengths.
    pub bindings: Vec<Vec<u8>>,
    /// Undefined behaviour found during the run, one cause per string; any makes the script fail.
    pub undefined_behaviour: Vec<String>,
    /// The same findings in machine form, warnings included (its `line` is the runner's to
    /// fill in).
    pub findings: Vec<crate::report::UbSummary>,
    /// Warnings found during the run, one cause per string; they do not fail the script.
    pub warnings: Vec<String>,
    /// Other remarks worth printing (policies chosen, statistics); they do not fail the script.
    pub notes: Vec<String>,
    /// How long the dispatch itself took (for a driver: submission to completion, without
    /// pipeline creation or buffer transfers), where the backend measures it (`tangle bench`).
    pub dispatch_time: Option<std::time::Duration>,
    /// For each of [`ComputeJob::debug`]: the blocks the invocation started and the values it
    /// held, in order; empty for an invocation the dispatch does not have.
    pub debug_paths: Vec<Vec<PathEvent>>,
}

/// One step of an invocation's path ([`JobOutput::debug_paths`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathEvent {
    /// The invocation started block `label` of function `function` (`OpFunction` and
    /// `OpLabel` ids).
    Block { function: u32, label: u32 },
    /// The invocation is about to execute the instruction at word offset `at` of the module;
    /// `set` holds the values of its current function that changed since the previous
    /// `Values` (all of them the first time): by id, the scalars in component order (a boolean
    /// as 0 or 1, an integer or float as its bits, zero-extended). A backend that reports none
    /// leaves `EXPECT LOCAL` unchecked (refused).
    Values {
        at: usize,
        set: Vec<(u32, Vec<u64>)>,
    },
}

/// Why a dispatch did not complete.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BackendError {
    /// The job needs something the device lacks (a capability, a subgroup size, a limit).
    #[error("not supported: {0}")]
    Unsupported(String),
    /// The module is not valid SPIR-V, or does not match the job (no such entry point, a binding
    /// the shader declares but the pipeline lacks, ...).
    #[error("invalid shader: {0}")]
    Invalid(String),
    /// The run stopped: step or time limit, memory budget, an internal failure.
    #[error("execution failed: {0}")]
    Failed(String),
    /// The device itself failed (a Vulkan device lost, a dispatch that did not finish in time):
    /// nothing can be said about the script, so the run is an error (exit 2), not a failure.
    #[error("device failure: {0}")]
    Device(String),
}

/// Something that runs compute jobs.
pub trait Backend {
    /// `Ok` when the device offers `requirement`, otherwise what is missing, in words.
    fn supports(&self, requirement: &Requirement) -> Result<(), String>;

    /// Runs one dispatch.
    fn run_compute(&mut self, job: &ComputeJob) -> Result<JobOutput, BackendError>;

    /// Whether bindings of overlapping ranges of one script buffer see the same memory within
    /// a dispatch, as descriptors of one `VkBuffer` do on a device (each [`JobBinding`] still
    /// brings its own bytes, and each comes back with the buffer's bytes after the dispatch).
    /// The runner refuses a job with such bindings (exit 77) for a backend that does not.
    fn aliases_bindings(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn binding(kind: BindingKind, buffer: usize, offset: usize, len: usize) -> JobBinding {
        JobBinding {
            set: 0,
            binding: 0,
            kind,
            element: 0,
            bytes: vec![0; len],
            buffer,
            offset,
            image: None,
            sampler: None,
        }
    }

    /// Runs chain ranges that overlap one after another, per script buffer; touching ranges,
    /// other buffers, samplers and empty ranges stay apart.
    #[test]
    fn shared_runs_join_overlapping_ranges_of_one_buffer() {
        let s = BindingKind::Storage;
        let bindings = [
            binding(s, 0, 8, 8),                             // 0: [8, 16)
            binding(s, 0, 0, 10),                            // 1: [0, 10)  overlaps 0
            binding(s, 0, 14, 4),                            // 2: [14, 18) overlaps 0
            binding(s, 0, 18, 4),                            // 3: [18, 22) only touches 2
            binding(s, 1, 0, 64),                            // 4: another buffer
            binding(BindingKind::Sampler, usize::MAX, 0, 0), // 5: no bytes
            binding(s, 0, 20, 0),                            // 6: empty
        ];
        assert_eq!(
            shared_runs(&bindings),
            vec![vec![1, 0, 2], vec![3], vec![4]]
        );
    }
}
