//! The workspace's import layers: every crate target's file-level import graph (`graph.rs`), the
//! layer order `docs/DESIGN.md` writes for a crate (its "Layers" block), and the imports that
//! break them: a circle of two or more files, or a file importing a file of a higher layer.
//! `tests/layers.rs` runs the check in `cargo test --workspace`, and so in `.ci/run`.

mod graph;

use std::collections::BTreeSet;
use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};

pub use graph::Graph;

/// The workspace's root folder.
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// One crate target: a library (`tangle-exec`) or a binary's own modules (`tangle (main.rs)`).
pub struct Target {
    pub name: String,
    /// The crate's package name, which the layer order names.
    pub package: String,
    pub graph: Graph,
}

/// Every crate target of `crates/*` and `tools/*` with a `src/lib.rs` or `src/main.rs`.
pub fn targets(root: &Path) -> Result<Vec<Target>, String> {
    let mut dirs = Vec::new();
    for group in ["crates", "tools"] {
        let entries = fs::read_dir(root.join(group)).map_err(|e| format!("{group}: {e}"))?;
        for e in entries.flatten() {
            if e.path().join("Cargo.toml").exists() {
                dirs.push(e.path());
            }
        }
    }
    dirs.sort();
    let mut out = Vec::new();
    for dir in dirs {
        let package = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        for (root_file, name) in [
            ("src/lib.rs", package.clone()),
            ("src/main.rs", format!("{package} (main.rs)")),
        ] {
            if dir.join(root_file).exists() {
                let graph = Graph::read(&dir, root_file)?;
                out.push(Target {
                    name,
                    package: package.clone(),
                    graph,
                });
            }
        }
    }
    Ok(out)
}

/// A crate's layers, bottom up: each a name and the file-path prefixes it holds (relative to
/// `src/`: `run/`, `device.rs`), in one or more peer groups (`run/ | wide/ | jit/`) that may not
/// import each other. A file belongs to the layer of its longest matching prefix.
pub struct Layers {
    pub package: String,
    pub layers: Vec<(String, Vec<Vec<String>>)>,
}

impl Layers {
    /// The layer and peer group of `file` (`src/run/alu.rs`), by its longest matching prefix.
    pub fn place(&self, file: &str) -> Option<(usize, usize)> {
        let file = file.strip_prefix("src/").unwrap_or(file);
        let mut best: Option<(usize, usize, usize)> = None;
        for (i, (_, groups)) in self.layers.iter().enumerate() {
            for (g, prefixes) in groups.iter().enumerate() {
                for p in prefixes {
                    if file.starts_with(p.as_str()) && best.is_none_or(|(_, _, len)| p.len() > len)
                    {
                        best = Some((i, g, p.len()));
                    }
                }
            }
        }
        best.map(|(i, g, _)| (i, g))
    }
}

/// The layer orders written in `docs/DESIGN.md`: each fenced block opened by ```` ```layers ````,
/// whose first line is `crate NAME` and whose other lines are `LAYER: PREFIX PREFIX ...`
/// (peer groups apart with `|`), bottom up.
pub fn read_layers(design: &str) -> Result<Vec<Layers>, String> {
    let mut out = Vec::new();
    let mut lines = design.lines();
    while let Some(line) = lines.next() {
        if line.trim() != "```layers" {
            continue;
        }
        let mut layers = Layers {
            package: String::new(),
            layers: Vec::new(),
        };
        for line in lines.by_ref() {
            let line = line.trim();
            if line == "```" {
                break;
            }
            if let Some(name) = line.strip_prefix("crate ") {
                layers.package = name.trim().to_string();
            } else if let Some((name, prefixes)) = line.split_once(':') {
                let groups = prefixes
                    .split('|')
                    .map(|g| g.split_whitespace().map(str::to_string).collect())
                    .collect();
                layers.layers.push((name.trim().to_string(), groups));
            } else if !line.is_empty() {
                return Err(format!("docs/DESIGN.md: a layers block line is neither `crate NAME` nor `LAYER: PREFIX ...`: {line}"));
            }
        }
        if layers.package.is_empty() {
            return Err("docs/DESIGN.md: a layers block without its `crate NAME` line".to_string());
        }
        out.push(layers);
    }
    Ok(out)
}

/// An import that breaks the layering.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Violation {
    pub from: String,
    pub to: String,
    /// One path that made the import, as written (`crate::run::alu::bits_of`).
    pub path: String,
    pub kind: Kind,
}

