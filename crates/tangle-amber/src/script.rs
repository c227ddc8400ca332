//! The parsed script: requirements, shaders, buffers, pipelines and the command list.
//!
//! Names are resolved while parsing, so commands refer to shaders, buffers and pipelines by their
//! index in [`Script`]'s vectors; the runner never looks a name up.

use crate::error::Location;
use crate::layout::{ElementLayout, Layout};
use crate::types::DataType;
use crate::value::Number;
use serde::Serialize;
use tangle_spirv::TargetEnv;

/// A whole AmberScript file (compute subset).
#[derive(Debug, Clone, Default)]
pub struct Script {
    /// `DEVICE_FEATURE`, `DEVICE_EXTENSION`, ... in script order.
    pub requirements: Vec<Requirement>,
    /// `SHADER` blocks.
    pub shaders: Vec<Shader>,
    /// `BUFFER` declarations with their initial contents.
    pub buffers: Vec<Buffer>,
    /// `PIPELINE compute` (and `DERIVE_PIPELINE`) blocks.
    pub pipelines: Vec<Pipeline>,
    /// `SAMPLER` statements.
    pub samplers: Vec<Sampler>,
    /// `RUN`, `EXPECT`, `COPY`, `REPEAT` (and a VkScript's mid-run `Write`s), in order.
    pub commands: Vec<Command>,
}

/// Something the device must offer for the script to run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub enum Requirement {
    /// `DEVICE_FEATURE name` (e.g. `shaderInt64`, `SubgroupSupportedOperations.ballot`).
    Feature(String),
    /// `DEVICE_EXTENSION VK_...`.
    Extension(String),
    /// `DEVICE_PROPERTY name`.
    Property(String),
    /// `INSTANCE_EXTENSION VK_...`.
    InstanceExtension(String),
}

impl std::fmt::Display for Requirement {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Requirement::Feature(n) => write!(f, "DEVICE_FEATURE {n}"),
            Requirement::Extension(n) => write!(f, "DEVICE_EXTENSION {n}"),
            Requirement::Property(n) => write!(f, "DEVICE_PROPERTY {n}"),
            Requirement::InstanceExtension(n) => write!(f, "INSTANCE_EXTENSION {n}"),
        }
    }
}

/// The source language of a shader.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum ShaderFormat {
    /// GLSL, compiled with glslang.
    Glsl,
    /// SPIR-V assembly in SPIRV-Tools syntax.
    SpirvAsm,
    /// Whitespace-separated hex bytes, packed little-endian into words.
    SpirvHex,
    /// A SPIR-V binary read from a `FILE`; its bytes are kept spelled as SPIRV-HEX text.
    SpirvBin,
}

/// A `SHADER compute|multi` block.
#[derive(Debug, Clone)]
pub struct Shader {
    /// The shader's name.
    pub name: String,
    /// Its source language.
    pub format: ShaderFormat,
    /// `TARGET_ENV`, if given, or spv1.4 for a script that requires `VK_KHR_spirv_1_4`
    /// ([`crate::compile::imply_target_envs`]); `None` is amber's default, spv1.0.
    pub target_env: Option<TargetEnv>,
    /// The raw text between the header line and `END`.
    pub source: String,
    /// The line of the `SHADER` statement.
    pub at: Location,
    /// Line number of the first source line, to map compiler messages back to the script.
    pub first_line: u32,
    /// The file the source is named by in debug information (`OpString`, `OpLine`) and so in
    /// `DEBUG`'s `EXPECT LOCATION` and the sanitizer's reports, as upstream Amber names it
    /// (`Shader::GetFilePath`): the `FILE` or `VIRTUAL_FILE` path, else
    /// `embedded-shaders/NAME` for a shader written in the script.
    pub file_path: String,
}

/// A `BUFFER` declaration.
#[derive(Debug, Clone)]
pub struct Buffer {
    /// The buffer's name.
    pub name: String,
    /// The element type; `None` for a `STRUCT`.
    pub data_type: Option<DataType>,
    /// `STD140` or `STD430`.
    pub layout: Layout,
    /// Where the components of one element lie.
    pub element: ElementLayout,
    /// The initial contents (elements × stride bytes).
    pub bytes: Vec<u8>,
    /// The declaring line.
    pub at: Location,
    /// The Vulkan format name of a `FORMAT` buffer or of an `IMAGE` (`R8G8B8A8_UNORM`).
    pub format: Option<String>,
    /// The shape of an `IMAGE`; `None` for a `BUFFER`.
    pub image: Option<ImageShape>,
}

