//! The module graph of `src/`: every path that names a top-level module of
//! the crate — `use crate::a::b`, a grouped `use crate::{a, b}`, an inline
//! `crate::a::f()`, a `super::` chain that climbs out of its module, the
//! strings of attributes such as `#[serde(with = "crate::a::b")]`, and the
//! arguments of macro calls — goes to a module in a lower layer of the
//! table in `docs/architecture.md`. Files are found as the compiler finds
//! them, from `src/lib.rs` through every `mod` (with `#[path]`), so each
//! file is read with its real module path. The language table, besides,
//! runs nothing and reads no file.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use proc_macro2::{TokenStream, TokenTree};
use syn::visit::Visit;

/// One use of another top-level module.
#[derive(Debug, Clone)]
struct Edge {
    from: String,
    to: String,
    file: PathBuf,
    path: String,
}

/// What the walk found: the top-level modules (declared or re-exported in
/// `lib.rs`) and every path naming one from another.
#[derive(Debug, Default)]
struct Graph {
    modules: BTreeSet<String>,
    edges: Vec<Edge>,
    /// Paths starting with these, per top-level module (for the rules
    /// that are not about layers).
    std_paths: Vec<(String, PathBuf, String)>,
}

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn parse(file: &Path) -> syn::File {
    let text = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", file.display()))
}

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

/// Walks the file `file` of module `module`; `dir` is where the files of
/// its child modules are, and `inline` whether the walk is inside an
/// inline `mod x { ... }` of the file (a `#[path]` outside one is relative
/// to the file's own directory).
struct Walker<'g> {
    graph: &'g mut Graph,
    file: PathBuf,
    module: Vec<String>,
    dir: PathBuf,
    inline: bool,
}

impl Walker<'_> {
    fn top(&self) -> Option<&str> {
        self.module.first().map(String::as_str)
    }

    /// Records `segments` (a path as written) if it names another
    /// top-level module.
    fn resolve(&mut self, segments: &[String]) {
        let Some(top) = self.top().map(str::to_string) else {
            return; // The crate root declares the modules.
        };
        if let Some(first) = segments.first()
            && first == "std"
        {
            self.graph
                .std_paths
                .push((top.clone(), self.file.clone(), segments.join("::")));
        }
        let target = match segments.first().map(String::as_str) {
            Some("crate") => segments.get(1),
            Some("super") => {
                let climbs = segments.iter().take_while(|s| *s == "super").count();
                if climbs < self.module.len() {
                    return; // Still inside this top-level module.
                }
                segments.get(climbs)
            }
            _ => None,
        };
        let Some(target) = target else { return };
        if *target != top {
            self.graph.edges.push(Edge {
                from: top,
                to: target.clone(),
                file: self.file.clone(),
                path: segments.join("::"),
            });
        }
    }

    fn use_tree(&mut self, prefix: &mut Vec<String>, tree: &syn::UseTree) {
        match tree {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                self.use_tree(prefix, &p.tree);
                prefix.pop();
            }
            syn::UseTree::Name(n) => {
                prefix.push(n.ident.to_string());
                let path = prefix.clone();
                self.resolve(&path);
                prefix.pop();
            }
            syn::UseTree::Rename(r) => {
                prefix.push(r.ident.to_string());
                let path = prefix.clone();
                self.resolve(&path);
                prefix.pop();
            }
            syn::UseTree::Glob(_) => {
                let path = prefix.clone();
                self.resolve(&path);
            }
            syn::UseTree::Group(g) => {
                for tree in &g.items {
                    self.use_tree(prefix, tree);
                }
            }
        }
    }

    /// `crate::a::b` and `super::x` sequences in a token stream (a macro's
    /// arguments, an attribute).
    fn tokens(&mut self, tokens: TokenStream) {
        let trees: Vec<TokenTree> = tokens.into_iter().collect();
        let mut i = 0;
        while i < trees.len() {
            match &trees[i] {
                TokenTree::Group(g) => self.tokens(g.stream()),
                TokenTree::Literal(lit) => {
                    let text = lit.to_string();
                    if let Some(inner) = text.strip_prefix('"').and_then(|t| t.strip_suffix('"'))
                        && (inner.starts_with("crate::") || inner.starts_with("super::"))
                    {
                        let segments: Vec<String> = inner.split("::").map(str::to_string).collect();
                        self.resolve(&segments);
                    }
                }
                TokenTree::Ident(id) if *id == "crate" || *id == "super" => {
                    let mut segments = vec![id.to_string()];
                    let mut j = i + 1;
                    while j + 2 < trees.len() + 1 {
                        let colons = matches!(&trees.get(j), Some(TokenTree::Punct(p)) if p.as_char() == ':')
                            && matches!(&trees.get(j + 1), Some(TokenTree::Punct(p)) if p.as_char() == ':');
                        match (colons, trees.get(j + 2)) {
                            (true, Some(TokenTree::Ident(next))) => {
                                segments.push(next.to_string());
                                j += 3;
                            }
                            _ => break,
                        }
                    }
                    if segments.len() > 1 {
                        self.resolve(&segments);
                    }
                    i = j;
                    continue;
                }
                _ => {}
            }
            i += 1;
        }
    }
}