#[derive(Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    /// From a file of layer `.0` up to one of layer `.1`.
    Upward(String, String),
    /// Between two peer groups of layer `.0` (two tiers).
    Sideways(String),
    /// An import inside a circle of files of one layer (or of a crate without layers).
    Circle,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            Kind::Upward(a, b) => write!(
                f,
                "{} ({a}) imports {} ({b}), a higher layer: {}",
                self.from, self.to, self.path
            ),
            Kind::Sideways(l) => write!(
                f,
                "{} imports {}, a peer of another group of layer {l}: {}",
                self.from, self.to, self.path
            ),
            Kind::Circle => write!(
                f,
                "{} imports {} inside a circle: {}",
                self.from, self.to, self.path
            ),
        }
    }
}

/// Files of `graph` that no layer holds.
pub fn unplaced(graph: &Graph, layers: &Layers) -> Vec<String> {
    graph
        .files
        .iter()
        .filter(|f| layers.place(f).is_none())
        .cloned()
        .collect()
}

/// The imports that break the layering: first every import from a lower layer to a higher one,
/// or between peer groups of one layer; then, among the imports left, every one inside a circle
/// of two or more files. Without those, the graph has no circle and runs one way.
pub fn violations(graph: &Graph, layers: Option<&Layers>) -> Vec<Violation> {
    let n = graph.files.len();
    let place = |f: usize| layers.and_then(|l| l.place(&graph.files[f]));
    let name = |i: usize| layers.map(|l| l.layers[i].0.clone()).unwrap_or_default();
    let mut out = Vec::new();
    let mut kept: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (from, edges) in graph.edges.iter().enumerate() {
        for (&to, path) in edges {
            let kind = match (place(from), place(to)) {
                (Some((a, _)), Some((b, _))) if b > a => Some(Kind::Upward(name(a), name(b))),
                (Some((a, g)), Some((b, h))) if a == b && g != h => Some(Kind::Sideways(name(a))),
                _ => None,
            };
            match kind {
                Some(kind) => out.push(Violation {
                    from: graph.files[from].clone(),
                    to: graph.files[to].clone(),
                    path: path.clone(),
                    kind,
                }),
                None => kept[from].push(to),
            }
        }
    }
    let component = strongly_connected(&kept);
    for (from, targets) in kept.iter().enumerate() {
        for &to in targets {
            if component[from] == component[to] {
                out.push(Violation {
                    from: graph.files[from].clone(),
                    to: graph.files[to].clone(),
                    path: graph.edges[from][&to].clone(),
                    kind: Kind::Circle,
                });
            }
        }
    }
    out.sort();
    out
}

/// The circles of `graph`: its strongly connected components of two or more files.
pub fn circles(graph: &Graph) -> Vec<Vec<String>> {
    let adj: Vec<Vec<usize>> = graph
        .edges
        .iter()
        .map(|e| e.keys().copied().collect())
        .collect();
    let component = strongly_connected(&adj);
    let ids: BTreeSet<usize> = component.iter().copied().collect();
    let mut out: Vec<Vec<String>> = ids
        .into_iter()
        .map(|c| {
            (0..adj.len())
                .filter(|&f| component[f] == c)
                .map(|f| graph.files[f].clone())
                .collect::<Vec<_>>()
        })
        .filter(|files| files.len() > 1)
        .collect();
    out.sort();
    out
}

/// Each node's strongly connected component (Tarjan's algorithm, without recursion).
fn strongly_connected(adj: &[Vec<usize>]) -> Vec<usize> {
    let n = adj.len();
    let mut index = vec![usize::MAX; n];
    let mut low = vec![0; n];
    let mut on_stack = vec![false; n];
    let mut stack = Vec::new();
    let mut component = vec![usize::MAX; n];
    let mut next = 0;
    let mut components = 0;
    for start in 0..n {
        if index[start] != usize::MAX {
            continue;
        }
        let mut work = vec![(start, 0usize)];
        while let Some(&mut (v, ref mut edge)) = work.last_mut() {
            if *edge == 0 && index[v] == usize::MAX {
                index[v] = next;
                low[v] = next;
                next += 1;
                stack.push(v);
                on_stack[v] = true;
            }
            if let Some(&w) = adj[v].get(*edge) {
                *edge += 1;
                if index[w] == usize::MAX {
                    work.push((w, 0));
                } else if on_stack[w] {
                    low[v] = low[v].min(index[w]);
                }
                continue;
            }
            work.pop();
            if let Some(&(parent, _)) = work.last() {
                low[parent] = low[parent].min(low[v]);
            }
            if low[v] == index[v] {
                while let Some(w) = stack.pop() {
                    on_stack[w] = false;
                    component[w] = components;
                    if w == v {
                        break;
                    }
                }
                components += 1;
            }
        }
    }
    component
}
