//! `tangle diff`: one Amber script on two backends in lockstep (tangle's CPU executor as the
//! reference, a Vulkan device as the subject), comparing every bound buffer after every `RUN`.
//!
//! [`DiffBackend`] is itself a [`Backend`]: the runner hands it each job, it runs the job on both
//! sides from the same input bytes, records every [`Difference`], and gives the runner the
//! reference's bytes, so each `RUN` starts both sides from the same state and one difference
//! does not cascade into every later one.
//!
//! Components are compared with the buffer's element types: integers exactly; floats equal
//! when both are NaN, within the script's `TOLERANCE` for that buffer (its first `EXPECT` that
//! gives one), or else within [`ULP_BOUND`] units in the last place of their own precision.
//! A difference in a `RUN` where the CPU executor found undefined behaviour (an error or a
//! warning) is *explained* (the executor records findings per dispatch, not per value, so the
//! whole dispatch is).

use tangle_amber::backend::{RequiredSize, Requirement};
use tangle_amber::layout::ElementLayout;
use tangle_amber::script::{Check, Command, Tolerance};
use tangle_amber::types::Scalar;
use tangle_amber::value::Component;
use tangle_amber::{Backend, BackendError, ComputeJob, JobOutput, Script};

/// Float results may differ by this many units in the last place without a difference being
/// reported: Vulkan's precision rules allow correctly rounded results for add, sub and mul but
/// up to 2.5 ULP for division and 3 ULP or more for most GLSL.std.450 functions.
pub const ULP_BOUND: u64 = 4;

/// At most this many differences are kept per buffer and `RUN` (the rest are counted).
pub const KEPT_PER_BUFFER: usize = 16;

/// One component that differs.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Difference {
    /// The `RUN`'s line.
    pub line: u32,
    /// The buffer's name.
    pub buffer: String,
    /// Element index in the buffer.
    pub element: usize,
    /// Component within the element.
    pub component: usize,
    /// The CPU executor's value.
    pub cpu: String,
    /// The device's value.
    pub device: String,
    /// Why it is not a failure: the CPU executor's undefined-behaviour finding in that `RUN`.
    pub explained: Option<String>,
}

/// Counts of a whole diff.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct Summary {
    /// Dispatches compared.
    pub runs: usize,
    /// Differences found (kept or not).
    pub total: usize,
    /// Of those, in a `RUN` where the CPU found undefined behaviour.
    pub explained: usize,
    /// The kept differences, in order.
    pub kept: Vec<Difference>,
}

impl Summary {
    /// Differences that nothing explains.
    pub fn unexplained(&self) -> usize {
        self.total - self.explained
    }
}

/// The two backends, the script they run, and what was found so far.
pub struct DiffBackend<'a> {
    script: &'a Script,
    cpu: &'a mut dyn Backend,
    device: &'a mut dyn Backend,
    /// The device's (min, max) subgroup size, so that `REQUIRED_SIZE MIN|MAX` gives the CPU
    /// the size the device uses.
    subgroup_range: (u32, u32),
    /// What was found.
    pub summary: Summary,
}

impl<'a> DiffBackend<'a> {
    /// A diff of `script` between `cpu` and `device`, whose subgroup sizes range over
    /// `subgroup_range`.
    pub fn new(
        script: &'a Script,
        cpu: &'a mut dyn Backend,
        device: &'a mut dyn Backend,
        subgroup_range: (u32, u32),
    ) -> Self {
        DiffBackend {
            script,
            cpu,
            device,
            subgroup_range,
            summary: Summary::default(),
        }
    }

