//! The file-level import graph of one crate target (a `lib.rs` or `main.rs` and the files its
//! `mod` declarations reach): which file names an item of which other file.
//!
//! An edge A → B exists where A names a path that resolves into B: a `use` (private or `pub`,
//! at the top or inside a body), or a path written in code (`crate::run::alu::bits_of(x)`,
//! `super::Foo`, `child::f()`, inside macro calls too). Paths are resolved as rustc resolves
//! them, by name: through child modules, the items each module declares, and its `use`
//! declarations and globs, so a name a `mod.rs` re-exports from a sibling lands in the sibling.
//! A `mod x;` declaration alone is no edge (a parent owns its children; it imports one only
//! where it names one of its items), nor is a `pub use` (a re-export: the paths of its users are
//! followed through it to the file that declares the item), nor is a file's use of the modules
//! that enclose it (`super::Ctx` in `rules/arith.rs` naming `rules/mod.rs`'s shared context): a
//! folder's `mod.rs` (or the crate root) is its front door and its children's shared vocabulary,
//! which Rust gives children by design. A parent calling into a child, and every import between
//! siblings or across folders, is an edge. Code under `#[cfg(test)]` is left out: a test may
//! drive a layer from above.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use proc_macro2::{TokenStream, TokenTree};
use syn::visit::Visit;

/// One module: a file, or an inline `mod name { ... }` inside one.
struct Module {
    file: usize,
    parent: Option<usize>,
    children: BTreeMap<String, usize>,
    /// Names of the items declared here (functions, types, traits, constants, macros, ...).
    items: BTreeSet<String>,
    /// `use PATH as NAME` (or `use ...::NAME`): NAME → PATH, as written.
    uses: Vec<(String, Vec<String>)>,
    /// `use PATH::*`.
    globs: Vec<Vec<String>>,
}

/// A path written in a file, inside a module, to be resolved once every module is known.
struct Ref {
    module: usize,
    path: Vec<String>,
}

/// The import graph of one crate target.
pub struct Graph {
    /// The files, relative to the crate's folder (`src/run/alu.rs`).
    pub files: Vec<String>,
    /// Edges by file index: target → one path that made it, for messages.
    pub edges: Vec<BTreeMap<usize, String>>,
}

enum Res {
    Module(usize),
    Item(usize),
}

struct Builder {
    crate_dir: PathBuf,
    files: Vec<String>,
    modules: Vec<Module>,
    refs: Vec<Ref>,
    errors: Vec<String>,
}

impl Graph {
    /// Reads the target rooted at `root` (a path relative to `crate_dir`, e.g. `src/lib.rs`).
    pub fn read(crate_dir: &Path, root: &str) -> Result<Graph, String> {
        let mut b = Builder {
            crate_dir: crate_dir.to_path_buf(),
            files: Vec::new(),
            modules: Vec::new(),
            refs: Vec::new(),
            errors: Vec::new(),
        };
        b.read_file(&crate_dir.join(root), None, None);
        if !b.errors.is_empty() {
            return Err(b.errors.join("\n"));
        }
        // The files of each file's enclosing modules (`src/run/mod.rs` and `src/lib.rs` for
        // `src/run/alu.rs`).
        let mut ancestors = vec![BTreeSet::new(); b.files.len()];
        for m in &b.modules {
            let mut p = m.parent;
            while let Some(a) = p {
                if b.modules[a].file != m.file {
                    ancestors[m.file].insert(b.modules[a].file);
                }
                p = b.modules[a].parent;
            }
        }
        let mut edges = vec![BTreeMap::new(); b.files.len()];
        for r in &b.refs {
            let from = b.modules[r.module].file;
            let to = match b.resolve(r.module, &r.path, 0) {
                Some(Res::Module(m)) => b.modules[m].file,
                Some(Res::Item(f)) => f,
                None => continue,
            };
            if to != from && !ancestors[from].contains(&to) {
                edges[from].entry(to).or_insert_with(|| r.path.join("::"));
            }
        }
        Ok(Graph {
            files: b.files,
            edges,
        })
    }

