//! `tangle profiles`: lists the device profiles a run can target (`--profile NAME`); with
//! `--devices`, the Vulkan physical devices instead (`--device N` of `run --backend vulkan` and
//! `diff`); with `--from-device [--device N] -o FILE.toml`, writes a device's profile file, which
//! `tangle run --profile FILE.toml` loads to emulate that device on the CPU.

use super::unusable::Unusable;
use super::Exit;
use tangle_exec::profile::file::operation_names;
use tangle_exec::Profile;

#[derive(clap::Args)]
pub struct Args {
    /// List the Vulkan physical devices (through the system loader) instead of the profiles.
    #[arg(long)]
    devices: bool,
    /// Write the profile of a Vulkan device (subgroup, integer-dot-product and
    /// cooperative-matrix properties, limits) to the file -o names.
    #[arg(long = "from-device", requires = "output")]
    from_device: bool,
    /// The Vulkan device for --from-device (`--devices` lists them).
    #[arg(long, value_name = "N", requires = "from_device")]
    device: Option<usize>,
    /// The profile file to write (`-` for standard output).
    #[arg(short = 'o', value_name = "FILE.toml", requires = "from_device")]
    output: Option<String>,
}

/// Writes the profile of device `index` to `output`; a missing loader, driver or device is exit
/// 77, named on stderr.
fn from_device(index: usize, output: &str) -> Result<Exit, Unusable> {
    let loader = std::env::var_os(tangle_vulkan::LOADER_ENV);
    let devices = match tangle_vulkan::list_devices(loader.as_deref()) {
        Ok(d) => d,
        Err(e) => {
            super::io::report(&e.to_string());
            return Ok(Exit::Unsupported);
        }
    };
    let count = devices.len();
    let Some(device) = devices.into_iter().nth(index) else {
        super::io::report(&format!(
            "no Vulkan device: no device {index} (there are {count})"
        ));
        return Ok(Exit::Unsupported);
    };
    let text = device.profile().to_toml(Some(&device.facts()));
    let text = format!(
        "# A tangle device profile (format: crates/tangle-exec/src/profile/file.rs), written by
# tangle profiles --from-device --device {index}.
{text}"
    );
    if output == "-" {
        print!("{text}");
    } else {
        std::fs::write(output, text).map_err(|e| {
            Unusable::new(
                super::unusable::Kind::Io,
                format!("cannot write {output}: {e}"),
            )
        })?;
    }
    Ok(Exit::Success)
}

/// Prints every Vulkan device on stdout; no loader, driver or device is exit 77, named on
/// stderr.
fn devices() -> Exit {
    let loader = std::env::var_os(tangle_vulkan::LOADER_ENV);
    match tangle_vulkan::list_devices(loader.as_deref()) {
        Ok(list) if list.is_empty() => {
            super::io::report("no Vulkan device: the driver reports no physical device");
            Exit::Unsupported
        }
        Ok(list) => {
            for d in list {
                for line in d.describe() {
                    println!("{line}");
                }
            }
            Exit::Success
        }
        Err(e) => {
            super::io::report(&e.to_string());
            Exit::Unsupported
        }
    }
}

/// Prints every profile on stdout.
pub fn run(args: &Args) -> Result<Exit, Unusable> {
    if args.devices {
        return Ok(devices());
    }
    if let (true, Some(output)) = (args.from_device, &args.output) {
        return from_device(args.device.unwrap_or(0), output);
    }
    for p in Profile::all() {
        let [x, y, z] = p.max_workgroup_size;
        println!("{}: {}", p.name, p.description);
        println!("  subgroup size {}; workgroup size up to {x}x{y}x{z} ({} invocations); {} bytes of workgroup memory",
            p.subgroup_size, p.max_workgroup_invocations, p.max_shared_memory);
        println!(
            "  subgroup operations: {}",
            operation_names(p.subgroup_operations).join(", ")
        );
        // One VkCooperativeMatrixPropertiesKHR entry a line, in driver order: MxNxK, A x B + C -> Result.
        if p.cooperative_matrix.is_empty() {
            println!("  cooperative matrices: none (no VK_KHR_cooperative_matrix)");
        } else {
            println!(
                "  cooperative matrices (MxNxK A x B + C -> Result, scope), {} entries:",
                p.cooperative_matrix.len()
            );
            for e in &p.cooperative_matrix {
                println!("    {e}");
            }
        }
    }
    Ok(Exit::Success)
}