/// The dimensions of an `IMAGE` (`DIM_1D`/`DIM_2D`/`DIM_3D`, `WIDTH`, `HEIGHT`, `DEPTH`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ImageShape {
    /// 1, 2 or 3.
    pub dimensions: u8,
    /// Width, height, depth in texels (1 for the dimensions the image lacks).
    pub extent: [u32; 3],
}

/// How a buffer is bound to a pipeline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum BindingKind {
    /// `storage` / `storage_dynamic`: a StorageBuffer (or BufferBlock) descriptor.
    Storage,
    /// `uniform` / `uniform_dynamic`: a Uniform descriptor.
    Uniform,
    /// `storage_image`: an `IMAGE` as a storage image.
    StorageImage,
    /// `sampled_image`: an `IMAGE` read without a sampler (`OpImageFetch`).
    SampledImage,
    /// `uniform_texel_buffer`: a `FORMAT` buffer read by `OpImageFetch`.
    UniformTexelBuffer,
    /// `storage_texel_buffer`: a `FORMAT` buffer read and written as an image.
    StorageTexelBuffer,
    /// `combined_image_sampler`: an `IMAGE` with a `SAMPLER`.
    CombinedImageSampler,
    /// `BIND SAMPLER`: a sampler alone (no bytes).
    Sampler,
}

impl BindingKind {
    /// Whether the descriptor is an image or texel buffer (its bytes are texels in a format).
    pub fn is_image(self) -> bool {
        !matches!(
            self,
            BindingKind::Storage | BindingKind::Uniform | BindingKind::Sampler
        )
    }
}

/// `VkFilter` (and `VkSamplerMipmapMode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Filter {
    Nearest,
    Linear,
}

/// `VkSamplerAddressMode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum AddressMode {
    Repeat,
    MirroredRepeat,
    ClampToEdge,
    ClampToBorder,
    MirrorClampToEdge,
}

/// `VkBorderColor`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum BorderColor {
    FloatTransparentBlack,
    IntTransparentBlack,
    FloatOpaqueBlack,
    IntOpaqueBlack,
    FloatOpaqueWhite,
    IntOpaqueWhite,
}

/// A `SAMPLER` declaration's state (upstream's defaults: nearest, repeat, float transparent
/// black, LOD 0 to 1, normalized coordinates, no comparison).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SamplerState {
    pub mag_filter: Filter,
    pub min_filter: Filter,
    pub mipmap_mode: Filter,
    /// U, V, W.
    pub address: [AddressMode; 3],
    pub border: BorderColor,
    pub min_lod: f32,
    pub max_lod: f32,
    pub normalized: bool,
    /// `COMPARE on`: a depth-comparison sampler.
    pub compare: bool,
}

/// The LODs come from parsed numbers; a NaN would only make two states unequal to themselves,
/// which nothing relies on.
impl Eq for SamplerState {}

impl Default for SamplerState {
    fn default() -> Self {
        SamplerState {
            mag_filter: Filter::Nearest,
            min_filter: Filter::Nearest,
            mipmap_mode: Filter::Nearest,
            address: [AddressMode::Repeat; 3],
            border: BorderColor::FloatTransparentBlack,
            min_lod: 0.0,
            max_lod: 1.0,
            normalized: true,
            compare: false,
        }
    }
}

/// A `SAMPLER` statement.
#[derive(Debug, Clone, PartialEq)]
pub struct Sampler {
    /// The sampler's name.
    pub name: String,
    /// Its state.
    pub state: SamplerState,
}

