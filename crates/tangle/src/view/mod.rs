//! `tangle run --view FILE.html`: one self-contained HTML page that draws how the invocations
//! of a subgroup diverged and reconverged in each dispatch, from the dispatch's trace
//! (`docs/trace-format.md`, "The picture"), optionally under two policies side by side.
//!
//! [`module`] reads the blocks and control-flow graph from the module, [`model`] turns the
//! trace into steps, splits and joins per subgroup, [`compare`] sets two policies against each
//! other, [`values`] follows the watched lanes' values, and [`page`] writes the HTML (data as JSON, drawn as SVG by a small inline script).

pub mod compare;
pub mod model;
pub mod module;
pub mod page;
pub mod values;

use crate::cpu_backend::TracedRun;
use serde::Serialize;

/// The most dispatches one page holds (the first ones of the script).
pub const MAX_RUNS: usize = 32;

/// One dispatch (`RUN`) under one or two policies.
#[derive(Debug, Clone, Serialize)]
pub struct Run {
    /// The script line of the `RUN`.
    pub line: u32,
    /// Lanes per subgroup.
    pub subgroup_size: u32,
    /// The module's blocks.
    pub blocks: module::Blocks,
    /// The picture under each policy.
    pub policies: Vec<model::PolicyRun>,
    /// With two policies: the stored words that differ (the first ones).
    pub stores: Vec<compare::StoreDiff>,
    /// With two policies: how many stored words differ.
    pub stores_differ: usize,
}

/// What a page shows.
#[derive(Debug, Clone, Serialize)]
pub struct Page {
    /// The script's name.
    pub script: String,
    /// The policies, in `--policy` syntax.
    pub policies: Vec<String>,
    /// The dispatches.
    pub runs: Vec<Run>,
    /// Dispatches past [`MAX_RUNS`], not drawn.
    pub runs_cut: usize,
    /// [`model::MAX_STEPS`].
    pub max_steps: usize,
    /// [`model::MAX_SUBGROUPS`].
    pub max_subgroups: usize,
}

impl Page {
    /// The page of a script's traced dispatches under one policy (`runs` of one element) or
    /// two, each the dispatches in script order. The first policy's dispatches are drawn; a
    /// dispatch the second policy did not reach is drawn under the first alone.
    pub fn new(script: &str, policies: &[String], runs: &[Vec<TracedRun>]) -> Page {
        let first = runs.first().map(Vec::as_slice).unwrap_or_default();
        let drawn = first
            .iter()
            .take(MAX_RUNS)
            .enumerate()
            .map(|(i, a)| {
                let blocks = tangle_spirv::Module::from_words(&a.spirv)
                    .map(|m| module::Blocks::of(&m))
                    .unwrap_or_default();
                let mut pictures = vec![model::PolicyRun::of(a, &blocks)];
                let mut stores = (Vec::new(), 0);
                if let Some(b) = runs.get(1).and_then(|r| r.get(i)) {
                    let mut pb = model::PolicyRun::of(b, &blocks);
                    compare::mark_differences(&mut pictures[0], &mut pb);
                    pictures.push(pb);
                    stores = compare::stores(a, b);
                }
                Run {
                    line: a.line,
                    subgroup_size: a.trace.subgroup_size,
                    blocks,
                    policies: pictures,
                    stores: stores.0,
                    stores_differ: stores.1,
                }
            })
            .collect();
        Page {
            script: script.to_string(),
            policies: policies.to_vec(),
            runs: drawn,
            runs_cut: first.len().saturating_sub(MAX_RUNS),
            max_steps: model::MAX_STEPS,
            max_subgroups: model::MAX_SUBGROUPS,
        }
    }

    /// The HTML.
    pub fn html(&self) -> String {
        page::html(self)
    }
}
