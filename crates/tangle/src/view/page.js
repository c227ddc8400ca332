// tangle run --view: draws the page's data (the JSON in #data, crates/tangle/src/view/) as SVG.
// The selection (RUN, workgroup, subgroup, which policies) lives in the URL fragment, so a page
// opened as FILE.html#run=1&wg=0,0,0&sg=2&show=both shows that picture (and a headless browser
// can be pointed at one); `&hover=STEP,LANE` also opens that cell's tooltip.
"use strict";
const D = JSON.parse(document.getElementById("data").textContent);
const W0 = 44, H = 14, TOP = 18;
const $ = (id) => document.getElementById(id);
const esc = (s) => String(s).replace(/[&<>"]/g, (c) => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"}[c]));
const bits = (hex) => { const m = BigInt(hex), out = []; for (let l = 0; l < 128; l++) if ((m >> BigInt(l)) & 1n) out.push(l); return out; };
const has = (hex, l) => ((BigInt(hex) >> BigInt(l)) & 1n) === 1n;
// One colour per tangle (its mask), the same in every panel: a qualitative palette in the order
// the tangles first ran, then hues from the mask's text.
const PALETTE = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#b07aa1", "#76b7b2", "#edc948", "#9c755f", "#ff9da7", "#bab0ac", "#1f3b73", "#8cd17d"];
let colours = new Map();
function colour(hex) {
  if (!colours.has(hex)) {
    let h = 0;
    for (const c of hex) h = (h * 31 + c.charCodeAt(0)) >>> 0;
    colours.set(hex, colours.size < PALETTE.length ? PALETTE[colours.size] : `hsl(${h % 360},62%,${52 + (h >> 9) % 16}%)`);
  }
  return colours.get(hex);
}

function state() {
  const q = new URLSearchParams(location.hash.slice(1));
  const run = Math.min(Math.max(parseInt(q.get("run") || "0", 10) || 0, 0), Math.max(D.runs.length - 1, 0));
  return {run, wg: q.get("wg"), sg: q.get("sg"), show: q.get("show") || "both", hover: q.get("hover")};
}
function setState(s) {
  location.hash = `run=${s.run}&wg=${s.wg}&sg=${s.sg}&show=${s.show}`;
}

function options(sel, items, value) {
  sel.innerHTML = items.map(([v, t]) => `<option value="${esc(v)}"${v === value ? " selected" : ""}>${esc(t)}</option>`).join("");
}

function render() {
  const s = state();
  const run = D.runs[s.run];
  options($("run"), D.runs.map((r, i) => [String(i), `RUN at line ${r.line}`]), String(s.run));
  if (!run) { $("panels").innerHTML = "<p>No dispatch was traced.</p>"; return; }
  const subs = run.policies[0].subgroups;
  const wgs = [...new Set(subs.map((x) => x.workgroup.join(",")))];
  if (!wgs.includes(s.wg)) s.wg = wgs[0];
  const sgs = subs.filter((x) => x.workgroup.join(",") === s.wg).map((x) => String(x.subgroup));
  if (!sgs.includes(s.sg)) s.sg = sgs[0];
  options($("wg"), wgs.map((w) => [w, `(${w})`]), s.wg);
  options($("sg"), sgs.map((g) => [g, g]), s.sg);
  const shown = run.policies.map((p, i) => i).filter((i) => s.show === "both" || s.show === "ab".charAt(i));
  options($("show"), [["both", "both policies"], ...run.policies.map((p, i) => ["ab".charAt(i), p.policy])], s.show);
  $("show").disabled = run.policies.length < 2;
  const blocks = new Map(run.blocks.blocks.map((b) => [b.id, b]));
  const pick = (p) => p.subgroups.find((x) => x.workgroup.join(",") === s.wg && String(x.subgroup) === s.sg);
  colours = new Map();
  for (const i of shown) for (const st of (pick(run.policies[i]) || {steps: []}).steps) colour(st.mask);
  $("panels").innerHTML = shown.map((i) => panel(run, i, pick(run.policies[i]), blocks)).join("");
  $("cfg").innerHTML = cfg(run, shown.map((i) => pick(run.policies[i])), blocks);
  $("stores").innerHTML = stores(run);
  document.querySelectorAll("svg.lanes").forEach((svg) => hover(svg, run, blocks));
}

