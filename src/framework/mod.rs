//! Framework-aware chunking strategies (README, the "framework awareness" item), each
//! chosen by path and content and applied after the AST chunker:
//!
//! - PHP ([`php`]): imports, constructor DI, Eloquent models and relations,
//!   `$translatable`, Filament resources / schema classes / actions, and
//!   migrations as `table_schema` chunks;
//! - `composer.json`: `composer_require`, `composer_require_dev` and
//!   `composer_autoload` chunks instead of line windows;
//! - `tailwind.config.{js,ts,cjs,mjs}`: `tailwind_theme`,
//!   `tailwind_plugins` and `tailwind_content` chunks read from the JS/TS
//!   AST, instead of the module summary;
//! - Blade: related symbols of each chunk from its components (`<x-user-card>`
//!   → `App\View\Components\UserCard`), `@livewire` (→ `App\Livewire\…`),
//!   views (`view:layouts.app`) and routes (`route:orders.show`).
//!
//! Facts go to [`Chunk::meta`] ([`Facts`]) and [`Chunk::related`].

pub mod conventions;
pub mod locales;
mod php;

use serde_json::Value;
use tree_sitter::{Node, Parser, Tree};

use crate::chunk::Chunk;
use crate::chunk::facts::{Directories, Fact, Facts, Framework};
use crate::lang::Lang;
use crate::search::symbols::{FileSymbols, text};

/// Applies every strategy that fits `file` (repo-relative, `/`) to its AST
/// chunks. Never fails: a strategy that cannot read the file leaves the
/// chunks as they are.
pub fn enrich(file: &str, source: &str, symbols: Option<&FileSymbols>, chunks: &mut Vec<Chunk>) {
    let name = file.rsplit('/').next().unwrap_or(file);
    if name == "composer.json"
        && let Some(c) = composer(file, source)
    {
        *chunks = c;
        return;
    }
    let lang = symbols.map(|s| s.lang);
    if name.starts_with("tailwind.config.")
        && matches!(lang, Some(Lang::JavaScript | Lang::TypeScript))
    {
        let found = tailwind(file, source, lang.unwrap_or(Lang::JavaScript));
        if !found.is_empty() {
            chunks.retain(|c| c.kind != "module");
            chunks.extend(found);
        }
        return;
    }
    match (lang, symbols) {
        (Some(Lang::Php), _) => php::enrich(file, source, chunks),
        (Some(Lang::Blade), Some(s)) => blade_related(s, chunks),
        _ => {}
    }
}

/// `x-forms.search-input` → `App\View\Components\Forms\SearchInput`;
/// `livewire:order-filter` / `@livewire('order-filter')` →
/// `App\Livewire\OrderFilter` (Livewire 3's default namespace).
pub fn blade_component_class(tag: &str, livewire: bool) -> String {
    let path: Vec<String> = tag.split('.').map(crate::util::studly).collect();
    let ns = if livewire {
        "App\\Livewire"
    } else {
        "App\\View\\Components"
    };
    format!("{ns}\\{}", path.join("\\"))
}

fn blade_related(symbols: &FileSymbols, chunks: &mut [Chunk]) {
    for c in chunks.iter_mut() {
        let mut related: Vec<String> = symbols
            .references
            .iter()
            .filter(|r| c.start_line <= r.line && r.line <= c.end_line)
            .map(|r| match r.kind.as_str() {
                "component" => match r.name.strip_prefix("livewire:") {
                    Some(lw) => blade_component_class(lw, true),
                    None => blade_component_class(r.name.trim_start_matches("x-"), false),
                },
                "livewire" => blade_component_class(&r.name, true),
                other => format!("{other}:{}", r.name),
            })
            .collect();
        related.sort();
        related.dedup();
        if !related.is_empty() {
            c.meta.set(Fact::Framework(Framework::Blade));
            c.related = related;
        }
    }
}

/// 1-based line of the first `"key"` in a JSON text.
fn json_key_line(source: &str, key: &str) -> Option<usize> {
    let needle = format!("\"{key}\"");
    source
        .lines()
        .position(|l| l.contains(&needle))
        .map(|i| i + 1)
}