impl<'ast> Visit<'ast> for Walker<'_> {
    fn visit_item_mod(&mut self, item: &'ast syn::ItemMod) {
        let name = item.ident.to_string();
        let mut module = self.module.clone();
        module.push(name.clone());
        match &item.content {
            Some((_, items)) => {
                let mut inner = Walker {
                    graph: &mut *self.graph,
                    file: self.file.clone(),
                    module,
                    dir: self.dir.join(&name),
                    inline: true,
                };
                for attr in &item.attrs {
                    inner.visit_attribute(attr);
                }
                for item in items {
                    inner.visit_item(item);
                }
            }
            None => {
                let file = match path_attr(&item.attrs) {
                    Some(path) if self.inline => self.dir.join(path),
                    Some(path) => self.file.parent().unwrap().join(path),
                    None if self.dir.join(format!("{name}.rs")).is_file() => {
                        self.dir.join(format!("{name}.rs"))
                    }
                    None => self.dir.join(&name).join("mod.rs"),
                };
                let dir = if file.file_name().is_some_and(|f| f == "mod.rs") {
                    file.parent().unwrap().to_path_buf()
                } else {
                    file.with_extension("")
                };
                walk(self.graph, &file, module, dir);
            }
        }
    }

    fn visit_item_use(&mut self, item: &'ast syn::ItemUse) {
        self.use_tree(&mut Vec::new(), &item.tree);
    }

    fn visit_path(&mut self, path: &'ast syn::Path) {
        let segments: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
        self.resolve(&segments);
        syn::visit::visit_path(self, path);
    }

    fn visit_attribute(&mut self, attr: &'ast syn::Attribute) {
        // Doc comments name other modules in links; they are not uses.
        if attr.path().is_ident("doc") {
            return;
        }
        if let syn::Meta::List(list) = &attr.meta {
            self.tokens(list.tokens.clone());
        }
        syn::visit::visit_attribute(self, attr);
    }

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        self.tokens(mac.tokens.clone());
        syn::visit::visit_macro(self, mac);
    }
}

fn walk(graph: &mut Graph, file: &Path, module: Vec<String>, dir: PathBuf) {
    let ast = parse(file);
    let mut walker = Walker {
        graph,
        file: file.to_path_buf(),
        module,
        dir,
        inline: false,
    };
    walker.visit_file(&ast);
}

fn graph() -> Graph {
    graph_of(&src())
}