    /// The file index of `name` (relative to the crate's folder).
    pub fn index(&self, name: &str) -> Option<usize> {
        self.files.iter().position(|f| f == name)
    }
}

impl Builder {
    /// Reads one file as module `name` under `parent`, and the files its `mod` items name.
    fn read_file(&mut self, path: &Path, parent: Option<usize>, name: Option<&str>) -> usize {
        let rel = path
            .strip_prefix(&self.crate_dir)
            .unwrap_or(path)
            .to_string_lossy()
            .into_owned();
        let file = self.files.len();
        self.files.push(rel.clone());
        let module = self.new_module(file, parent, name);
        let text = match fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) => {
                self.errors.push(format!("{rel}: {e}"));
                return module;
            }
        };
        let ast = match syn::parse_file(&text) {
            Ok(a) => a,
            Err(e) => {
                self.errors.push(format!("{rel}: does not parse: {e}"));
                return module;
            }
        };
        // Children of `lib.rs`, `main.rs` and `mod.rs` live beside them; of `x.rs`, in `x/`.
        let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
        let dir = match stem {
            "lib" | "main" | "mod" => path.parent().map(Path::to_path_buf).unwrap_or_default(),
            _ => path.with_extension(""),
        };
        self.read_items(&ast.items, module, &dir);
        module
    }

    fn new_module(&mut self, file: usize, parent: Option<usize>, name: Option<&str>) -> usize {
        let m = self.modules.len();
        self.modules.push(Module {
            file,
            parent,
            children: BTreeMap::new(),
            items: BTreeSet::new(),
            uses: Vec::new(),
            globs: Vec::new(),
        });
        if let (Some(p), Some(n)) = (parent, name) {
            self.modules[p].children.insert(n.to_string(), m);
            self.modules[p].items.insert(n.to_string());
        }
        m
    }

    fn read_items(&mut self, items: &[syn::Item], module: usize, dir: &Path) {
        for item in items {
            if is_test_only(item_attrs(item)) {
                continue;
            }
            match item {
                syn::Item::Mod(m) => {
                    let name = m.ident.to_string();
                    if let Some((_, inner)) = &m.content {
                        let file = self.modules[module].file;
                        let child = self.new_module(file, Some(module), Some(&name));
                        self.read_items(inner, child, &dir.join(&name));
                    } else {
                        let path = match path_attr(&m.attrs) {
                            Some(p) => dir.join(p),
                            None if dir.join(format!("{name}.rs")).exists() => {
                                dir.join(format!("{name}.rs"))
                            }
                            None => dir.join(&name).join("mod.rs"),
                        };
                        self.read_file(&path, Some(module), Some(&name));
                    }
                }
                syn::Item::Use(u) => {
                    let reexport = !matches!(u.vis, syn::Visibility::Inherited);
                    self.add_use(module, &u.tree, reexport);
                }
                _ => {
                    if let Some(name) = item_name(item) {
                        self.modules[module].items.insert(name);
                    }
                    let mut paths = Paths::default();
                    paths.visit_item(item);
                    for p in paths.paths {
                        self.refs.push(Ref { module, path: p });
                    }
                    for (tree, prefix) in paths.uses {
                        self.add_use_refs(module, &tree, prefix);
                    }
                }
            }
        }
    }

    /// A module-level `use`: its names for resolution, and each leaf as a reference unless it
    /// is a re-export (`pub use`), whose users' paths are followed through it instead.
    fn add_use(&mut self, module: usize, tree: &syn::UseTree, reexport: bool) {
        for (name, path) in flatten(tree, Vec::new()) {
            match name {
                Some(n) => self.modules[module].uses.push((n, path.clone())),
                None => self.modules[module].globs.push(path.clone()),
            }
            if !reexport {
                self.refs.push(Ref { module, path });
            }
        }
    }

    /// A `use` inside a body: a reference only (its names are the body's).
    fn add_use_refs(&mut self, module: usize, tree: &syn::UseTree, prefix: Vec<String>) {
        for (_, path) in flatten(tree, prefix) {
            self.refs.push(Ref { module, path });
        }
    }

    /// Resolves `path` written in `from`; None for a path that leaves the crate or names nothing.
    fn resolve(&self, from: usize, path: &[String], depth: usize) -> Option<Res> {
        if depth > 24 || path.is_empty() {
            return None;
        }
        let mut m = from;
        let mut rest = path;
        match path[0].as_str() {
            "crate" => {
                while let Some(p) = self.modules[m].parent {
                    m = p;
                }
                rest = &path[1..];
            }
            "self" => rest = &path[1..],
            "super" => {
                while rest.first().map(String::as_str) == Some("super") {
                    m = self.modules[m].parent?;
                    rest = &rest[1..];
                }
            }
            _ => {}
        }
        let consumed = rest.len() < path.len();
        self.walk(m, rest, depth, consumed)
    }

    /// Follows `segs` from module `m`. Once a segment has been taken (`consumed`), a name the
    /// module does not show (a macro's item, an enum's variant through a glob) is taken to be
    /// the module's own.
    fn walk(&self, m: usize, segs: &[String], depth: usize, consumed: bool) -> Option<Res> {
        let Some(s) = segs.first() else {
            return Some(Res::Module(m));
        };
        let module = &self.modules[m];
        if let Some(&c) = module.children.get(s) {
            return self.walk(c, &segs[1..], depth, true);
        }
        if module.items.contains(s) {
            return Some(Res::Item(module.file));
        }
        for (name, path) in &module.uses {
            if name == s {
                if let Some(r) = self.resolve(m, path, depth + 1) {
                    return match r {
                        Res::Module(c) => self.walk(c, &segs[1..], depth + 1, true),
                        item => Some(item),
                    };
                }
            }
        }
        for g in &module.globs {
            if let Some(Res::Module(gm)) = self.resolve(m, g, depth + 1) {
                if gm != m {
                    if let Some(r) = self.walk(gm, segs, depth + 1, false) {
                        return Some(r);
                    }
                }
            }
        }
        consumed.then_some(Res::Item(module.file))
    }
}

