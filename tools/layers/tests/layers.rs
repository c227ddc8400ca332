//! The import-layer check (issue 33, item 2), run by `cargo test --workspace` and so by
//! `.ci/run`: for every crate target of the workspace, the file-level import graph
//! (`src/graph.rs` says what counts as an import) must have no circle of two or more files, and
//! where `docs/DESIGN.md` writes a crate's layer order (its ```` ```layers ```` blocks), no file
//! may import a file of a higher layer, or of another peer group of its own layer (one tier
//! from another), and every file must be placed in a layer.
//!
//! **Pending: `tangle-exec` and `tangle-icd`.** Their layering is not done yet: the executor's
//! files are being changed by the speed work (issue 31), and the next session moves them to the
//! order `docs/DESIGN.md` writes; the driver is being changed for issue 34. Their imports that
//! break the order today are listed below, exactly. The lists may only shrink: an import that
//! breaks the order and is not listed fails the test (a new upward import or circle), and so
//! does a listed one that no longer exists (delete it from the list). On failure the test
//! prints the crate's list as it stands, to replace the old one with once each new entry has
//! been looked at.

use layers::{read_layers, targets, unplaced, violations, workspace_root, Graph, Layers};

/// The imports of `tangle-exec` that break its layer order today (`docs/DESIGN.md`, "Layers"),
/// as (importing file, imported file). May only shrink.
const PENDING_EXEC: &[(&str, &str)] = &[
    ("src/allocation.rs", "src/device.rs"),
    ("src/check/arith.rs", "src/run/access.rs"),
    ("src/check/arith.rs", "src/run/alu.rs"),
    ("src/check/clock.rs", "src/check/race.rs"),
    ("src/check/domain.rs", "src/report.rs"),
    ("src/check/domain.rs", "src/run/access.rs"),
    ("src/check/domain.rs", "src/run/alu.rs"),
    ("src/check/index.rs", "src/run/access.rs"),
    ("src/check/index.rs", "src/run/alu.rs"),
    ("src/check/null.rs", "src/run/access.rs"),
    ("src/check/race.rs", "src/check/clock.rs"),
    ("src/check/race.rs", "src/check/sync.rs"),
    ("src/check/race.rs", "src/run/memory.rs"),
    ("src/check/robust.rs", "src/report.rs"),
    ("src/check/summary.rs", "src/report.rs"),
    ("src/check/sync.rs", "src/check/clock.rs"),
    ("src/check/sync.rs", "src/check/race.rs"),
    ("src/check/touched.rs", "src/run/access.rs"),
    ("src/check/touched.rs", "src/run/memory.rs"),
    ("src/check/uninit.rs", "src/check/robust.rs"),
    ("src/check/uninit.rs", "src/run/memory.rs"),
    ("src/jit/affine.rs", "src/jit/compile.rs"),
    ("src/jit/affine.rs", "src/jit/lockstep.rs"),
    ("src/jit/compile.rs", "src/jit/affine.rs"),
    ("src/jit/compile.rs", "src/jit/coopmat.rs"),
    ("src/jit/compile.rs", "src/jit/lockstep.rs"),
    ("src/jit/compile.rs", "src/jit/native.rs"),
    ("src/jit/coopmat.rs", "src/jit/compile.rs"),
    ("src/jit/coopmat.rs", "src/jit/native.rs"),
    ("src/jit/lockstep.rs", "src/jit/compile.rs"),
    ("src/jit/lockstep.rs", "src/jit/native.rs"),
    ("src/jit/mod.rs", "src/run/mod.rs"),
    ("src/jit/mod.rs", "src/run/workers.rs"),
    ("src/jit/native.rs", "src/jit/tiles.rs"),
    ("src/jit/tiles.rs", "src/jit/coopmat.rs"),
    ("src/jit/tiles.rs", "src/jit/native.rs"),
    ("src/jit/tiles.rs", "src/run/mod.rs"),
    ("src/jit/tiles.rs", "src/wide/mod.rs"),
    ("src/lower/mod.rs", "src/device.rs"),
    ("src/policy.rs", "src/lower/cfg.rs"),
    ("src/program/ops.rs", "src/run/coopmat.rs"),
    ("src/program/ops.rs", "src/run/dot.rs"),
    ("src/program/ops.rs", "src/run/group.rs"),
    ("src/program/ops.rs", "src/run/image.rs"),
    ("src/report.rs", "src/check/domain.rs"),
    ("src/report.rs", "src/check/summary.rs"),
    ("src/report.rs", "src/check/uninit.rs"),
    ("src/report.rs", "src/run/image.rs"),
    ("src/run/access.rs", "src/run/image.rs"),
    ("src/run/budget.rs", "src/device.rs"),
    ("src/run/coopmat.rs", "src/run/coopmat_dense.rs"),
    ("src/run/coopmat_dense.rs", "src/run/coopmat.rs"),
    ("src/run/image.rs", "src/run/access.rs"),
    ("src/run/mod.rs", "src/device.rs"),
    ("src/run/mod.rs", "src/jit/mod.rs"),
    ("src/run/mod.rs", "src/run/budget.rs"),
    ("src/run/mod.rs", "src/run/resident.rs"),
    ("src/run/mod.rs", "src/run/workers.rs"),
    ("src/run/mod.rs", "src/wide/mod.rs"),
    ("src/run/resident.rs", "src/device.rs"),
    ("src/run/workers.rs", "src/device.rs"),
    (
        "src/semantics/coopmat.rs",
        "src/semantics/coopmat_kernel.rs",
    ),
    ("src/semantics/coopmat_fma.rs", "src/jit/native.rs"),
    (
        "src/semantics/coopmat_fma.rs",
        "src/semantics/coopmat_kernel.rs",
    ),
    (
        "src/semantics/coopmat_kernel.rs",
        "src/semantics/coopmat.rs",
    ),
    (
        "src/semantics/coopmat_kernel.rs",
        "src/semantics/coopmat_fma.rs",
    ),
    ("src/wide/mod.rs", "src/run/mod.rs"),
    ("src/wide/races.rs", "src/run/workers.rs"),
    ("src/wide/races.rs", "src/wide/rows.rs"),
    ("src/wide/rows.rs", "src/wide/races.rs"),
    ("src/check/uninit.rs", "src/run/alu.rs"),
    ("src/lower/promote_inlined.rs", "src/wide/plan.rs"),
    ("src/wide/workgroup.rs", "src/run/mod.rs"),
];

