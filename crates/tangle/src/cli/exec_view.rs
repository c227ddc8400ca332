//! `tangle exec --view DIR`: renders the driver's picture data (`DIR/pipeline-N.json`, written
//! by `tangle_icd::view`, which explains why the driver does not render them itself) into one
//! page per pipeline with [`tangle::view`], the renderer of `tangle run --view`, and an
//! `index.html` linking them.

use tangle::cpu_backend::TracedRun;
use tangle_exec::trace::{Event, EventKind, Trace};

/// Renders every `pipeline-N.json` of `dir` and writes `index.html`; the number of pages.
pub fn render(dir: &std::path::Path) -> std::io::Result<usize> {
    let mut dumps: Vec<(u64, std::path::PathBuf)> = std::fs::read_dir(dir)?
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let n = name
                .strip_prefix("pipeline-")?
                .strip_suffix(".json")?
                .parse()
                .ok()?;
            Some((n, e.path()))
        })
        .collect();
    dumps.sort();
    let mut links = Vec::new();
    for (n, path) in &dumps {
        let text = std::fs::read_to_string(path)?;
        let Ok(dump) = serde_json::from_str::<serde_json::Value>(&text) else {
            continue;
        };
        let Some(run) = traced_run(&dump) else {
            continue;
        };
        let title = format!(
            "{} (submission {}, dispatch {})",
            dump["pipeline"].as_str().unwrap_or("pipeline"),
            dump["submission"],
            dump["dispatch"]
        );
        let policy = run.trace.policy.clone();
        let page = tangle::view::Page::new(&title, &[policy], &[vec![run]]);
        let file = format!("pipeline-{n}.html");
        std::fs::write(dir.join(&file), page.html())?;
        links.push((file, title));
    }
    std::fs::write(dir.join("index.html"), index(&links))?;
    Ok(links.len())
}

/// The index page: one link per pipeline.
fn index(links: &[(String, String)]) -> String {
    let page = maud::html! {
        (maud::DOCTYPE)
        html {
            head {
                meta charset="utf-8";
                title { "tangle exec: pipelines" }
            }
            body {
                h1 { "tangle exec: how each pipeline's invocations diverged and reconverged" }
                p {
                    "One picture per pipeline, of its first dispatch (at most "
                    (tangle_icd::view::MAX_PIPELINES) " pipelines)."
                }
                ul {
                    @for (file, title) in links {
                        li { a href=(file) { (title) } }
                    }
                }
            }
        }
    };
    page.into_string()
}

/// A mask of the trace's JSON (`"0x…"`).
fn mask(v: &serde_json::Value) -> u128 {
    v.as_str()
        .and_then(|s| u128::from_str_radix(s.trim_start_matches("0x"), 16).ok())
        .unwrap_or(0)
}

/// A number of the JSON.
fn num(v: &serde_json::Value) -> u64 {
    v.as_u64().unwrap_or(0)
}

/// Three numbers of the JSON.
fn xyz(v: &serde_json::Value) -> [u32; 3] {
    [0, 1, 2].map(|i| num(&v[i]) as u32)
}

/// The trace of its JSON form (`docs/trace-format.md`, [`Trace::to_json`]).
fn trace(v: &serde_json::Value) -> Trace {
    let empty = Vec::new();
    let events = v["events"]
        .as_array()
        .unwrap_or(&empty)
        .iter()
        .filter_map(|e| {
            let kind = match e["kind"].as_str()? {
                "block" => EventKind::Block {
                    mask: mask(&e["mask"]),
                },
                "split" => EventKind::Split {
                    mask: mask(&e["mask"]),
                    into: e["into"]
                        .as_array()?
                        .iter()
                        .map(|i| (num(&i["block"]) as u32, mask(&i["mask"])))
                        .collect(),
                },
                "join" => EventKind::Join {
                    from: e["from"].as_array()?.iter().map(mask).collect(),
                },
                "values" => EventKind::Values {
                    lane: num(&e["lane"]) as u32,
                    at: num(&e["at"]) as usize,
                    set: e["set"]
                        .as_array()?
                        .iter()
                        .map(|s| {
                            let values = s["value"]
                                .as_array()
                                .map_or(Vec::new(), |v| v.iter().map(|x| mask(x) as u64).collect());
                            (num(&s["id"]) as u32, values)
                        })
                        .collect(),
                },
                _ => return None,
            };
            Some(Event {
                workgroup: xyz(&e["workgroup"]),
                subgroup: num(&e["subgroup"]) as u32,
                function: num(&e["function"]) as u32,
                block: num(&e["block"]) as u32,
                kind,
            })
        })
        .collect();
    Trace {
        policy: v["policy"].as_str().unwrap_or("maximal").to_string(),
        subgroup_size: num(&v["subgroup_size"]) as u32,
        events,
        dropped: num(&v["dropped"]),
    }
}

/// The traced dispatch a dump describes.
fn traced_run(dump: &serde_json::Value) -> Option<TracedRun> {
    let spirv: Vec<u32> = dump["spirv"]
        .as_array()?
        .iter()
        .map(|w| num(w) as u32)
        .collect();
    let findings = dump["findings"]
        .as_array()
        .map(|list| list.iter().map(summary).collect())
        .unwrap_or_default();
    Some(TracedRun {
        trace: trace(&dump["trace"]),
        spirv,
        line: num(&dump["dispatch"]) as u32,
        groups: xyz(&dump["groups"]),
        local_size: xyz(&dump["local_size"]),
        bindings: Vec::new(),
        findings,
    })
}

/// A finding of the dump, as the page places it.
fn summary(f: &serde_json::Value) -> tangle_amber::UbSummary {
    let s = |v: &serde_json::Value| v.as_str().unwrap_or_default().to_string();
    let instances: Vec<tangle_amber::UbInstance> = f["instances"]
        .as_array()
        .map(|list| {
            list.iter()
                .map(|i| tangle_amber::UbInstance {
                    invocation: xyz(&i["invocation"]),
                    workgroup: xyz(&i["workgroup"]),
                    message: s(&i["message"]),
                })
                .collect()
        })
        .unwrap_or_default();
    let first = instances.first();
    tangle_amber::UbSummary {
        line: 0,
        kind: s(&f["kind"]),
        severity: s(&f["severity"]),
        default_severity: s(&f["severity"]),
        spec: String::new(),
        message: s(&f["message"]),
        instruction: s(&f["instruction"]),
        word: num(&f["word"]) as usize,
        source: None,
        count: num(&f["count"]),
        invocations: [first.map_or([0; 3], |i| i.invocation); 2],
        workgroups: [first.map_or([0; 3], |i| i.workgroup); 2],
        findings: instances,
    }
}