// The lanes × steps picture of one subgroup under one policy.
function panel(run, pi, sub, blocks) {
  const p = run.policies[pi];
  const asked = D.policies[pi] || p.policy;
  const title = esc(asked) + (asked === p.policy ? "" : ` <small>(ran as ${esc(p.policy)}: the entry point fixes the reconvergence)</small>`);
  if (!sub) return `<section class="panel" data-policy="${pi}"><h2>${title}</h2><p>This subgroup did not run under this policy.</p></section>`;
  const n = run.subgroup_size, steps = sub.steps, w = Math.max(5, Math.min(26, Math.floor(1400 / Math.max(steps.length, 1))));
  const width = W0 + steps.length * w + 8, height = TOP + n * H + 16;
  const out = [];
  for (let i = 0; i < steps.length; i++) {
    const st = steps[i], b = blocks.get(st.block);
    const cls = "step" + (st.differs ? " differs" : "") + (st.resume ? " resume" : "");
    out.push(`<rect class="${cls}" data-step="${i}" data-block="${st.block}" x="${W0 + i * w}" y="${TOP}" width="${w}" height="${n * H}"/>`);
    if (w >= 18) out.push(`<text class="blk" x="${W0 + i * w + w / 2}" y="${TOP + n * H + 11}">${st.block}</text>`);
    if (b && b.marked.length) {
      const k = b.marked.some((m) => m.kind === "barrier") ? "barrier" : b.marked.some((m) => m.kind === "coopmat") ? "coopmat" : "group";
      out.push(`<path class="op op-${k}" data-step="${i}" d="M${W0 + i * w + w / 2} ${TOP - 2}l-4 -8h8z"><title>${esc(b.marked.map((m) => m.text).join("\n"))}\nactive ${st.mask}</title></path>`);
    }
  }
  for (let l = 0; l < n; l++) {
    out.push(`<text class="lane" x="${W0 - 4}" y="${TOP + l * H + H - 3}">${l}</text>`);
    // One rectangle per run of consecutive steps in one tangle.
    for (let i = 0; i < steps.length; i++) {
      if (!has(steps[i].mask, l)) continue;
      let j = i;
      while (j + 1 < steps.length && steps[j + 1].mask === steps[i].mask && has(steps[j + 1].mask, l)) j++;
      out.push(`<rect class="cell" x="${W0 + i * w + 0.5}" y="${TOP + l * H + 1}" width="${(j - i + 1) * w - 1}" height="${H - 2}" fill="${colour(steps[i].mask)}"/>`);
      i = j;
    }
  }
  for (const sp of sub.splits) {
    const ls = bits(sp.mask), x = W0 + (sp.step + 1) * w;
    out.push(`<path class="split" data-step="${sp.step}" d="M${x} ${TOP + ls[0] * H + 1}V${TOP + (ls[ls.length - 1] + 1) * H - 1}"><title>split ${sp.mask} into ${sp.into.map(([b, m]) => `%${b}: ${m}`).join(", ")}</title></path>`);
  }
  for (const j of sub.joins) {
    const ls = bits(j.from.reduce((a, m) => "0x" + (BigInt(a) | BigInt(m)).toString(16), "0x0")), x = W0 + j.step * w;
    out.push(`<path class="join" data-step="${j.step}" d="M${x} ${TOP + ls[0] * H + 1}V${TOP + (ls[ls.length - 1] + 1) * H - 1}"><title>join of ${j.from.join(", ")}</title></path>`);
  }
  for (const f of sub.findings) {
    if (f.step === null) continue;
    out.push(`<text class="finding" x="${W0 + f.step * w + w / 2}" y="${TOP + f.lane * H + H - 3}">✕<title>${esc(f.kind)}: ${esc(f.message)}</title></text>`);
  }
  const differ = steps.filter((x) => x.differs).length;
  const notes = [];
  if (sub.cut) notes.push(`${sub.cut} more steps not recorded (at most ${D.max_steps} per subgroup).`);
  if (p.subgroups_cut) notes.push(`${p.subgroups_cut} more subgroups not recorded (at most ${D.max_subgroups} per dispatch).`);
  if (p.dropped) notes.push(`${p.dropped} trace events dropped.`);
  const fl = sub.findings.map((f) => `<li class="finding-item">${esc(f.kind)} at step ${f.step === null ? "?" : f.step}, lane ${f.lane}: ${esc(f.message)}</li>`).join("");
  return `<section class="panel" data-policy="${pi}"><h2>${title}</h2>` +
    `<p class="counts">${n} lanes, ${steps.length} steps, ${sub.splits.length} splits, ${sub.joins.length} joins` +
    (run.policies.length > 1 ? `, <span class="ndiffer">${differ}</span> steps not run (as often) under the other policy` : "") + `</p>` +
    notes.map((t) => `<p class="cut">${esc(t)}</p>`).join("") +
    `<div class="scroll"><svg class="lanes" data-policy="${pi}" data-w="${w}" width="${width}" height="${height}">${out.join("")}</svg></div>` +
    (fl ? `<ul class="findings">${fl}</ul>` : "") + `</section>`;
}

// The tooltip: the step's block, tangle, marked instructions with the active mask and the
// hovered lane's values. `hover=STEP,LANE` in the fragment opens it on the first panel shown
// (a headless browser cannot move a mouse).
function hover(svg, run, blocks) {
  const pi = +svg.dataset.policy, w = +svg.dataset.w;
  const s = state();
  const sub = run.policies[pi].subgroups.find((x) => x.workgroup.join(",") === s.wg && String(x.subgroup) === s.sg);
  svg.addEventListener("mousemove", (ev) => {
    const r = svg.getBoundingClientRect();
    const i = Math.floor((ev.clientX - r.left - W0) / w), l = Math.floor((ev.clientY - r.top - TOP) / H);
    tip(run, sub, blocks, i, l, ev.pageX + 12, ev.pageY + 12);
  });
  svg.addEventListener("mouseleave", () => { $("tip").style.display = "none"; });
  const at = (s.hover || "").split(",").map(Number);
  if (at.length === 2 && svg === document.querySelector("svg.lanes")) {
    const r = svg.getBoundingClientRect();
    tip(run, sub, blocks, at[0], at[1], r.left + window.scrollX + W0 + (at[0] + 1) * w, r.top + window.scrollY + TOP + (at[1] + 1) * H);
  }
}