/// The imports of `tangle-icd` inside its circle today (the device's objects, its findings,
/// hazards and command execution import each other). May only shrink.
const PENDING_ICD: &[(&str, &str)] = &[
    ("src/caps.rs", "src/image.rs"),
    ("src/config.rs", "src/caps.rs"),
    ("src/exec.rs", "src/caps.rs"),
    ("src/exec.rs", "src/config.rs"),
    ("src/exec.rs", "src/ffi/debug.rs"),
    ("src/exec.rs", "src/findings.rs"),
    ("src/exec.rs", "src/hazards.rs"),
    ("src/exec.rs", "src/image.rs"),
    ("src/exec.rs", "src/objects.rs"),
    ("src/exec.rs", "src/query.rs"),
    ("src/exec.rs", "src/transfer.rs"),
    ("src/exec.rs", "src/view.rs"),
    ("src/ffi/debug.rs", "src/findings.rs"),
    ("src/ffi/debug.rs", "src/messages.rs"),
    ("src/ffi/debug.rs", "src/objects.rs"),
    ("src/findings.rs", "src/config.rs"),
    ("src/findings.rs", "src/objects.rs"),
    ("src/findings.rs", "src/tiers.rs"),
    ("src/hazards.rs", "src/findings.rs"),
    ("src/hazards.rs", "src/objects.rs"),
    ("src/image.rs", "src/caps.rs"),
    ("src/image.rs", "src/objects.rs"),
    ("src/messages.rs", "src/findings.rs"),
    ("src/messages.rs", "src/objects.rs"),
    ("src/objects.rs", "src/caps.rs"),
    ("src/objects.rs", "src/config.rs"),
    ("src/objects.rs", "src/exec.rs"),
    ("src/objects.rs", "src/findings.rs"),
    ("src/objects.rs", "src/hazards.rs"),
    ("src/query.rs", "src/objects.rs"),
    ("src/tiers.rs", "src/config.rs"),
    ("src/transfer.rs", "src/image.rs"),
    ("src/transfer.rs", "src/objects.rs"),
    ("src/view.rs", "src/config.rs"),
    ("src/view.rs", "src/findings.rs"),
    ("src/view.rs", "src/objects.rs"),
];

fn pending(target: &str) -> &'static [(&'static str, &'static str)] {
    match target {
        "tangle-exec" => PENDING_EXEC,
        "tangle-icd" => PENDING_ICD,
        _ => &[],
    }
}