    /// Compares one binding's bytes after the job, recording differences.
    fn compare(
        &mut self,
        job: &ComputeJob,
        index: usize,
        cpu: &[u8],
        device: &[u8],
        ub: Option<&str>,
    ) {
        let Some(binding) = job.bindings.get(index) else {
            return;
        };
        let Some(buffer) = self.script.buffers.get(binding.buffer) else {
            return;
        };
        let tolerance = tolerance(self.script, binding.buffer);
        let layout = &buffer.element;
        let per = layout.components().max(1);
        let mut kept = 0;
        // Components whose bytes lie wholly inside the bound range, in order.
        let mut i = first_component(layout, binding.offset);
        while let Some(at) = layout.byte_offset(i) {
            let Some(scalar) = layout.scalar(i) else {
                break;
            };
            let Some(local) = at.checked_sub(binding.offset) else {
                i += 1;
                continue;
            };
            let (Some(a), Some(b)) = (
                cpu.get(local..).and_then(|s| Component::decode(s, scalar)),
                device
                    .get(local..)
                    .and_then(|s| Component::decode(s, scalar)),
            ) else {
                break;
            };
            if !agree(a, b, scalar, tolerance) {
                self.summary.total += 1;
                if ub.is_some() {
                    self.summary.explained += 1;
                }
                if kept < KEPT_PER_BUFFER {
                    kept += 1;
                    self.summary.kept.push(Difference {
                        line: job.line,
                        buffer: buffer.name.clone(),
                        element: i / per,
                        component: i % per,
                        cpu: a.to_string(),
                        device: b.to_string(),
                        explained: ub
                            .map(|u| format!("the CPU executor found undefined behaviour: {u}")),
                    });
                }
            }
            i += 1;
        }
    }
}

/// The first component index whose bytes start at or after `offset` (a bound range may start
/// inside a buffer, `DESCRIPTOR_OFFSET`).
fn first_component(layout: &ElementLayout, offset: usize) -> usize {
    let per = layout.components().max(1);
    let first_element = offset.checked_div(layout.stride).unwrap_or(0);
    let mut i = first_element.saturating_mul(per);
    while layout.byte_offset(i).is_some_and(|at| at < offset) {
        i += 1;
    }
    i
}

/// The script's `TOLERANCE` for `buffer`: that of its first `EXPECT ... TOLERANCE`.
fn tolerance(script: &Script, buffer: usize) -> Option<Tolerance> {
    fn find(commands: &[Command], buffer: usize) -> Option<Tolerance> {
        commands.iter().find_map(|c| match c {
            Command::Expect(e) if e.buffer == buffer => match &e.check {
                Check::Probe { tolerance, .. } => *tolerance,
                _ => None,
            },
            Command::Repeat { body, .. } => find(body, buffer),
            _ => None,
        })
    }
    find(&script.commands, buffer)
}

/// Whether two components agree under the comparison rules (module docs).
pub fn agree(a: Component, b: Component, scalar: Scalar, tolerance: Option<Tolerance>) -> bool {
    match (a, b) {
        (Component::Int(x), Component::Int(y)) => x == y,
        (Component::Float(x), Component::Float(y)) => {
            if x == y || (x.is_nan() && y.is_nan()) {
                return true;
            }
            if let Some(t) = tolerance {
                let bound = if t.percent {
                    x.abs() * t.value / 100.0
                } else {
                    t.value
                };
                if (x - y).abs() <= bound {
                    return true;
                }
            }
            ulp_distance(x, y, scalar).is_some_and(|d| d <= ULP_BOUND)
        }
        _ => false,
    }
}

/// How many representable values of `scalar`'s precision lie between `x` and `y` (`None` for
/// a NaN or a non-float type).
fn ulp_distance(x: f64, y: f64, scalar: Scalar) -> Option<u64> {
    if x.is_nan() || y.is_nan() {
        return None;
    }
    // Maps the float's bits to a line on which adjacent values are adjacent integers (negative
    // values mirrored), so the distance is a difference of integers.
    let ordered = |bits: i64, sign_bit: i64| {
        if bits & sign_bit != 0 {
            sign_bit - bits
        } else {
            bits
        }
    };
    let key = |v: f64| -> Option<i64> {
        Some(match scalar {
            Scalar::F16 => ordered(i64::from(half::f16::from_f64(v).to_bits()), 0x8000),
            Scalar::F32 => ordered(i64::from((v as f32).to_bits()), 0x8000_0000),
            Scalar::F64 => {
                let bits = v.to_bits();
                if bits >> 63 == 1 {
                    -((bits & !(1 << 63)) as i64)
                } else {
                    bits as i64
                }
            }
            _ => return None,
        })
    };
    Some(key(x)?.abs_diff(key(y)?))
}