/// The graph of the crate whose `lib.rs` is in `dir`.
fn graph_of(dir: &Path) -> Graph {
    let root = dir.join("lib.rs");
    let mut graph = Graph::default();
    for item in parse(&root).items {
        match item {
            syn::Item::Mod(m) => {
                graph.modules.insert(m.ident.to_string());
            }
            // `pub use other_crate::{a, b}`: modules of the crate's API too.
            syn::Item::Use(u) => {
                fn leaves(tree: &syn::UseTree, out: &mut BTreeSet<String>) {
                    match tree {
                        syn::UseTree::Path(p) => leaves(&p.tree, out),
                        syn::UseTree::Name(n) => {
                            out.insert(n.ident.to_string());
                        }
                        syn::UseTree::Rename(r) => {
                            out.insert(r.rename.to_string());
                        }
                        syn::UseTree::Group(g) => g.items.iter().for_each(|t| leaves(t, out)),
                        syn::UseTree::Glob(_) => {}
                    }
                }
                leaves(&u.tree, &mut graph.modules);
            }
            _ => {}
        }
    }
    walk(&mut graph, &root, Vec::new(), dir.to_path_buf());
    graph
}

/// The layer table of `docs/architecture.md`: rows `| N | `a`, `b/` | ...`
/// under the `## Layers` heading.
fn layers() -> BTreeMap<String, u32> {
    let doc = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/architecture.md");
    let text = std::fs::read_to_string(&doc).unwrap();
    let section = text
        .split("\n## Layers")
        .nth(1)
        .unwrap_or_else(|| panic!("{} has no \"## Layers\" section", doc.display()));
    let section = section.split("\n## ").next().unwrap_or_default();
    let mut layers = BTreeMap::new();
    for line in section.lines() {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        let Some(layer) = cells.get(1).and_then(|c| c.parse::<u32>().ok()) else {
            continue;
        };
        for name in cells[2].split('`').skip(1).step_by(2) {
            let name = name.trim_end_matches('/').trim_end_matches(".rs");
            assert!(
                layers.insert(name.to_string(), layer).is_none(),
                "{name} is in the layer table twice"
            );
        }
    }
    assert!(!layers.is_empty(), "no layer rows in {}", doc.display());
    layers
}