/// The leaves of a `use` tree: (the name it binds, None for a glob; the full path).
fn flatten(tree: &syn::UseTree, prefix: Vec<String>) -> Vec<(Option<String>, Vec<String>)> {
    let mut out = Vec::new();
    let mut stack = vec![(tree, prefix)];
    while let Some((t, mut pre)) = stack.pop() {
        match t {
            syn::UseTree::Path(p) => {
                pre.push(p.ident.to_string());
                stack.push((&p.tree, pre));
            }
            syn::UseTree::Name(n) => {
                let name = n.ident.to_string();
                if name == "self" {
                    let bound = pre.last().cloned();
                    out.push((bound, pre));
                } else {
                    pre.push(name.clone());
                    out.push((Some(name), pre));
                }
            }
            syn::UseTree::Rename(r) => {
                let name = r.ident.to_string();
                if name != "self" {
                    pre.push(name);
                }
                out.push((Some(r.rename.to_string()), pre));
            }
            syn::UseTree::Glob(_) => out.push((None, pre)),
            syn::UseTree::Group(g) => {
                for t in &g.items {
                    stack.push((t, pre.clone()));
                }
            }
        }
    }
    out
}

/// The paths of two or more segments inside an item (and inside its macro calls), and its inner
/// `use` declarations.
#[derive(Default)]
struct Paths {
    paths: Vec<Vec<String>>,
    uses: Vec<(syn::UseTree, Vec<String>)>,
}

impl<'a> Visit<'a> for Paths {
    fn visit_path(&mut self, p: &'a syn::Path) {
        if p.leading_colon.is_none() && p.segments.len() >= 2 {
            self.paths
                .push(p.segments.iter().map(|s| s.ident.to_string()).collect());
        }
        syn::visit::visit_path(self, p);
    }

    fn visit_item_use(&mut self, u: &'a syn::ItemUse) {
        self.uses.push((u.tree.clone(), Vec::new()));
    }

    fn visit_macro(&mut self, m: &'a syn::Macro) {
        self.visit_path(&m.path);
        macro_paths(m.tokens.clone(), &mut self.paths);
    }

