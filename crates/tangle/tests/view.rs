//! `tangle run --view`: the pages made from the repository's reconvergence and rotate scripts
//! hold the trace's picture (each subgroup's lanes, steps, splits and joins, counted against
//! the `--trace` file written by the same run), two policies side by side show where they
//! differ, and a real browser (headless Chromium, where installed) draws them: the rendered
//! DOM's lanes, steps, splits and joins are counted against the trace, the subgroup selector
//! and the policy comparison are driven through the page's URL fragment, and a screenshot is
//! kept under the target folder (`tmp/view/`) for people to look at.

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

fn repo(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(path)
}

/// A subgroup that runs more than 1,000 steps: a loop whose trip count and branch differ by lane.
const LONG: &str = r#"#!amber
SHADER compute comp GLSL TARGET_ENV spv1.3
#version 450
#extension GL_KHR_shader_subgroup_basic : enable
#extension GL_KHR_shader_subgroup_ballot : enable
layout(local_size_x = 32) in;
layout(set = 0, binding = 0) buffer O { uint o[]; };
void main() {
  uint i = gl_GlobalInvocationID.x;
  uint acc = 0u;
  for (uint k = 0u; k < 120u + i; k++) {
    if (((k + i) & 3u) == 0u) {
      acc += subgroupBallot(true).x;
    } else {
      acc += k;
    }
  }
  o[i] = acc;
}
END
BUFFER o DATA_TYPE uint32 SIZE 32 FILL 0
PIPELINE compute p
  ATTACH comp
  BIND BUFFER o AS storage DESCRIPTOR_SET 0 BINDING 0
END
RUN p 1 1 1
"#;

fn out_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("view");
    std::fs::create_dir_all(&dir).expect("the target folder is writable");
    dir
}

