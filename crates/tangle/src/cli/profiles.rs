//! `tangle profiles`: lists the device profiles a run can target (`--profile NAME`); with
//! `--devices`, the Vulkan physical devices instead (`--device N` of `run --backend vulkan` and
//! `diff`).

use super::unusable::Unusable;
use super::Exit;
use tangle_exec::profile::subgroup_ops;
use tangle_exec::Profile;

#[derive(clap::Args)]
pub struct Args {
    /// List the Vulkan physical devices (through the system loader) instead of the profiles.
    #[arg(long)]
    devices: bool,
}

/// The Vulkan names of the subgroup-operation bits a profile supports.
fn operation_names(bits: u32) -> Vec<&'static str> {
    [
        (subgroup_ops::BASIC, "basic"),
        (subgroup_ops::VOTE, "vote"),
        (subgroup_ops::ARITHMETIC, "arithmetic"),
        (subgroup_ops::BALLOT, "ballot"),
        (subgroup_ops::SHUFFLE, "shuffle"),
        (subgroup_ops::SHUFFLE_RELATIVE, "shuffleRelative"),
        (subgroup_ops::CLUSTERED, "clustered"),
        (subgroup_ops::QUAD, "quad"),
        (subgroup_ops::ROTATE, "rotate"),
        (subgroup_ops::ROTATE_CLUSTERED, "rotateClustered"),
    ]
    .into_iter()
    .filter(|(bit, _)| bits & bit != 0)
    .map(|(_, name)| name)
    .collect()
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