/// A `BIND BUFFER ... DESCRIPTOR_SET s BINDING b` line, or one buffer of a `BIND BUFFER_ARRAY`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Binding {
    /// Index into [`Script::buffers`].
    pub buffer: usize,
    /// Descriptor type.
    pub kind: BindingKind,
    /// `DESCRIPTOR_SET` (0 when omitted).
    pub set: u32,
    /// `BINDING`.
    pub binding: u32,
    /// The descriptor array element (`BIND BUFFER_ARRAY`: the buffer's position); 0 for
    /// `BIND BUFFER`.
    pub element: u32,
    /// Start of the bound range in bytes (`OFFSET` of dynamic descriptors plus `DESCRIPTOR_OFFSET`).
    pub offset: usize,
    /// Length of the bound range (`DESCRIPTOR_RANGE`); the rest of the buffer when `None`.
    pub range: Option<usize>,
    /// The `SAMPLER` of a `combined_image_sampler` or `BIND SAMPLER` (index into
    /// [`Script::samplers`]); a `BIND SAMPLER` binding's `buffer` is `usize::MAX`.
    pub sampler: Option<usize>,
}

/// `REQUIRED_SIZE` of a `SUBGROUP` block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum RequiredSize {
    /// An explicit power of two.
    Size(u32),
    /// `MIN`: the device's minimum subgroup size.
    Min,
    /// `MAX`: the device's maximum subgroup size.
    Max,
}

/// The `SUBGROUP` block of a pipeline (VK_EXT_subgroup_size_control).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize)]
pub struct SubgroupControl {
    /// `REQUIRED_SIZE`.
    pub required_size: Option<RequiredSize>,
    /// `FULLY_POPULATED on`: every subgroup of a workgroup must be full.
    pub fully_populated: bool,
    /// `VARYING_SIZE on`: the subgroup size may vary.
    pub varying_size: bool,
}

/// A `PIPELINE compute` block.
#[derive(Debug, Clone)]
pub struct Pipeline {
    /// The pipeline's name.
    pub name: String,
    /// Index into [`Script::shaders`].
    pub shader: usize,
    /// `ENTRY_POINT` (default `main`).
    pub entry_point: String,
    /// `SPECIALIZE id AS type value`: SpecId → 32-bit pattern, in script order (a later one wins).
    pub spec_constants: Vec<(u32, u32)>,
    /// The `SUBGROUP` block.
    pub subgroup: SubgroupControl,
    /// Descriptor bindings.
    pub bindings: Vec<Binding>,
    /// `BIND BUFFER b AS push_constant`: index into [`Script::buffers`].
    pub push_constants: Option<usize>,
    /// How the attached shader is built for this pipeline.
    pub build: ShaderBuild,
    /// The `PIPELINE` line.
    pub at: Location,
}

/// A pipeline's `COMPILE_OPTIONS` and `SHADER_OPTIMIZATION` for its shader.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ShaderBuild {
    /// GLSL preprocessor definitions from `COMPILE_OPTIONS` (`-DNAME[=VALUE]`).
    pub defines: Vec<(String, Option<String>)>,
    /// SPIRV-Tools optimizer passes (`--pass-name[=args]`), run in order with `spirv-opt`.
    pub passes: Vec<String>,
}

/// A comparison of `EXPECT ... IDX`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum CompareOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl CompareOp {
    /// The AmberScript keyword.
    pub fn keyword(self) -> &'static str {
        match self {
            CompareOp::Eq => "EQ",
            CompareOp::Ne => "NE",
            CompareOp::Lt => "LT",
            CompareOp::Le => "LE",
            CompareOp::Gt => "GT",
            CompareOp::Ge => "GE",
        }
    }
}

/// A `TOLERANCE` value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tolerance {
    /// The amount.
    pub value: f64,
    /// `%` suffix: relative to the expected value.
    pub percent: bool,
}

/// What an `EXPECT` checks.
#[derive(Debug, Clone, PartialEq)]
pub enum Check {
    /// `IDX offset [TOLERANCE t] OP values...`.
    Probe {
        /// Byte offset of the first probed element.
        offset: usize,
        /// The comparison.
        op: CompareOp,
        /// The first `TOLERANCE` value (the only one amber uses for buffers).
        tolerance: Option<Tolerance>,
        /// Expected values, consumed component by component.
        values: Vec<Number>,
    },
    /// `EQ_BUFFER other`: byte-wise equality, padding included.
    EqBuffer(usize),
    /// `RMSE_BUFFER other TOLERANCE t`.
    RmseBuffer(usize, f64),
    /// `EQ_HISTOGRAM_EMD_BUFFER other TOLERANCE t`: the earth mover's distance between the
    /// per-channel histograms of two 4-channel 8-bit buffers is at most `t`.
    HistogramEmdBuffer(usize, f64),
}