/// The `composer.json` strategy; `None` when the file is not valid JSON.
fn composer(file: &str, source: &str) -> Option<Vec<Chunk>> {
    let v: Value = serde_json::from_str(source).ok()?;
    let package = v["name"].as_str().unwrap_or("").to_string();
    let total = source.lines().count().max(1);
    let mut out = Vec::new();
    let mut section = |kind: &str, key: &str, value: &Value, meta: Facts| {
        let start = json_key_line(source, key).unwrap_or(1);
        let content = format!(
            "\"{key}\": {}",
            serde_json::to_string_pretty(value).unwrap_or_default()
        );
        let end = (start + content.lines().count())
            .saturating_sub(1)
            .min(total);
        let mut m = meta;
        m.set(Fact::Framework(Framework::Composer));
        if !package.is_empty() {
            m.set(Fact::Package(package.clone()));
        }
        out.push(Chunk {
            file: file.to_string(),
            language: "json".into(),
            kind: kind.to_string(),
            name: key.to_string(),
            scope: None,
            fqcn: None,
            signature: format!("composer.json {key}"),
            doc: Some(match kind {
                "composer_autoload" => {
                    "PHP namespaces and their autoload directories (PSR-4)".into()
                }
                "composer_require_dev" => "Development dependencies (Composer packages)".into(),
                _ => "Dependencies (Composer packages and versions)".into(),
            }),
            start_line: start,
            end_line: end.max(start),
            content,
            meta: m,
            related: Vec::new(),
        });
    };
    for (key, kind) in [
        ("require", "composer_require"),
        ("require-dev", "composer_require_dev"),
    ] {
        if let Some(obj) = v[key].as_object() {
            // Version constraints are strings (Composer's schema).
            let packages = obj
                .iter()
                .filter_map(|(name, version)| Some((name.clone(), version.as_str()?.to_string())))
                .collect();
            section(
                kind,
                key,
                &v[key],
                Facts::from_iter([Fact::Packages(packages)]),
            );
        }
    }
    for key in ["autoload", "autoload-dev"] {
        if let Some(obj) = v[key].as_object() {
            let psr4 = obj.get("psr-4").and_then(Value::as_object).map(|roots| {
                Fact::Psr4(
                    roots
                        .iter()
                        .filter_map(|(prefix, dirs)| Some((prefix.clone(), directories(dirs)?)))
                        .collect(),
                )
            });
            section(
                "composer_autoload",
                key,
                &v[key],
                psr4.into_iter().collect(),
            );
        }
    }
    (!out.is_empty()).then_some(out)
}

/// A PSR-4 root's directory (a string) or directories (an array of
/// strings, others left out); `None` for anything else.
fn directories(value: &Value) -> Option<Directories> {
    match value {
        Value::String(dir) => Some(Directories::One(dir.clone())),
        Value::Array(dirs) => Some(Directories::Many(
            dirs.iter()
                .filter_map(|d| d.as_str().map(String::from))
                .collect(),
        )),
        _ => None,
    }
}

/// Parses `source` with `lang`'s grammar; `None` if the parser fails.
fn parse(lang: Lang, source: &str) -> Option<Tree> {
    let mut parser = Parser::new();
    parser.set_language(&lang.grammar()).ok()?;
    parser.parse(source, None)
}

fn named_children(n: Node) -> Vec<Node> {
    let mut c = n.walk();
    n.named_children(&mut c).collect()
}

/// Every named descendant of `n` (pre-order), `n` included.
fn descendants(n: Node) -> Vec<Node> {
    let mut out = Vec::new();
    let mut stack = vec![n];
    while let Some(x) = stack.pop() {
        out.push(x);
        let mut kids = named_children(x);
        kids.reverse();
        stack.extend(kids);
    }
    out
}

/// A JS object key or string value without quotes.
fn js_name(n: Node, src: &str) -> String {
    text(n, src)
        .trim_matches(|c| c == '\'' || c == '"' || c == '`')
        .to_string()
}

/// The `key: value` pairs of a JS object node.
fn pairs<'t>(obj: Node<'t>, src: &str) -> Vec<(String, Node<'t>)> {
    let mut c = obj.walk();
    obj.named_children(&mut c)
        .filter(|p| p.kind() == "pair")
        .filter_map(|p| {
            Some((
                js_name(p.child_by_field_name("key")?, src),
                p.child_by_field_name("value")?,
            ))
        })
        .collect()
}