#[test]
fn every_module_uses_only_lower_layers() {
    let graph = graph();
    let layers = layers();
    let listed: BTreeSet<String> = layers.keys().cloned().collect();
    assert_eq!(
        listed, graph.modules,
        "the layer table and the modules of src/lib.rs differ"
    );
    let mut wrong: Vec<String> = graph
        .edges
        .iter()
        .filter(|e| {
            let layer = |m: &str| {
                *layers
                    .get(m)
                    .unwrap_or_else(|| panic!("{}: {} is not a module", e.file.display(), e.path))
            };
            layer(&e.to) >= layer(&e.from)
        })
        .map(|e| {
            format!(
                "{} (layer {}) uses {} (layer {}): {} in {}",
                e.from,
                layers[&e.from],
                e.to,
                layers[&e.to],
                e.path,
                e.file.strip_prefix(src()).unwrap_or(&e.file).display()
            )
        })
        .collect();
    wrong.sort();
    wrong.dedup();
    assert!(
        wrong.is_empty(),
        "paths that go to the same or a higher layer:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_walk_sees_every_kind_of_path() {
    // A small crate with one use of each kind: the walk must find them
    // all, or the test above could pass on a graph with edges missing.
    let dir = tempfile::tempdir().unwrap();
    let write = |path: &str, text: &str| {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write(
        "lib.rs",
        "mod a;\nmod b;\nmod c;\npub use other::{d, e as f};\n",
    );
    write(
        "a.rs",
        r#"use crate::{b::X, c};
use self::inner::Y;
fn f() { crate::c::g(); }
#[serde(with = "crate::b::text")]
struct S;
/// Links to [`crate::c`] are not uses.
mod inner {
    use super::super::c::Z;
    use super::S;
}
#[path = "a_tests.rs"]
mod tests;
"#,
    );
    write("a_tests.rs", "use super::super::b::Q;\nuse super::f;\n");
    write("b/mod.rs", "mod deep;\n");
    write("b/deep.rs", "fn x() { println!(\"{}\", crate::c::K); }\n");
    write("c.rs", "use crate::d::D;\n");
    let graph = graph_of(dir.path());
    assert_eq!(
        graph.modules.iter().map(String::as_str).collect::<Vec<_>>(),
        ["a", "b", "c", "d", "f"]
    );
    let mut edges: Vec<(String, String, String)> = graph
        .edges
        .iter()
        .map(|e| {
            let file = e
                .file
                .strip_prefix(dir.path())
                .unwrap()
                .display()
                .to_string();
            (file, e.to.clone(), e.path.clone())
        })
        .collect();
    edges.sort();
    let expected: Vec<(String, String, String)> = [
        ("a.rs", "b", "crate::b::X"),
        ("a.rs", "b", "crate::b::text"),
        ("a.rs", "c", "crate::c"),
        ("a.rs", "c", "crate::c::g"),
        ("a.rs", "c", "super::super::c::Z"),
        ("a_tests.rs", "b", "super::super::b::Q"),
        ("b/deep.rs", "c", "crate::c::K"),
        ("c.rs", "d", "crate::d::D"),
    ]
    .iter()
    .map(|(f, t, p)| (f.to_string(), t.to_string(), p.to_string()))
    .collect();
    assert_eq!(edges, expected);
}

#[test]
fn the_language_table_runs_nothing_and_reads_no_file() {
    let graph = graph();
    let used: Vec<&(String, PathBuf, String)> = graph
        .std_paths
        .iter()
        .filter(|(top, _, path)| {
            top == "lang" && (path.starts_with("std::fs") || path.starts_with("std::process"))
        })
        .collect();
    assert!(used.is_empty(), "{used:#?}");
}

/// Places in one file that match on (or compare with) a variant of the
/// log's `Event`.
#[derive(Default)]
struct EventMatches {
    /// The file names the protocol's `Event` (other crates have theirs).
    uses_event: bool,
    places: usize,
}

impl EventMatches {
    fn is_event(path: &syn::Path) -> bool {
        let names: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
        names.len() >= 2 && names[names.len() - 2] == "Event"
    }
}

impl<'ast> Visit<'ast> for EventMatches {
    fn visit_item_use(&mut self, item: &'ast syn::ItemUse) {
        fn names_event(tree: &syn::UseTree, protocol: bool) -> bool {
            match tree {
                syn::UseTree::Path(p) => names_event(&p.tree, protocol || p.ident == "protocol"),
                syn::UseTree::Name(n) => protocol && n.ident == "Event",
                syn::UseTree::Rename(r) => protocol && r.ident == "Event",
                syn::UseTree::Group(g) => g.items.iter().any(|t| names_event(t, protocol)),
                syn::UseTree::Glob(_) => protocol,
            }
        }
        self.uses_event |= names_event(&item.tree, false);
    }

    fn visit_pat(&mut self, pat: &'ast syn::Pat) {
        let path = match pat {
            syn::Pat::Struct(p) => Some(&p.path),
            syn::Pat::TupleStruct(p) => Some(&p.path),
            syn::Pat::Path(p) => Some(&p.path),
            _ => None,
        };
        if path.is_some_and(Self::is_event) {
            self.places += 1;
        }
        syn::visit::visit_pat(self, pat);
    }

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        // Macro arguments are tokens to syn: read `matches!(e, PAT)` and
        // the expressions of the others (`assert!(matches!(..))`).
        use syn::parse::Parser;
        let tokens = mac.tokens.clone();
        if mac.path.is_ident("matches") {
            let parsed = (|input: syn::parse::ParseStream<'_>| {
                let expr: syn::Expr = input.parse()?;
                input.parse::<syn::Token![,]>()?;
                let pat = syn::Pat::parse_multi_with_leading_vert(input)?;
                let _rest: proc_macro2::TokenStream = input.parse()?;
                Ok((expr, pat))
            })
            .parse2(tokens);
            if let Ok((expr, pat)) = parsed {
                self.visit_expr(&expr);
                self.visit_pat(&pat);
            }
            return;
        }
        let args = syn::punctuated::Punctuated::<syn::Expr, syn::Token![,]>::parse_terminated;
        if let Ok(exprs) = args.parse2(tokens) {
            for expr in &exprs {
                self.visit_expr(expr);
            }
        }
    }

    fn visit_expr_binary(&mut self, expr: &'ast syn::ExprBinary) {
        if matches!(expr.op, syn::BinOp::Eq(_) | syn::BinOp::Ne(_)) {
            for side in [&*expr.left, &*expr.right] {
                let path = match side {
                    syn::Expr::Struct(s) => Some(&s.path),
                    syn::Expr::Path(p) => Some(&p.path),
                    _ => None,
                };
                if path.is_some_and(Self::is_event) {
                    self.places += 1;
                }
            }
        }
        syn::visit::visit_expr_binary(self, expr);
    }
}