    fn visit_item(&mut self, i: &'a syn::Item) {
        if !is_test_only(item_attrs(i)) {
            syn::visit::visit_item(self, i);
        }
    }

    fn visit_impl_item_fn(&mut self, f: &'a syn::ImplItemFn) {
        if !is_test_only(&f.attrs) {
            syn::visit::visit_impl_item_fn(self, f);
        }
    }
}

/// `crate::a::b`, `super::a`, `self::a` and `$crate::a` inside a macro's tokens.
fn macro_paths(tokens: TokenStream, out: &mut Vec<Vec<String>>) {
    let trees: Vec<TokenTree> = tokens.into_iter().collect();
    let mut i = 0;
    while i < trees.len() {
        if let TokenTree::Group(g) = &trees[i] {
            macro_paths(g.stream(), out);
        }
        let starts = matches!(&trees[i], TokenTree::Ident(id) if id == "crate" || id == "super" || id == "self");
        let dollar = i > 0 && matches!(&trees[i - 1], TokenTree::Punct(p) if p.as_char() == '$');
        if starts {
            let mut path = vec![if dollar {
                "crate".to_string()
            } else {
                trees[i].to_string()
            }];
            let mut j = i + 1;
            while let (
                Some(TokenTree::Punct(a)),
                Some(TokenTree::Punct(b)),
                Some(TokenTree::Ident(id)),
            ) = (trees.get(j), trees.get(j + 1), trees.get(j + 2))
            {
                if a.as_char() != ':' || b.as_char() != ':' {
                    break;
                }
                path.push(id.to_string());
                j += 3;
            }
            if path.len() >= 2 {
                out.push(path);
            }
            i = j.max(i + 1);
            continue;
        }
        i += 1;
    }
}

fn item_attrs(item: &syn::Item) -> &[syn::Attribute] {
    match item {
        syn::Item::Const(i) => &i.attrs,
        syn::Item::Enum(i) => &i.attrs,
        syn::Item::ExternCrate(i) => &i.attrs,
        syn::Item::Fn(i) => &i.attrs,
        syn::Item::ForeignMod(i) => &i.attrs,
        syn::Item::Impl(i) => &i.attrs,
        syn::Item::Macro(i) => &i.attrs,
        syn::Item::Mod(i) => &i.attrs,
        syn::Item::Static(i) => &i.attrs,
        syn::Item::Struct(i) => &i.attrs,
        syn::Item::Trait(i) => &i.attrs,
        syn::Item::TraitAlias(i) => &i.attrs,
        syn::Item::Type(i) => &i.attrs,
        syn::Item::Union(i) => &i.attrs,
        syn::Item::Use(i) => &i.attrs,
        _ => &[],
    }
}

fn item_name(item: &syn::Item) -> Option<String> {
    let ident = match item {
        syn::Item::Const(i) => &i.ident,
        syn::Item::Enum(i) => &i.ident,
        syn::Item::ExternCrate(i) => &i.ident,
        syn::Item::Fn(i) => &i.sig.ident,
        syn::Item::Macro(i) => i.ident.as_ref()?,
        syn::Item::Static(i) => &i.ident,
        syn::Item::Struct(i) => &i.ident,
        syn::Item::Trait(i) => &i.ident,
        syn::Item::TraitAlias(i) => &i.ident,
        syn::Item::Type(i) => &i.ident,
        syn::Item::Union(i) => &i.ident,
        _ => return None,
    };
    Some(ident.to_string())
}

/// `#[cfg(test)]` (or `#[cfg(all(test, ...))]`).
fn is_test_only(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg")
            && a.meta.require_list().is_ok_and(|l| {
                let t = l.tokens.to_string().replace(' ', "");
                t == "test" || t.starts_with("all(test,")
            })
    })
}

/// `#[path = "..."]`.
fn path_attr(attrs: &[syn::Attribute]) -> Option<String> {
    attrs.iter().find_map(|a| match &a.meta {
        syn::Meta::NameValue(nv) if nv.path.is_ident("path") => match &nv.value {
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) => Some(s.value()),
            _ => None,
        },
        _ => None,
    })
}