/// The `tailwind.config.*` strategy: the first object with a `theme`,
/// `content` or `plugins` key (the exported config, whether `export
/// default {…}`, `module.exports = {…}` or `satisfies Config`).
fn tailwind(file: &str, source: &str, lang: Lang) -> Vec<Chunk> {
    let Some(tree) = parse(lang, source) else {
        return Vec::new();
    };
    let Some(config) = descendants(tree.root_node()).into_iter().find(|n| {
        n.kind() == "object"
            && pairs(*n, source)
                .iter()
                .any(|(k, _)| matches!(k.as_str(), "theme" | "content" | "plugins"))
    }) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (key, value) in pairs(config, source) {
        let mut meta = Facts::from_iter([Fact::Framework(Framework::Tailwind)]);
        let (kind, doc) = match key.as_str() {
            "theme" => {
                // Keys of colors / screens / fontFamily, in theme or theme.extend.
                let mut scopes = vec![value];
                if let Some((_, ext)) = pairs(value, source)
                    .into_iter()
                    .find(|(k, _)| k == "extend")
                {
                    scopes.push(ext);
                }
                // Each list in the order its key first appears.
                let mut lists: Vec<(String, Vec<String>)> = Vec::new();
                for scope in scopes {
                    for (k, v) in pairs(scope, source) {
                        if !matches!(k.as_str(), "colors" | "screens" | "fontFamily") {
                            continue;
                        }
                        let names = pairs(v, source).into_iter().map(|(n, _)| n);
                        match lists.iter_mut().find(|(seen, _)| *seen == k) {
                            Some((_, list)) => list.extend(names),
                            None => lists.push((k, names.collect())),
                        }
                    }
                }
                for (k, names) in lists {
                    meta.set(match k.as_str() {
                        "colors" => Fact::Colors(names),
                        "screens" => Fact::Screens(names),
                        _ => Fact::Fonts(names),
                    });
                }
                (
                    "tailwind_theme",
                    "Tailwind CSS theme: colors, screens (breakpoints), fonts",
                )
            }
            "plugins" => {
                let mut c = value.walk();
                let plugins: Vec<String> = value
                    .named_children(&mut c)
                    .map(|p| {
                        let t = text(p, source);
                        match t.find("require(") {
                            Some(i) => js_name_in_call(&t[i + 8..]),
                            None => t.to_string(),
                        }
                    })
                    .collect();
                meta.set(Fact::Plugins(plugins));
                ("tailwind_plugins", "Tailwind CSS plugins")
            }
            "content" => {
                let mut c = value.walk();
                let paths: Vec<String> = value
                    .named_children(&mut c)
                    .filter(|p| p.kind() == "string")
                    .map(|p| js_name(p, source))
                    .collect();
                meta.set(Fact::Content(paths));
                (
                    "tailwind_content",
                    "Tailwind CSS content paths (files scanned for classes)",
                )
            }
            _ => continue,
        };
        let pair = value.parent().unwrap_or(value);
        let (start, end) = (pair.start_position().row + 1, pair.end_position().row + 1);
        out.push(Chunk {
            file: file.to_string(),
            language: lang.name().into(),
            kind: kind.into(),
            name: key.clone(),
            scope: None,
            fqcn: None,
            signature: format!("tailwind {key}"),
            doc: Some(doc.into()),
            start_line: start,
            end_line: end,
            content: text(pair, source).to_string(),
            meta,
            related: Vec::new(),
        });
    }
    out
}

/// `'@tailwindcss/forms')` → `@tailwindcss/forms`.
fn js_name_in_call(rest: &str) -> String {
    rest.split(')')
        .next()
        .unwrap_or(rest)
        .trim()
        .trim_matches(|c| c == '\'' || c == '"' || c == '`')
        .to_string()
}