#[test]
fn imports_run_one_way_in_every_crate() {
    let root = workspace_root();
    let design = std::fs::read_to_string(root.join("docs/DESIGN.md")).expect("docs/DESIGN.md");
    let orders = read_layers(&design).expect("docs/DESIGN.md's layers blocks");
    let targets = targets(&root).expect("every crate's files parse");
    let mut failures = Vec::new();
    for order in &orders {
        if !targets.iter().any(|t| t.package == order.package) {
            failures.push(format!(
                "docs/DESIGN.md writes layers for `{}`, which is no crate of the workspace",
                order.package
            ));
        }
    }
    for t in &targets {
        let order = orders.iter().find(|o| o.package == t.name);
        if let Some(order) = order {
            for f in unplaced(&t.graph, order) {
                failures.push(format!(
                    "{}: {f} is in no layer of docs/DESIGN.md's order: add it to one",
                    t.name
                ));
            }
        }
        let found = violations(&t.graph, order);
        let listed = pending(&t.name);
        let mut crate_failures = Vec::new();
        for v in &found {
            if !listed.contains(&(v.from.as_str(), v.to.as_str())) {
                crate_failures.push(format!("{}: {v}", t.name));
            }
        }
        for (from, to) in listed {
            if !found.iter().any(|v| v.from == *from && v.to == *to) {
                crate_failures.push(format!(
                    "{}: the listed import {from} -> {to} no longer breaks the layering: delete it from the list",
                    t.name
                ));
            }
        }
        if !crate_failures.is_empty() {
            let list: Vec<String> = found
                .iter()
                .map(|v| format!("    (\"{}\", \"{}\"),", v.from, v.to))
                .collect();
            crate_failures.push(format!(
                "{}'s imports that break the layering today:\n{}",
                t.name,
                list.join("\n")
            ));
        }
        failures.extend(crate_failures);
    }
    assert!(
        failures.is_empty(),
        "imports that do not run one way:\n{}",
        failures.join("\n")
    );
}

/// A small crate written to a temporary folder, read as the workspace's crates are.
fn graph_of(files: &[(&str, &str)]) -> Graph {
    let dir = std::env::temp_dir().join(format!(
        "layers-test-{}-{}",
        std::process::id(),
        files.len()
    ));
    for (name, text) in files {
        let path = dir.join(name);
        std::fs::create_dir_all(path.parent().expect("a folder")).expect("a temporary folder");
        std::fs::write(&path, text).expect("a temporary file");
    }
    let graph = Graph::read(&dir, "src/lib.rs").expect("the small crate parses");
    let _ = std::fs::remove_dir_all(&dir);
    graph
}

fn edges(g: &Graph) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (from, targets) in g.edges.iter().enumerate() {
        for to in targets.keys() {
            out.push((g.files[from].clone(), g.files[*to].clone()));
        }
    }
    out
}

#[test]
fn imports_are_followed_through_uses_re_exports_and_code() {
    let g = graph_of(&[
        (
            "src/lib.rs",
            "mod low; mod high; mod front; pub use front::Api;",
        ),
        ("src/low.rs", "pub struct Word; pub fn f() {}"),
        // A re-export is no edge of its own: its users land in the file that declares the item.
        (
            "src/front/mod.rs",
            "mod inner; pub use inner::Api; pub struct Shared;",
        ),
        // Its parent's vocabulary is a child's by design: no edge to front/mod.rs.
        (
            "src/front/inner.rs",
            "use super::Shared; pub struct Api(pub Shared);",
        ),
        // A `use`, a path in code and a path inside a macro call each make an edge.
        (
            "src/high.rs",
            "use crate::low::Word; fn g() { crate::Api; } fn h() { m!(crate::front::Shared); }",
        ),
    ]);
    let mut found = edges(&g);
    found.sort();
    let want = [
        ("src/high.rs", "src/front/inner.rs"),
        ("src/high.rs", "src/front/mod.rs"),
        ("src/high.rs", "src/low.rs"),
    ];
    assert_eq!(found, want.map(|(a, b)| (a.to_string(), b.to_string())));
}

#[test]
fn a_circle_and_an_upward_import_are_named() {
    let g = graph_of(&[
        ("src/lib.rs", "mod a; mod b; mod c;"),
        ("src/a.rs", "use crate::b::B; pub struct A;"),
        ("src/b.rs", "use crate::a::A; pub struct B;"),
        ("src/c.rs", "pub fn c() { crate::a::A; }"),
    ]);
    let v = violations(&g, None);
    let named: Vec<String> = v.iter().map(|v| v.to_string()).collect();
    assert_eq!(
        named,
        [
            "src/a.rs imports src/b.rs inside a circle: crate::b::B",
            "src/b.rs imports src/a.rs inside a circle: crate::a::A",
        ]
    );
    // With an order, the import that runs up is named as such; without it no circle is left.
    let design = "```layers\ncrate x\nbottom: c.rs b.rs lib.rs\ntop: a.rs\n```\n";
    let order: Vec<Layers> = read_layers(design).expect("the block parses");
    let named: Vec<String> = violations(&g, Some(&order[0]))
        .iter()
        .map(|v| v.to_string())
        .collect();
    assert_eq!(
        named,
        [
            "src/b.rs (bottom) imports src/a.rs (top), a higher layer: crate::a::A",
            "src/c.rs (bottom) imports src/a.rs (top), a higher layer: crate::a::A",
        ]
    );
}
