//! Runs the Amber scripts of `tests/amber/resources/` (descriptor arrays, workgroup memory
//! explicit layout, images, texel buffers and samplers) through the `tangle` binary: scripts
//! directly inside pass (exit 0), `fail/` fail (1), `unsupported/` are refused (77); and checks
//! the words of the findings that must name what went wrong.

use std::path::{Path, PathBuf};
use std::process::Command;

fn dir(sub: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/amber/resources")
        .join(sub)
}

/// The `.amber` files directly inside `sub`, sorted.
fn scripts(sub: &str) -> Vec<PathBuf> {
    let mut list: Vec<PathBuf> = std::fs::read_dir(dir(sub))
        .unwrap_or_else(|e| panic!("tests/amber/resources/{sub}: {e}"))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "amber"))
        .collect();
    list.sort();
    assert!(
        !list.is_empty(),
        "no scripts in tests/amber/resources/{sub}"
    );
    list
}

/// Runs `tangle run SCRIPT ARGS...`: (exit code, stdout + stderr).
fn tangle_run(script: &Path, args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_tangle"))
        .arg("run")
        .arg(script)
        .args(args)
        .output()
        .expect("the tangle binary runs");
    (
        out.status.code().unwrap_or(-1),
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    )
}

/// Runs every script of `sub`, expecting `code`; returns (script, output) and prints the count.
fn expect_exit(sub: &str, code: i32) -> Vec<(PathBuf, String)> {
    let mut wrong = Vec::new();
    let mut outputs = Vec::new();
    for script in scripts(sub) {
        let (got, out) = tangle_run(&script, &["--threads", "2"]);
        if got != code {
            wrong.push(format!(
                "{}: exit {got}, expected {code}\n{out}",
                script.display()
            ));
        }
        outputs.push((script, out));
    }
    println!("tests/amber/resources/{sub}: {} scripts run", outputs.len());
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    outputs
}

/// The output of `name` among `outputs`.
fn output_of<'a>(outputs: &'a [(PathBuf, String)], name: &str) -> &'a str {
    outputs
        .iter()
        .find(|(p, _)| p.ends_with(name))
        .map(|(_, o)| o.as_str())
        .unwrap_or_else(|| panic!("{name} was not run"))
}

#[test]
fn passing_resource_scripts_exit_0_with_any_thread_count() {
    let outputs = expect_exit("", 0);
    for (script, out) in &outputs {
        assert!(out.contains("PASS"), "{}: {out}", script.display());
        let (c1, one) = tangle_run(script, &["--threads", "1", "--json"]);
        let (c4, four) = tangle_run(script, &["--threads", "4", "--json"]);
        assert_eq!((c1, &one), (c4, &four), "{}", script.display());
    }
    // An integer the format cannot hold is an undefined value: a warning, which `--deny`
    // makes fail the run.
    let narrow = output_of(&outputs, "image_value_not_representable.amber");
    assert!(
        narrow.contains(
            "warning[image-value]: an image write to the R8_UINT image at set 0, binding 0 has a component the format cannot represent"
        ) && narrow.contains("invocation (1, 0, 0)"),
        "{narrow}"
    );
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/amber/resources/image_value_not_representable.amber");
    let (code, out) = tangle_run(&script, &["--deny", "image-value"]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("error[image-value]"), "{out}");
}