impl Backend for DiffBackend<'_> {
    fn supports(&self, requirement: &Requirement) -> Result<(), String> {
        self.device
            .supports(requirement)
            .map_err(|why| format!("the device: {why}"))?;
        self.cpu
            .supports(requirement)
            .map_err(|why| format!("tangle's CPU executor: {why}"))
    }

    /// Only where both alias: the two must run the same job.
    fn aliases_bindings(&self) -> bool {
        self.device.aliases_bindings() && self.cpu.aliases_bindings()
    }

    fn run_compute(&mut self, job: &ComputeJob) -> Result<JobOutput, BackendError> {
        let mut cpu_job = job.clone();
        let (min, max) = self.subgroup_range;
        cpu_job.subgroup.required_size = match job.subgroup.required_size {
            Some(RequiredSize::Min) => Some(RequiredSize::Size(min)),
            Some(RequiredSize::Max) => Some(RequiredSize::Size(max)),
            other => other,
        };
        let cpu = self.cpu.run_compute(&cpu_job)?;
        let device = self.device.run_compute(job)?;
        // A warning (a value the spec leaves undefined, such as sqrt(-1)) explains a difference
        // as well as an error does.
        let ub = cpu
            .undefined_behaviour
            .first()
            .or(cpu.warnings.first())
            .cloned();
        for (i, (c, d)) in cpu.bindings.iter().zip(&device.bindings).enumerate() {
            self.compare(job, i, c, d, ub.as_deref());
        }
        self.summary.runs += 1;
        Ok(cpu)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A backend that adds `delta` to every float of its first binding, and reports undefined
    /// behaviour when asked.
    struct Adder {
        delta: f32,
        ub: bool,
        jobs: Vec<ComputeJob>,
    }

    impl Backend for Adder {
        fn supports(&self, _: &Requirement) -> Result<(), String> {
            Ok(())
        }

        fn run_compute(&mut self, job: &ComputeJob) -> Result<JobOutput, BackendError> {
            self.jobs.push(job.clone());
            let mut bindings: Vec<Vec<u8>> = job.bindings.iter().map(|b| b.bytes.clone()).collect();
            if let Some(first) = bindings.first_mut() {
                for chunk in first.chunks_exact_mut(4) {
                    let v = f32::from_le_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]);
                    chunk.copy_from_slice(&(v + self.delta).to_le_bytes());
                }
            }
            Ok(JobOutput {
                bindings,
                undefined_behaviour: if self.ub {
                    vec!["a finding".into()]
                } else {
                    Vec::new()
                },
                notes: Vec::new(),
                dispatch_time: None,
                debug_paths: Vec::new(),
                findings: Vec::new(),
                warnings: Vec::new(),
            })
        }
    }

    const SCRIPT: &str = "SHADER compute s SPIRV-ASM\nOpCapability Shader\nOpMemoryModel Logical GLSL450\nOpEntryPoint GLCompute %m \"main\"\nOpExecutionMode %m LocalSize 1 1 1\n%v = OpTypeVoid\n%f = OpTypeFunction %v\n%m = OpFunction %v None %f\n%l = OpLabel\nOpReturn\nOpFunctionEnd\nEND\nBUFFER b DATA_TYPE float DATA 1 2 3 END\nPIPELINE compute p\nATTACH s\nSUBGROUP s\nREQUIRED_SIZE MAX\nEND\nBIND BUFFER b AS storage DESCRIPTOR_SET 0 BINDING 0\nEND\nRUN p 1 1 1\nRUN p 1 1 1\nEXPECT b IDX 0 TOLERANCE 0.5 EQ 3 4 5\n";

    fn diff(
        cpu_delta: f32,
        device_delta: f32,
        ub: bool,
    ) -> (Summary, Vec<ComputeJob>, tangle_amber::RunReport) {
        let script = tangle_amber::parse(SCRIPT).expect("parses");
        let mut cpu = Adder {
            delta: cpu_delta,
            ub,
            jobs: Vec::new(),
        };
        let mut device = Adder {
            delta: device_delta,
            ub: false,
            jobs: Vec::new(),
        };
        let (summary, report) = {
            let mut d = DiffBackend::new(&script, &mut cpu, &mut device, (16, 64));
            let report = tangle_amber::run(&script, &mut d);
            (d.summary, report)
        };
        let mut jobs = cpu.jobs;
        jobs.extend(device.jobs);
        (summary, jobs, report)
    }

    #[test]
    fn lockstep_runs_compare_every_component() {
        // Within the script's TOLERANCE for the buffer: no difference.
        let (s, jobs, report) = diff(1.0, 1.25, false);
        assert_eq!((s.runs, s.total), (2, 0), "{s:?}");
        // Each RUN starts both sides from the CPU's bytes: the device's second job saw 2 3 4.
        let second_device = &jobs[3].bindings[0].bytes;
        assert_eq!(second_device[..4], 2.0f32.to_le_bytes());
        // The CPU got REQUIRED_SIZE MAX as the device's maximum; the device got MAX.
        assert_eq!(jobs[0].subgroup.required_size, Some(RequiredSize::Size(64)));
        assert_eq!(jobs[2].subgroup.required_size, Some(RequiredSize::Max));
        // The runner checks the CPU's results.
        assert_eq!(report.status, tangle_amber::Status::Pass);
        // Past the tolerance: three differences per RUN, named.
        let (s, _, _) = diff(1.0, 2.0, false);
        assert_eq!((s.total, s.explained, s.unexplained()), (6, 0, 6));
        let first = &s.kept[0];
        assert_eq!(
            (first.buffer.as_str(), first.element, first.component),
            ("b", 0, 0)
        );
        assert_eq!((first.cpu.as_str(), first.device.as_str()), ("2", "3"));
        // Undefined behaviour on the CPU explains them.
        let (s, _, _) = diff(1.0, 2.0, true);
        assert_eq!((s.total, s.explained), (6, 6));
        assert!(s.kept[0]
            .explained
            .as_deref()
            .is_some_and(|e| e.contains("a finding")));
    }

    #[test]
    fn floats_agree_within_ulps_or_the_tolerance() {
        let f = |x: f64| Component::Float(x);
        let one_ulp = f64::from(f32::from_bits(1.0f32.to_bits() + 1));
        let five_ulps = f64::from(f32::from_bits(1.0f32.to_bits() + 5));
        assert!(agree(f(1.0), f(one_ulp), Scalar::F32, None));
        assert!(!agree(f(1.0), f(five_ulps), Scalar::F32, None));
        assert!(agree(f(f64::NAN), f(-f64::NAN), Scalar::F32, None));
        assert!(!agree(f(f64::NAN), f(1.0), Scalar::F32, None));
        // -0 and +0 compare equal; the smallest subnormals of either sign are 2 ULPs apart.
        assert!(agree(f(0.0), f(-0.0), Scalar::F32, None));
        let tiny = f64::from(f32::from_bits(1));
        assert_eq!(ulp_distance(tiny, -tiny, Scalar::F32), Some(2));
        let abs = Tolerance {
            value: 0.01,
            percent: false,
        };
        let pct = Tolerance {
            value: 1.0,
            percent: true,
        };
        assert!(agree(f(1.0), f(1.005), Scalar::F32, Some(abs)));
        assert!(agree(f(200.0), f(201.5), Scalar::F32, Some(pct)));
        assert!(!agree(f(200.0), f(203.0), Scalar::F32, Some(pct)));
        // f16's ULP is coarse: 1 + 2^-10 is one ULP from 1.
        assert!(agree(f(1.0), f(1.0 + 1.0 / 1024.0), Scalar::F16, None));
        assert!(agree(
            Component::Int(-3),
            Component::Int(-3),
            Scalar::I32,
            None
        ));
        assert!(!agree(
            Component::Int(3),
            Component::Int(4),
            Scalar::I32,
            Some(abs)
        ));
    }

    #[test]
    fn ulp_distance_matches_a_walk_over_random_floats() {
        // An independent reference: step with next_up one value at a time.
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..500 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let a = f32::from_bits((seed >> 32) as u32);
            if !a.is_finite() {
                continue;
            }
            let steps = (seed & 7) as u32;
            let mut b = a;
            for _ in 0..steps {
                b = b.next_up();
            }
            if !b.is_finite() {
                continue;
            }
            // next_up steps from -0 straight to the smallest positive value, and -0 and +0 are
            // one point of the line, so the distance is the number of steps.
            assert_eq!(
                ulp_distance(f64::from(a), f64::from(b), Scalar::F32),
                Some(u64::from(steps)),
                "{a:e} {b:e}"
            );
        }
    }
}