/// Runs `tangle run SCRIPT --view PAGE --trace TRACE ARGS...` and returns the page's data
/// (the JSON the page embeds) and the trace file.
fn view(script: &str, args: &[&str]) -> (PathBuf, Value, Value) {
    let stem = Path::new(script)
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("page")
        .to_string();
    let tag = args.join("_").replace([',', ';', ':'], "-");
    let page = out_dir().join(format!("{stem}{tag}.html"));
    let trace = out_dir().join(format!("{stem}{tag}.json"));
    let out = Command::new(env!("CARGO_BIN_EXE_tangle"))
        .arg("run")
        .arg(repo(script))
        .arg("--view")
        .arg(&page)
        .arg("--trace")
        .arg(&trace)
        .args(args)
        .output()
        .expect("the tangle binary runs");
    assert!(
        out.status.success(),
        "{script}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let html = std::fs::read_to_string(&page).expect("the page was written");
    assert!(
        !html.contains("http://") && !html.contains("https://"),
        "no network"
    );
    let start = html
        .find("type=\"application/json\">")
        .expect("the page embeds its data")
        + "type=\"application/json\">".len();
    let end = start + html[start..].find("</script>").expect("the data ends");
    let data = serde_json::from_str(&html[start..end]).expect("the data is JSON");
    let trace = serde_json::from_str(&std::fs::read_to_string(&trace).expect("trace written"))
        .expect("the trace is JSON");
    (page, data, trace)
}

/// Per subgroup `(workgroup, subgroup)` of one dispatch of a trace file: its `block` events
/// as (block, mask), its split count and its join count.
type Counts = BTreeMap<(String, u64), (Vec<(u64, String)>, usize, usize)>;

fn trace_counts(dispatch: &Value) -> Counts {
    let mut c = Counts::new();
    for e in dispatch["events"].as_array().expect("events") {
        let key = (
            e["workgroup"].to_string(),
            e["subgroup"].as_u64().expect("sg"),
        );
        let entry = c.entry(key).or_default();
        match e["kind"].as_str() {
            Some("block") => entry.0.push((
                e["block"].as_u64().expect("block"),
                e["mask"].as_str().expect("mask").to_string(),
            )),
            Some("split") => entry.1 += 1,
            Some("join") => entry.2 += 1,
            _ => {}
        }
    }
    c
}

/// Checks every subgroup of every dispatch the page draws under policy `p` against the trace:
/// its steps at a block's start are the trace's `block` events in order, and it has the
/// trace's splits and joins. Returns how many subgroups were checked.
fn check_against_trace(data: &Value, trace: &Value, p: usize) -> usize {
    let runs = data["runs"].as_array().expect("runs");
    let dispatches = trace["dispatches"].as_array().expect("dispatches");
    assert_eq!(runs.len(), dispatches.len());
    let mut checked = 0;
    for (run, dispatch) in runs.iter().zip(dispatches) {
        let counts = trace_counts(dispatch);
        let subs = run["policies"][p]["subgroups"]
            .as_array()
            .expect("subgroups");
        assert_eq!(subs.len(), counts.len(), "every subgroup drawn");
        for s in subs {
            let key = (
                s["workgroup"].to_string(),
                s["subgroup"].as_u64().expect("sg"),
            );
            let (blocks, splits, joins) = &counts[&key];
            let steps: Vec<(u64, String)> = s["steps"]
                .as_array()
                .expect("steps")
                .iter()
                .filter(|st| st["resume"] == false)
                .map(|st| {
                    let b = st["block"].as_u64().expect("block");
                    (b, st["mask"].as_str().expect("mask").to_string())
                })
                .collect();
            assert_eq!(&steps, blocks, "{key:?}: steps are the block events");
            assert_eq!(
                s["splits"].as_array().map(Vec::len),
                Some(*splits),
                "{key:?}"
            );
            assert_eq!(s["joins"].as_array().map(Vec::len), Some(*joins), "{key:?}");
            checked += 1;
        }
    }
    checked
}

const SCRIPTS: &[&str] = &[
    "tests/amber/maximal_reconvergence.amber",
    "tests/amber/subgroup_rotate.amber",
    "tests/amber/group/rotate_divergent.amber",
    "examples/rotate.amber",
    "tests/amber/policy/uniform_control_flow.amber",
    "tests/amber/policy/relies/relies_on_maximal_reconvergence.amber",
    "tests/amber/policy/relies/relies_on_branch_order.amber",
];

#[test]
fn pages_hold_the_traces_picture() {
    let (mut splits, mut joins) = (0, 0);
    for script in SCRIPTS {
        let (_, data, trace) = view(script, &[]);
        let checked = check_against_trace(&data, &trace, 0);
        assert!(checked > 0, "{script}: no subgroup drawn");
        let runs = data["runs"].as_array().expect("runs");
        for s in runs.iter().flat_map(|r| {
            r["policies"][0]["subgroups"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        }) {
            splits += s["splits"].as_array().map_or(0, Vec::len);
            joins += s["joins"].as_array().map_or(0, Vec::len);
        }
    }
    // The reconvergence scripts diverge and rejoin: splits and joins are drawn.
    assert!(splits > 0 && joins > 0, "{splits} splits, {joins} joins");
}

#[test]
fn two_policies_show_where_tangles_and_stored_values_differ() {
    let (_, data, trace) = view(
        "tests/amber/policy/relies/relies_on_maximal_reconvergence.amber",
        &["--view-policies", "maximal,weak"],
    );
    check_against_trace(&data, &trace, 0);
    let run = &data["runs"][0];
    assert_eq!(run["policies"].as_array().map(Vec::len), Some(2));
    assert!(run["stores_differ"].as_u64() > Some(0), "stores differ");
    let differing = |p: usize| {
        run["policies"][p]["subgroups"][0]["steps"]
            .as_array()
            .expect("steps")
            .iter()
            .filter(|s| s["differs"] == true)
            .count()
    };
    assert!(differing(0) > 0 && differing(1) > 0);
    // A script that relies on no policy: the same tangles, the same values.
    let (_, same, _) = view(
        "tests/amber/policy/uniform_control_flow.amber",
        &["--view-policies", "maximal,weak"],
    );
    for run in same["runs"].as_array().expect("runs") {
        assert_eq!(run["stores_differ"].as_u64(), Some(0));
    }
}

/// Headless Chromium, if installed (Debian's `chromium`).
fn chromium() -> Option<PathBuf> {
    let found = ["chromium", "chromium-browser"].iter().find_map(|name| {
        std::env::var_os("PATH").and_then(|paths| {
            std::env::split_paths(&paths)
                .map(|d| d.join(name))
                .find(|p| p.is_file())
        })
    });
    if found.is_none() {
        assert!(
            std::env::var("TANGLE_REQUIRE_CHROMIUM").as_deref() != Ok("1"),
            "TANGLE_REQUIRE_CHROMIUM=1 but no chromium on PATH"
        );
        println!("skipped: no chromium on PATH (Debian package `chromium`)");
    }
    found
}

fn headless(browser: &Path, extra: &[&str], url: &str) -> String {
    // A profile folder of its own per call: the tests run browsers side by side.
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let profile = out_dir().join(format!("chromium-profile-{}-{n}", std::process::id()));
    let out = Command::new(browser)
        .arg(format!("--user-data-dir={}", profile.display()))
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--allow-file-access-from-files",
        ])
        .args(extra)
        .arg(url)
        .output()
        .expect("chromium runs");
    let _ = std::fs::remove_dir_all(&profile);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Counts the drawn elements of each policy's panel in a rendered DOM: (lane rows, steps,
/// steps at a block's start, splits, joins). Only elements with numbers in them count (the
/// page's script, also in the DOM, has the same tags with `${...}` in them).
fn dom_counts(dom: &str) -> Vec<[usize; 5]> {
    let count = |s: &str, head: &str| {
        s.match_indices(head)
            .filter(|(i, _)| s[i + head.len()..].starts_with(|c: char| c.is_ascii_digit()))
            .count()
    };
    let head = "<section class=\"panel\" data-policy=\"";
    dom.match_indices(head)
        .filter(|(i, _)| dom[i + head.len()..].starts_with(|c: char| c.is_ascii_digit()))
        .map(|(i, _)| {
            let p = &dom[i..];
            let p = p.split("</section>").next().unwrap_or("");
            [
                count(p, "<text class=\"lane\" x=\""),
                count(p, "<rect class=\"step\" data-step=\"")
                    + count(p, "<rect class=\"step differs\" data-step=\"")
                    + count(p, "<rect class=\"step resume\" data-step=\"")
                    + count(p, "<rect class=\"step differs resume\" data-step=\""),
                count(p, "<rect class=\"step\" data-step=\"")
                    + count(p, "<rect class=\"step differs\" data-step=\""),
                count(p, "<path class=\"split\" data-step=\""),
                count(p, "<path class=\"join\" data-step=\""),
            ]
        })
        .collect()
}

#[test]
fn chromium_draws_the_pages() {
    let Some(browser) = chromium() else { return };
    // Subgroup 1 of the 16-lane dispatch, under two policies side by side.
    let (page, data, trace) = view(
        "tests/amber/maximal_reconvergence.amber",
        &["--view-policies", "maximal,weak"],
    );
    let url = format!("file://{}#run=0&wg=0,0,0&sg=1&show=both", page.display());
    let dom = headless(&browser, &["--dump-dom"], &url);
    let panels = dom_counts(&dom);
    assert_eq!(panels.len(), 2, "two policies side by side");
    let counts = trace_counts(&trace["dispatches"][0]);
    let (blocks, splits, joins) = &counts[&("[0,0,0]".to_string(), 1)];
    let size = trace["dispatches"][0]["subgroup_size"]
        .as_u64()
        .expect("size") as usize;
    let steps = data["runs"][0]["policies"][0]["subgroups"][1]["steps"]
        .as_array()
        .map_or(0, Vec::len);
    assert_eq!(panels[0], [size, steps, blocks.len(), *splits, *joins]);
    assert!(
        dom.contains("<option value=\"1\" selected=\"\">1</option>"),
        "subgroup 1 selected"
    );
    // The second policy alone.
    let url = format!("file://{}#run=1&wg=0,0,0&sg=0&show=b", page.display());
    let dom = headless(&browser, &["--dump-dom"], &url);
    assert_eq!(
        dom.matches("<section class=\"panel\" data-policy=\"1\"")
            .count(),
        1
    );
    assert_eq!(
        dom.matches("<section class=\"panel\" data-policy=\"0\"")
            .count(),
        0
    );

    // A policy-dependent script: the differing steps and stored values are on the page.
    let (page, data, trace) = view(
        "tests/amber/policy/relies/relies_on_maximal_reconvergence.amber",
        &["--view-policies", "maximal,weak"],
    );
    let url = format!("file://{}#run=0&wg=0,0,0&sg=0&show=both", page.display());
    let dom = headless(&browser, &["--dump-dom"], &url);
    let panels = dom_counts(&dom);
    let counts = trace_counts(&trace["dispatches"][0]);
    let (blocks, splits, joins) = &counts[&("[0,0,0]".to_string(), 0)];
    assert_eq!(panels[0][2..], [blocks.len(), *splits, *joins]);
    assert!(dom.contains("<rect class=\"step differs\" data-step=\""));
    let stores = data["runs"][0]["stores"].as_array().map_or(0, Vec::len);
    assert!(stores > 0);
    // Rows with a binding in them (the page's script has the row's tag too).
    let rows = dom
        .match_indices("<tr class=\"store\"><td>")
        .filter(|(i, m)| dom[i + m.len()..].starts_with(|c: char| c.is_ascii_digit()))
        .count();
    assert_eq!(rows, stores);
    let shot = out_dir().join("relies_on_maximal_reconvergence.png");
    headless(
        &browser,
        &[
            &format!("--screenshot={}", shot.display()),
            "--window-size=1400,800",
            "--hide-scrollbars",
        ],
        &url,
    );
    let png = std::fs::read(&shot).expect("the screenshot was written");
    assert!(png.starts_with(b"\x89PNG") && png.len() > 10_000);
    println!("screenshot: {}", shot.display());

    // The hovered lane's value of the subgroup operation: rotate_divergent's lane 2 gets
    // subgroupRotate(i * 10, 2) = 40, and the step's block lights up in the graph.
    let (page, _, _) = view("tests/amber/group/rotate_divergent.amber", &[]);
    let url = format!("file://{}#run=0&wg=0,0,0&sg=0&hover=1,2", page.display());
    let dom = headless(&browser, &["--dump-dom"], &url);
    assert!(
        dom.contains("<span class=\"value\">lane 2: 0x28</span>"),
        "{dom}"
    );
    assert!(dom.contains("active 0x55555555"));
    assert!(dom.contains("<g class=\"cfg-block hot\""));
}

#[test]
fn chromium_draws_a_thousand_step_subgroup_in_under_a_second() {
    let Some(browser) = chromium() else { return };
    let script = out_dir().join("long_loop.amber");
    std::fs::write(&script, LONG).expect("the target folder is writable");
    let (page, data, _) = view(script.to_str().expect("a UTF-8 path"), &[]);
    let steps = data["runs"][0]["policies"][0]["subgroups"][0]["steps"]
        .as_array()
        .map_or(0, Vec::len);
    assert!(steps >= 1000, "{steps} steps");
    let dom = headless(
        &browser,
        &["--dump-dom"],
        &format!("file://{}", page.display()),
    );
    let head = "data-drawn-ms=\"";
    let at = dom.find(head).expect("the page drew") + head.len();
    let ms: u64 = dom[at..]
        .split('"')
        .next()
        .and_then(|n| n.parse().ok())
        .expect("a number of milliseconds");
    assert!(ms < 1000, "{steps} steps drawn in {ms} ms");
    assert_eq!(dom_counts(&dom)[0][1], steps);
}

#[test]
fn hovered_values_are_what_the_subgroup_operation_gave_each_lane() {
    // rotate_divergent: inside `if ((i & 1) == 0)` lane i gets subgroupRotate(i * 10, 2), which
    // is 10 * ((i + 2) mod 32), 0 for lane 30 (a value unchanged from the lane's first look).
    let (_, data, _) = view("tests/amber/group/rotate_divergent.amber", &[]);
    let run = &data["runs"][0];
    let rotate = run["blocks"]["blocks"]
        .as_array()
        .expect("blocks")
        .iter()
        .flat_map(|b| b["marked"].as_array().cloned().unwrap_or_default())
        .find(|m| {
            m["text"]
                .as_str()
                .is_some_and(|t| t.contains("OpGroupNonUniformRotateKHR"))
        })
        .expect("the rotate is marked");
    let sub = &run["policies"][0]["subgroups"][0];
    let got: Vec<(u64, String)> = sub["values"]
        .as_array()
        .expect("values")
        .iter()
        .filter(|v| v["at"] == rotate["at"])
        .map(|v| {
            let lane = v["lane"].as_u64().expect("lane");
            (lane, v["value"][0].as_str().expect("value").to_string())
        })
        .collect();
    let want: Vec<(u64, String)> = (0..32u64)
        .step_by(2)
        .map(|i| (i, format!("{:#x}", 10 * ((i + 2) % 32))))
        .collect();
    assert_eq!(got, want);
    // Each at the step of the block holding the rotate, where the lane is active.
    for v in sub["values"].as_array().expect("values") {
        let step = &sub["steps"][v["step"].as_u64().expect("step") as usize];
        let mask = u128::from_str_radix(&step["mask"].as_str().expect("mask")[2..], 16);
        assert_eq!(
            mask.map(|m| m >> v["lane"].as_u64().expect("lane") & 1),
            Ok(1)
        );
    }
}

#[test]
fn findings_are_placed_at_their_step_and_lane() {
    // rotate_inactive_source: subgroupRotate(v, 1) under `if` reads inactive lanes; the
    // finding names invocation 0, placed on lane 0 at the step of the block holding the rotate.
    let (_, data, _) = view("tests/amber/group/rotate_inactive_source.amber", &[]);
    let run = &data["runs"][0];
    let sub = &run["policies"][0]["subgroups"][0];
    let findings = sub["findings"].as_array().expect("findings");
    assert_eq!(findings.len(), 1, "{findings:?}");
    let f = &findings[0];
    assert_eq!(
        (f["kind"].as_str(), f["lane"].as_u64()),
        (Some("group-value"), Some(0))
    );
    let block = &sub["steps"][f["step"].as_u64().expect("a step") as usize]["block"];
    let holder = run["blocks"]["blocks"]
        .as_array()
        .expect("blocks")
        .iter()
        .find(|b| &b["id"] == block)
        .expect("the step's block");
    assert!(holder["marked"][0]["text"]
        .as_str()
        .is_some_and(|t| t.contains("OpGroupNonUniformRotateKHR")));
}

#[test]
fn view_options_are_checked() {
    let script = repo("examples/rotate.amber");
    let page = out_dir().join("refused.html");
    let page = page.to_str().expect("a UTF-8 path");
    for (args, says) in [
        (vec!["--view-policies", "maximal,weak"], "needs --view"),
        (
            vec!["--view", page, "--view-policies", "maximal"],
            "name two policies",
        ),
        (
            vec!["--view", page, "--view-policies", "maximal,sideways"],
            "sideways",
        ),
        (vec!["--view", page, "--policy", "all"], "--policy all"),
        (vec!["--view", page, "--backend", "vulkan"], "--view"),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_tangle"))
            .arg("run")
            .arg(&script)
            .args(&args)
            .output()
            .expect("the tangle binary runs");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
}