/// The chunks of one file as the index stores them: AST chunks (or line
/// windows) with the framework strategies applied. `rel` is repo-relative
/// with `/`; it picks the language and the strategies.
pub fn chunk_source(rel: &str, source: &str, config: &crate::config::Config) -> Vec<Chunk> {
    let syms = Lang::from_path(std::path::Path::new(rel))
        .map(|l| crate::search::symbols::extract(l, source, rel));
    let mut chunks = crate::chunk::chunk_file(
        rel,
        source,
        syms.as_ref(),
        config.chunk_max_chars(),
        config.lightweight_mode,
    );
    enrich(rel, source, syms.as_ref(), &mut chunks);
    chunks
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::chunk_source;
    use crate::config::Config;

    /// Snapshot tests, one fixture per strategy (tests/fixtures/laravel-app):
    /// the chunks (kind, name, lines, FQCN, meta, related) are compared with
    /// tests/snapshots/<name>.json. `UPDATE_SNAPSHOTS=1 cargo test` rewrites
    /// them; review the diff before committing.
    #[test]
    fn strategy_snapshots() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let app = root.join("tests/fixtures/laravel-app");
        let config = Config::default();
        let mut failures = Vec::new();
        for (snapshot, rel) in [
            (
                "migration",
                "database/migrations/2024_01_01_000003_create_orders_table.php",
            ),
            (
                "migration_alter",
                "database/migrations/2024_02_01_000004_add_tracking_to_orders_table.php",
            ),
            ("composer", "composer.json"),
            ("tailwind", "tailwind.config.js"),
            (
                "filament_resource_v4",
                "app/Filament/Resources/Products/ProductResource.php",
            ),
            (
                "filament_form_v4",
                "app/Filament/Resources/Products/Schemas/ProductForm.php",
            ),
            (
                "filament_table_v4",
                "app/Filament/Resources/Products/Tables/ProductsTable.php",
            ),
            (
                "filament_page_actions",
                "app/Filament/Resources/Products/Pages/EditProduct.php",
            ),
            (
                "filament_resource_v3",
                "app/Filament/Resources/Orders/OrderResource.php",
            ),
            ("eloquent_model", "app/Models/Product.php"),
            ("controller_di", "app/Http/Controllers/OrderController.php"),
            ("blade_view", "resources/views/orders/show.blade.php"),
            ("vue_sfc", "resources/js/components/OrderSummary.vue"),
        ] {
            let source = std::fs::read_to_string(app.join(rel)).expect("fixture");
            let chunks: Vec<serde_json::Value> = chunk_source(rel, &source, &config)
                .iter()
                .map(|c| {
                    serde_json::json!({
                        "kind": c.kind, "name": c.name, "lines": [c.start_line, c.end_line],
                        "fqcn": c.fqcn, "meta": c.meta, "related": c.related,
                    })
                })
                .collect();
            let got = serde_json::to_string_pretty(&chunks).expect("json") + "\n";
            let path = root.join(format!("tests/snapshots/{snapshot}.json"));
            if std::env::var_os("UPDATE_SNAPSHOTS").is_some() {
                std::fs::create_dir_all(path.parent().expect("dir")).expect("mkdir");
                std::fs::write(&path, &got).expect("write snapshot");
                continue;
            }
            let want = std::fs::read_to_string(&path).unwrap_or_default();
            if want != got {
                failures.push(format!("{snapshot} ({rel}):\n{got}"));
            }
        }
        assert!(
            failures.is_empty(),
            "snapshots differ:\n{}",
            failures.join("\n")
        );
    }

    /// Input a strategy cannot read keeps the AST / window chunks.
    #[test]
    fn unreadable_input_falls_back() {
        let config = Config::default();
        let broken = "{ \"require\": { \"php\": \"^8.2\", \n";
        let chunks = chunk_source("composer.json", broken, &config);
        assert_eq!(chunks.len(), 1);
        assert_eq!(chunks[0].kind, "window");
        // A syntax error after an intact Schema::create keeps its chunk.
        let half = "<?php\nSchema::create('orders', function (Blueprint $table) {\n    $table->id();\n});\nfunction down( {\n";
        let chunks = chunk_source("database/migrations/x.php", half, &config);
        let schema = chunks
            .iter()
            .find(|c| c.kind == "table_schema")
            .expect("table_schema");
        assert_eq!(schema.name, "orders");
        let tw = chunk_source("tailwind.config.js", "module.exports = 42\n", &config);
        assert!(tw.iter().all(|c| !c.kind.starts_with("tailwind_")));
    }

    /// A minified line (Laravel's stock welcome page inlines
    /// normalize.css on one line) is in no chunk; the markup around it is.
    #[test]
    fn minified_lines_are_left_out_of_chunks() {
        let config = Config::default();
        let css = "html{line-height:1.15}".repeat(200);
        let view = format!(
            "<html>\n<head>\n<style>\n{css}\n</style>\n</head>\n<body>\n<a href=\"/login\">Log in</a>\n</body>\n</html>\n"
        );
        let chunks = chunk_source("resources/views/welcome.blade.php", &view, &config);
        assert!(!chunks.is_empty());
        assert!(
            chunks.iter().all(|c| !c.content.contains("line-height")),
            "{chunks:?}"
        );
        assert!(chunks.iter().any(|c| c.content.contains("Log in")));
        // A file of one minified line has no chunk at all.
        assert!(chunk_source("resources/views/inline.blade.php", &css, &config).is_empty());
    }

    #[test]
    fn blade_component_classes() {
        assert_eq!(
            super::blade_component_class("forms.search-input", false),
            "App\\View\\Components\\Forms\\SearchInput"
        );
        assert_eq!(
            super::blade_component_class("order-status-filter", true),
            "App\\Livewire\\OrderStatusFilter"
        );
    }
}
