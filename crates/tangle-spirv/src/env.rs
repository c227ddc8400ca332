//! Target environments, spelled as SPIRV-Tools spells them (`spv1.6`, `vulkan1.3`, `opencl2.2`, ...),
//! and the SPIR-V version each one assembles to.

use crate::grammar::Version;

/// A client API environment a module is assembled or validated for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TargetEnv {
    /// `spv1.X` / `universal1.X`: no client API, SPIR-V version 1.X.
    Universal(Version),
    /// `vulkan1.X`, optionally with an explicit SPIR-V version (`vulkan1.1spv1.4`).
    Vulkan { api: Version, spirv: Version },
    /// `opencl1.2`, `opencl2.0` .. `opencl2.2`.
    OpenCl(Version),
}

const fn v(major: u8, minor: u8) -> Version {
    Version { major, minor }
}

impl TargetEnv {
    /// The default of `spirv-as` and `spirv-val`: SPIR-V 1.6 with no client API.
    pub const DEFAULT: TargetEnv = TargetEnv::Universal(v(1, 6));

    /// Parses the SPIRV-Tools spelling.
    pub fn parse(text: &str) -> Option<TargetEnv> {
        let minor = |rest: &str, max: u8| rest.parse::<u8>().ok().filter(|m| *m <= max);
        if let Some(rest) = text
            .strip_prefix("spv1.")
            .or_else(|| text.strip_prefix("universal1."))
        {
            return minor(rest, 6).map(|m| TargetEnv::Universal(v(1, m)));
        }
        if text == "vulkan1.1spv1.4" {
            return Some(TargetEnv::Vulkan {
                api: v(1, 1),
                spirv: v(1, 4),
            });
        }
        if let Some(rest) = text.strip_prefix("vulkan1.") {
            let m = minor(rest, 4)?;
            // The highest SPIR-V version each Vulkan version requires drivers to accept.
            let spirv = [v(1, 0), v(1, 3), v(1, 5), v(1, 6), v(1, 6)][usize::from(m)];
            return Some(TargetEnv::Vulkan {
                api: v(1, m),
                spirv,
            });
        }
        match text {
            "opencl1.2" => Some(TargetEnv::OpenCl(v(1, 2))),
            "opencl2.0" => Some(TargetEnv::OpenCl(v(2, 0))),
            "opencl2.1" => Some(TargetEnv::OpenCl(v(2, 1))),
            "opencl2.2" => Some(TargetEnv::OpenCl(v(2, 2))),
            _ => None,
        }
    }

    /// The SPIR-V version a module for this environment is written with.
    pub fn spirv_version(self) -> Version {
        match self {
            TargetEnv::Universal(ver) => ver,
            TargetEnv::Vulkan { spirv, .. } => spirv,
            TargetEnv::OpenCl(api) if api == v(2, 2) => v(1, 2),
            TargetEnv::OpenCl(_) => v(1, 0),
        }
    }

    /// Whether Vulkan's environment rules apply.
    pub fn is_vulkan(self) -> bool {
        matches!(self, TargetEnv::Vulkan { .. })
    }
}

impl std::fmt::Display for TargetEnv {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TargetEnv::Universal(ver) => write!(f, "spv{ver}"),
            TargetEnv::Vulkan { api, spirv } if *api == v(1, 1) && *spirv == v(1, 4) => {
                write!(f, "vulkan1.1spv1.4")
            }
            TargetEnv::Vulkan { api, .. } => write!(f, "vulkan{api}"),
            TargetEnv::OpenCl(api) => write!(f, "opencl{api}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_match_spirv_as() {
        // Recorded from `spirv-as --target-env E` header words (SPIRV-Tools 2025.5).
        for (env, ver) in [
            ("vulkan1.0", v(1, 0)),
            ("vulkan1.1", v(1, 3)),
            ("vulkan1.2", v(1, 5)),
            ("vulkan1.3", v(1, 6)),
            ("vulkan1.4", v(1, 6)),
            ("opencl1.2", v(1, 0)),
            ("opencl2.2", v(1, 2)),
            ("vulkan1.1spv1.4", v(1, 4)),
            ("spv1.3", v(1, 3)),
        ] {
            let parsed = TargetEnv::parse(env);
            assert_eq!(parsed.map(TargetEnv::spirv_version), Some(ver), "{env}");
            assert_eq!(parsed.map(|e| e.to_string()).as_deref(), Some(env));
        }
        assert_eq!(TargetEnv::parse("vulkan1.9"), None);
    }
}