#[test]
fn only_the_state_interprets_events() {
    // The log (I/O), the protocol (the vocabulary) and the state (the one
    // reading: the reducer, the detail fold, describe) match on event
    // variants; every other module renders what the state gives. The few
    // exceptions are named here, each with why in a comment beside it.
    let allowed: BTreeMap<&str, usize> = [
        // The runner's cancel watch reacts to one event from another
        // process as its follower reads it.
        ("lifecycle/cancel_watch.rs", 1),
    ]
    .into();
    fn files(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                files(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    let mut all = Vec::new();
    files(&src(), &mut all);
    let mut found = BTreeMap::new();
    for file in all {
        let rel = file.strip_prefix(src()).unwrap().display().to_string();
        if ["state/", "log/", "protocol/"]
            .iter()
            .any(|inside| rel.starts_with(inside))
        {
            continue;
        }
        let mut matches = EventMatches::default();
        matches.visit_file(&parse(&file));
        if matches.uses_event && matches.places > 0 {
            found.insert(rel, matches.places);
        }
    }
    for (file, places) in &found {
        let most = allowed.get(file.as_str()).copied().unwrap_or(0);
        assert!(
            *places <= most,
            "{file} matches on event variants in {places} place(s): words for an event come from state::describe, facts from the state's summary"
        );
    }
    assert!(found.len() <= 3, "{found:?}");
}

/// Macros that print straight to the terminal, by module.
#[derive(Default)]
struct Prints {
    places: Vec<String>,
}

impl<'ast> Visit<'ast> for Prints {
    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        let name = mac
            .path
            .segments
            .last()
            .map(|s| s.ident.to_string())
            .unwrap_or_default();
        if matches!(name.as_str(), "println" | "eprintln" | "print" | "eprint") {
            self.places.push(name);
        }
        syn::visit::visit_macro(self, mac);
    }

    fn visit_item_mod(&mut self, item: &'ast syn::ItemMod) {
        // Tests print what they like.
        let test = item.attrs.iter().any(|a| {
            a.path().is_ident("cfg")
                && a.parse_args::<syn::Ident>()
                    .is_ok_and(|ident| ident == "test")
        });
        if !test {
            syn::visit::visit_item_mod(self, item);
        }
    }
}

/// Only `cli` prints (its output macros, which escape what they print) and
/// the batch's one reporter writes progress: nothing else prints straight
/// to the terminal.
#[test]
fn nothing_below_the_cli_prints() {
    let mut found = Vec::new();
    let mut stack = vec![src()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                if !path.ends_with("cli") {
                    stack.push(path);
                }
                continue;
            }
            let name = path.file_name().unwrap().to_string_lossy().to_string();
            if !name.ends_with(".rs") || name.ends_with("_tests.rs") || name == "tests.rs" {
                continue;
            }
            let mut prints = Prints::default();
            prints.visit_file(&parse(&path));
            if !prints.places.is_empty() {
                found.push(format!("{}: {:?}", path.display(), prints.places));
            }
        }
    }
    assert!(found.is_empty(), "{found:#?}");
}