#[test]
fn failing_resource_scripts_exit_1_and_name_the_descriptor() {
    let outputs = expect_exit("fail", 1);
    for (script, out) in &outputs {
        assert!(out.contains("FAIL"), "{}: {out}", script.display());
    }
    // Issue 16's first finding: element 1 of `b[2]` bound with one plain buffer is unbound, not
    // byte 4 of element 0's buffer.
    let one = output_of(&outputs, "descriptor_array_one_buffer.amber");
    assert!(
        one.contains(
            "access through element 1 of the descriptor array at set 0, binding 0, which has nothing bound"
        ),
        "{one}"
    );
    assert!(one.contains("expected EQ 20, actual 0"), "{one}");
    let image = output_of(&outputs, "image_out_of_bounds.amber");
    assert!(
        image.contains("out-of-bounds image access at [4], level 0, of the image at set 0, binding 0 (4x1x1, 1 level)")
            && image.contains("invocation (4, 0, 0)"),
        "{image}"
    );
    let unnormalized = output_of(&outputs, "sampler_unnormalized_repeat.amber");
    assert!(
        unnormalized.contains("VUID-VkSamplerCreateInfo-unnormalizedCoordinates-01072 to 01075"),
        "{unnormalized}"
    );
    // An unbound element of an array of images: a finding naming the binding and index, never
    // another image; shown at the GLSL line of the read (GLSL is compiled with glslang -g).
    let unbound = output_of(&outputs, "image_array_unbound.amber");
    assert!(
        unbound.contains("error[descriptor]: access through element 2 of the descriptor array at set 0, binding 0, which has nothing bound")
            && unbound.contains("| s += imageLoad(imgs[k]"),
        "{unbound}"
    );
    // An unbound element of an array of samplers: no sampler, never another one; shown at the
    // GLSL line of the sampling.
    let no_sampler = output_of(&outputs, "sampler_array_unbound.amber");
    assert!(
        no_sampler.contains("error[descriptor]: access through element 2 of the descriptor array at set 0, binding 1, which has nothing bound")
            && no_sampler.contains("| o.v[k] = textureLod(sampler2D(tex, ss[k])"),
        "{no_sampler}"
    );
    // An index past what is bound to a runtime-sized array of images.
    let runtime = output_of(&outputs, "runtime_image_array_unbound.amber");
    assert!(
        runtime.contains("error[descriptor]: access through element 2 of the descriptor array at set 0, binding 0, which has nothing bound")
            && runtime.contains("by invocations (2, 0, 0)"),
        "{runtime}"
    );
    // Two descriptors of the same bytes (overlapping ranges of one buffer) race as one
    // buffer: the finding names both and counts bytes from the lower one's start.
    let overlap = output_of(&outputs, "overlapping_descriptors_race.amber");
    assert!(
        overlap.contains("error[race]: data race on buffer (set 0, binding 0) (bytes from its start; the same memory as buffer (set 0, binding 0, array element 1)) bytes 4..8"),
        "{overlap}"
    );
    let past = output_of(&outputs, "descriptor_array_index_past_end.amber");
    assert!(
        past.contains(
            "element 2 of the descriptor array at set 0, binding 0, which has 2 elements"
        ) && past.contains("invocation (2, 0, 0)"),
        "{past}"
    );
}

#[test]
fn unsupported_resource_scripts_exit_77_and_say_why() {
    let outputs = expect_exit("unsupported", 77);
    let implicit = output_of(&outputs, "implicit_lod.amber");
    assert!(
        implicit.contains("OpImageSampleImplicitLod in a compute shader (implicit level of detail needs derivative groups)"),
        "{implicit}"
    );
    // Upstream Amber creates 1D, 2D and 3D image views of one layer only: no script can bind
    // an arrayed or cube image, so tangle names the image and why.
    let views =
        "upstream Amber's IMAGE has no layers or faces and binds 1D, 2D and 3D image views only";
    let arrayed = output_of(&outputs, "arrayed_image.amber");
    assert!(
        arrayed.contains(&format!("an arrayed image (Arrayed 1; {views})")),
        "{arrayed}"
    );
    let cube = output_of(&outputs, "cube_image.amber");
    assert!(
        cube.contains(&format!("a cube image (Dim Cube; {views})")),
        "{cube}"
    );
    let cube_array = output_of(&outputs, "cube_array_sampler.amber");
    assert!(
        cube_array.contains(&format!("a cube image (Dim Cube; {views})")),
        "{cube_array}"
    );
    let arrays = output_of(&outputs, "arrayed_image_array.amber");
    assert!(
        arrays.contains(&format!("an arrayed image (Arrayed 1; {views})")),
        "{arrays}"
    );
}