function tip(run, sub, blocks, i, l, x, y) {
  const st = sub.steps[i];
  if (!st || l < 0 || l >= run.subgroup_size) { $("tip").style.display = "none"; return; }
  const b = blocks.get(st.block) || {label: "", marked: []};
  const vals = sub.values.filter((v) => v.step === i && v.lane === l);
  let h = `<b>step ${i}</b>: block %${st.block}${st.resume ? " (resumed after a call)" : ""}<br>${esc(b.label)}<br>tangle ${st.mask}; lane ${l} ${has(st.mask, l) ? "active" : "inactive"}`;
  for (const m of b.marked) {
    const v = vals.find((x) => x.at === m.at);
    h += `<br><span class="marked">${esc(m.text)}</span> — active ${st.mask}${v ? `, <span class="value">lane ${l}: ${v.value.join(", ")}</span>` : ""}`;
  }
  for (const f of sub.findings.filter((f) => f.step === i && f.lane === l)) h += `<br><span class="bad">${esc(f.kind)}: ${esc(f.message)}</span>`;
  const t = $("tip");
  t.innerHTML = h;
  t.style.display = "block";
  t.style.left = x + "px";
  t.style.top = y + "px";
  document.querySelectorAll(".cfg-block.hot").forEach((e) => e.classList.remove("hot"));
  document.querySelectorAll(`.cfg-block[data-block="${st.block}"]`).forEach((e) => e.classList.add("hot"));
}

// The control-flow graph of the functions the subgroup ran: blocks in module order, edges as
// arcs, merge blocks dashed, blocks where a policy rejoined tangles marked with its letter.
function cfg(run, subs, blocks) {
  const ran = new Set(), rejoined = subs.map((sub) => new Set(sub ? sub.joins.map((j) => (sub.steps[j.step] || {}).block) : []));
  for (const sub of subs) if (sub) for (const st of sub.steps) ran.add(blocks.get(st.block)?.function);
  const list = run.blocks.blocks.filter((b) => ran.has(b.function));
  const merges = new Set(list.flatMap((b) => [b.merge, b.cont]).filter((x) => x));
  const y = new Map(list.map((b, i) => [b.id, 10 + i * 24]));
  const out = [];
  list.forEach((b) => {
    const cls = "cfg-block" + (merges.has(b.id) ? " merge" : "");
    const marks = rejoined.map((set, i) => set.has(b.id) ? `<text class="rejoin" x="${306 + i * 12}" y="${y.get(b.id) + 13}">${"AB".charAt(i)}</text>` : "").join("");
    out.push(`<g class="${cls}" data-block="${b.id}"><rect x="4" y="${y.get(b.id)}" width="300" height="18" rx="3"/><text x="8" y="${y.get(b.id) + 13}">%${b.id} ${esc(b.label.slice(0, 40))}</text><title>${esc(b.label)}</title>${marks}</g>`);
    for (const t of b.succ) {
      if (!y.has(t)) continue;
      const y1 = y.get(b.id) + 9, y2 = y.get(t) + 9, dx = 340 + Math.abs(y2 - y1) / 3;
      out.push(`<path class="edge${y2 <= y1 ? " back" : ""}" d="M330 ${y1}C${dx} ${y1} ${dx} ${y2} 330 ${y2}"/>`);
    }
  });
  const h = 20 + list.length * 24;
  return `<h2>Control flow</h2><p class="legend">dashed: merge or continue block; A/B: tangles rejoined there under that policy</p><svg class="cfg" width="${380 + h / 3}" height="${h}">${out.join("")}</svg>`;
}

// With two policies: the stored words the dispatch left different.
function stores(run) {
  if (run.policies.length < 2) return "";
  if (!run.stores_differ) return `<h2>Stored values</h2><p class="same">Both policies stored the same values.</p>`;
  const rows = run.stores.map((d) => `<tr class="store"><td>${esc(d.binding)}</td><td>${d.byte}</td><td>${d.values[0]}</td><td>${d.values[1]}</td></tr>`).join("");
  return `<h2>Stored values that differ (${run.stores_differ} words)</h2><table><tr><th>set:binding</th><th>byte</th><th>${esc(run.policies[0].policy)}</th><th>${esc(run.policies[1].policy)}</th></tr>${rows}</table>`;
}

for (const id of ["run", "wg", "sg", "show"]) {
  $(id).addEventListener("change", () => {
    const s = state();
    s[id] = $(id).value;
    if (id === "run") { s.wg = ""; s.sg = ""; }
    if (id === "wg") s.sg = "";
    setState(s);
  });
}
window.addEventListener("hashchange", render);
render();
// Milliseconds from the page's navigation to its first picture (the browser test reads it).
document.body.dataset.drawnMs = Math.round(performance.now());