/// An `EXPECT` command.
#[derive(Debug, Clone, PartialEq)]
pub struct Expect {
    /// Index into [`Script::buffers`].
    pub buffer: usize,
    /// The check.
    pub check: Check,
    /// The `EXPECT` line.
    pub at: Location,
}

/// A top-level command, executed in order.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    /// `RUN pipeline x y z`.
    Run {
        /// Index into [`Script::pipelines`].
        pipeline: usize,
        /// Workgroup counts.
        groups: [u32; 3],
        /// The `RUN` line.
        at: Location,
    },
    /// `EXPECT ...`.
    Expect(Expect),
    /// `COPY from TO to`: the destination takes the source's bytes (and so its size).
    Copy {
        /// Source buffer index.
        from: usize,
        /// Destination buffer index.
        to: usize,
        /// The `COPY` line.
        at: Location,
    },
    /// A VkScript data command after a `compute` (`ssbo B subdata`, `uniform ...`): `bytes` go
    /// to byte `offset` of the buffer, which grows to hold them (amber's `SetDataWithOffset`).
    Write {
        /// Index into [`Script::buffers`].
        buffer: usize,
        /// Byte offset.
        offset: usize,
        /// The bytes written.
        bytes: Vec<u8>,
        /// The command's line.
        at: Location,
    },
    /// `DEBUG pipeline x y z` + `THREAD ... END` blocks + `END`: a `RUN` whose invocations
    /// named by the threads are followed line by line ([`crate::debug`]).
    Debug {
        /// Index into [`Script::pipelines`].
        pipeline: usize,
        /// Workgroup counts.
        groups: [u32; 3],
        /// The threads followed.
        threads: Vec<DebugThread>,
        /// The `DEBUG` line.
        at: Location,
    },
    /// `REPEAT n ... END`.
    Repeat {
        /// How many times the body runs.
        count: u32,
        /// The body.
        body: Vec<Command>,
        /// The `REPEAT` line.
        at: Location,
    },
}

/// `THREAD GLOBAL_INVOCATION_ID x y z` + debugger commands + `END`.
#[derive(Debug, Clone, PartialEq)]
pub struct DebugThread {
    /// The invocation's `GlobalInvocationId`.
    pub invocation: [u32; 3],
    /// Its commands, in order.
    pub steps: Vec<DebugStep>,
    /// The `THREAD` line.
    pub at: Location,
}

/// One frame of `EXPECT CALLSTACK`: `"function" "file" line`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallFrame {
    /// The function's source name.
    pub function: String,
    /// The source file, as the module's `OpString` names it.
    pub file: String,
    /// The line.
    pub line: u32,
}

/// One debugger command of a `THREAD`.
#[derive(Debug, Clone, PartialEq)]
pub enum DebugStep {
    /// `EXPECT LOCATION "file" line ["text"]`: the thread is paused at that source line (whose
    /// text is `text`).
    ExpectLocation {
        /// The source file, as the module's `OpString` names it.
        file: String,
        /// The line.
        line: u32,
        /// The line's text, when given.
        text: Option<String>,
        /// The command's place.
        at: Location,
    },
    /// `EXPECT CALLSTACK` + frames + `END`: the call stack at the pause, innermost frame first.
    ExpectCallstack {
        /// Each frame: the function's source name, the file and the line paused at in it (in
        /// a caller, the line of the call).
        frames: Vec<CallFrame>,
        /// The command's place.
        at: Location,
    },
    /// `EXPECT LOCAL "name" EQ value`: at the pause, the local `name` (a variable, parameter or
    /// named result of the paused function, `%id` for any result; `a.b.x` for a member or a
    /// vector component) has `value`.
    ExpectLocal {
        /// The name, as the command gives it.
        name: String,
        /// The value expected.
        value: LocalValue,
        /// The command's place.
        at: Location,
    },
    /// `STEP_IN`: to the next line executed, into calls.
    StepIn,
    /// `STEP_OVER`: to the next line executed in this function or a caller.
    StepOver,
    /// `STEP_OUT`: to the next line executed in a caller.
    StepOut,
    /// `CONTINUE`: the thread runs to its end.
    Continue,
}

/// The value of an `EXPECT LOCAL`, as upstream Amber's parser types the token.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum LocalValue {
    /// An integer token.
    Int(i64),
    /// A number with a fraction or exponent.
    Float(f64),
}
