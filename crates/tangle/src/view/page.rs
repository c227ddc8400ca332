//! The HTML of a view page: a maud template around the page's data (JSON in a
//! `<script type="application/json">`), the inline stylesheet and the inline script
//! (`page.js`) that draws the SVG. Nothing is loaded from anywhere: the page opens from disk.

use super::Page;
use maud::{html, PreEscaped, DOCTYPE};

const SCRIPT: &str = include_str!("page.js");

const STYLE: &str = "
body{font:13px system-ui,sans-serif;margin:12px;color:#222}
header p{margin:4px 0;color:#555}
form label{margin-right:12px}
#layout{display:flex;gap:16px;align-items:flex-start}
#panels{flex:1;min-width:0;display:flex;flex-direction:column;gap:10px}
.panel{border:1px solid #ccc;border-radius:4px;padding:6px}
.panel h2,#cfg h2,#stores h2{font-size:14px;margin:2px 0}
.scroll{overflow-x:auto}
.counts,.cut,.legend{margin:2px 0;color:#555}
.cut{color:#a40}
rect.step{fill:#f6f6f6;stroke:#fff;stroke-width:0.5}
rect.step.differs{fill:#fdd}
rect.step.resume{fill:#eef}
text.blk{font-size:9px;text-anchor:middle;fill:#777}
text.lane{font-size:10px;text-anchor:end;fill:#777}
path.split{stroke:#000;stroke-width:2}
path.join{stroke:#06c;stroke-width:2;stroke-dasharray:3 2}
path.op-group{fill:#c60}
path.op-barrier{fill:#000}
path.op-coopmat{fill:#609}
text.finding{fill:#d00;font-size:12px;text-anchor:middle;font-weight:bold}
.findings{color:#a00;margin:4px 0}
#cfg{flex:0 0 auto}
.cfg-block rect{fill:#fafafa;stroke:#888}
.cfg-block.merge rect{stroke-dasharray:4 2}
.cfg-block.hot rect{fill:#ffe9a8}
.cfg-block text{font-size:11px}
text.rejoin{fill:#06c;font-weight:bold}
path.edge{fill:none;stroke:#999}
path.edge.back{stroke:#c60}
table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 6px;font-family:monospace}
#tip{position:absolute;display:none;background:#fff;border:1px solid #888;padding:4px 6px;max-width:520px;font-family:monospace;font-size:11px;box-shadow:2px 2px 6px #0003}
.bad{color:#c00}
";

/// The page.
pub fn html(page: &Page) -> String {
    // `</script` or `<!--` inside the JSON would end or change the script element; `<` occurs
    // only inside JSON strings, where `\u003c` is the same character.
    let data = serde_json::to_string(page)
        .unwrap_or_else(|_| "{\"runs\":[]}".to_string())
        .replace('<', "\\u003c");
    let policies = page.policies.join(" and ");
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                title { "tangle view: " (page.script) }
                style { (PreEscaped(STYLE)) }
            }
            body {
                header {
                    h1 style="font-size:16px;margin:0" { "tangle view: " (page.script) " under " (policies) }
                    form #controls {
                        label { "RUN " select #run {} }
                        label { "workgroup " select #wg {} }
                        label { "subgroup " select #sg {} }
                        label { "show " select #show {} }
                    }
                    p #caps {
                        "One subgroup at a time: each column a step (a tangle running a block), each row a lane, "
                        "coloured by its tangle; black bars: splits, dashed blue bars: joins; triangles: subgroup "
                        "operations (orange), barriers (black), cooperative-matrix operations (purple); ✕: a finding; "
                        "red columns: steps the other policy did not run; numbers under columns: block ids. Hover for details. "
                        "Recorded: at most " (page.max_steps) " steps per subgroup and "
                        (page.max_subgroups) " subgroups per dispatch."
                        @if page.runs_cut > 0 { " " (page.runs_cut) " more dispatches not recorded." }
                    }
                }
                div #layout {
                    main #panels {}
                    aside #cfg {}
                }
                section #stores {}
                div #tip {}
                script #data type="application/json" { (PreEscaped(data)) }
                script { (PreEscaped(SCRIPT)) }
            }
        }
    }
    .into_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_cannot_end_its_script_element() {
        let name = "a</script><!--<script>b.amber";
        let page = Page::new(name, &["maximal".into()], &[]);
        let html = html(&page);
        // The title escapes it; the data holds no `<` at all.
        assert_eq!(
            html.matches("</script>").count(),
            2,
            "the data's and the code's"
        );
        let head = "type=\"application/json\">";
        let start = html.find(head).map(|i| i + head.len()).unwrap_or(0);
        let end = start + html[start..].find("</script>").unwrap_or(0);
        let data: serde_json::Value = serde_json::from_str(&html[start..end]).expect("JSON");
        assert_eq!(data["script"], name);
    }
}
