//! PHP facts from the tree-sitter PHP AST: `use` imports (aliases and group
//! uses resolved), constructor-injected dependencies (promoted properties
//! too), Eloquent models and relations, `$translatable`, Filament resources
//! / schema classes / relation managers / pages and their `X::make('…')`
//! components, and Laravel migrations (`Schema::create/table`) as
//! `table_schema` chunks.

use std::collections::HashMap;

use serde_json::{Map, Value, json};
use tree_sitter::Node;

use super::{descendants, named_children, parse};
use crate::chunk::Chunk;
use crate::lang::Lang;
use crate::search::symbols::text;

/// Eloquent relation methods (Laravel 8–12 `HasRelationships`).
const RELATIONS: &[&str] = &[
    "hasOne",
    "hasMany",
    "belongsTo",
    "belongsToMany",
    "hasOneThrough",
    "hasManyThrough",
    "morphOne",
    "morphMany",
    "morphTo",
    "morphToMany",
    "morphedByMany",
];

/// Filament resource methods that get a chunk kind of their own.
const FILAMENT_METHODS: &[(&str, &str)] = &[
    ("form", "filament_form"),
    ("table", "filament_table"),
    ("infolist", "filament_infolist"),
    ("getRelations", "filament_relations"),
    ("getPages", "filament_pages"),
];

/// Blueprint calls that define indexes rather than columns.
const INDEX_METHODS: &[&str] = &["index", "unique", "primary", "fullText", "spatialIndex"];

/// Blueprint shorthands that add columns with fixed names.
const FIXED_COLUMNS: &[(&str, &[&str])] = &[
    ("id", &["id"]),
    ("timestamps", &["created_at", "updated_at"]),
    ("timestampsTz", &["created_at", "updated_at"]),
    ("softDeletes", &["deleted_at"]),
    ("softDeletesTz", &["deleted_at"]),
    ("rememberToken", &["remember_token"]),
];

/// Names in scope in one file: namespace and `use` imports.
struct Names {
    namespace: Option<String>,
    /// Alias (last segment or `as` name) → fully qualified name.
    imports: HashMap<String, String>,
}

impl Names {
    /// Resolves a class name as PHP does: leading `\` is absolute, a first
    /// segment matching an import is replaced by it, anything else is
    /// relative to the namespace. `self`/`static` and built-in types give
    /// `None`.
    fn resolve(&self, name: &str) -> Option<String> {
        let name = name.trim();
        if name.is_empty()
            || matches!(
                name.to_ascii_lowercase().as_str(),
                "self"
                    | "static"
                    | "parent"
                    | "array"
                    | "string"
                    | "int"
                    | "float"
                    | "bool"
                    | "mixed"
                    | "callable"
                    | "iterable"
                    | "object"
                    | "void"
                    | "null"
                    | "false"
                    | "true"
            )
        {
            return None;
        }
        if let Some(abs) = name.strip_prefix('\\') {
            return Some(abs.to_string());
        }
        let (first, rest) = match name.split_once('\\') {
            Some((f, r)) => (f, Some(r)),
            None => (name, None),
        };
        if let Some(full) = self.imports.get(first) {
            return Some(match rest {
                Some(r) => format!("{full}\\{r}"),
                None => full.clone(),
            });
        }
        Some(match &self.namespace {
            Some(ns) => format!("{ns}\\{name}"),
            None => name.to_string(),
        })
    }
}

/// The value of a string literal node (`'x'` / `"x"`), without quotes.
fn string_value(n: Node, src: &str) -> Option<String> {
    match n.kind() {
        "string" | "encapsed_string" => Some(
            text(n, src)
                .trim_matches(|c| c == '\'' || c == '"')
                .to_string(),
        ),
        "argument" => n.named_child(0).and_then(|c| string_value(c, src)),
        _ => None,
    }
}

/// `Foo::class` → `Foo`.
fn class_constant(n: Node, src: &str) -> Option<String> {
    let n = if n.kind() == "argument" {
        n.named_child(0)?
    } else {
        n
    };
    if n.kind() != "class_constant_access_expression" {
        return None;
    }
    let parts = named_children(n);
    (parts.len() == 2 && text(parts[1], src) == "class").then(|| text(parts[0], src).to_string())
}

fn arguments(call: Node) -> Vec<Node> {
    call.child_by_field_name("arguments")
        .map(named_children)
        .unwrap_or_default()
}

/// Strings of an array literal (`['a', 'b']`), or of a single string.
fn strings(n: Node, src: &str) -> Vec<String> {
    let n = if n.kind() == "argument" {
        match n.named_child(0) {
            Some(c) => c,
            None => return Vec::new(),
        }
    } else {
        n
    };
    if let Some(s) = string_value(n, src) {
        return vec![s];
    }
    if n.kind() != "array_creation_expression" {
        return Vec::new();
    }
    named_children(n)
        .into_iter()
        .filter_map(|e| {
            // `'a'` or `'key' => 'value'`: the last child is the value.
            let v = named_children(e).pop()?;
            string_value(v, src)
        })
        .collect()
}

fn collect_names(root: Node, src: &str) -> Names {
    let mut names = Names {
        namespace: None,
        imports: HashMap::new(),
    };
    for n in named_children(root) {
        match n.kind() {
            "namespace_definition" if names.namespace.is_none() => {
                names.namespace = n
                    .child_by_field_name("name")
                    .map(|x| text(x, src).to_string());
            }
            "namespace_use_declaration" => {
                let kids = named_children(n);
                let prefix = kids
                    .iter()
                    .find(|k| k.kind() == "namespace_name")
                    .map(|k| text(*k, src).trim_start_matches('\\').to_string());
                let clauses: Vec<Node> = match n.child_by_field_name("body") {
                    Some(group) => named_children(group),
                    None => kids,
                };
                for c in clauses
                    .into_iter()
                    .filter(|c| c.kind() == "namespace_use_clause")
                {
                    let Some(target) = named_children(c)
                        .into_iter()
                        .find(|k| matches!(k.kind(), "qualified_name" | "name"))
                    else {
                        continue;
                    };
                    let path = text(target, src).trim_start_matches('\\');
                    let full = match &prefix {
                        Some(p) => format!("{p}\\{path}"),
                        None => path.to_string(),
                    };
                    let alias = c
                        .child_by_field_name("alias")
                        .map(|a| text(a, src).to_string())
                        .unwrap_or_else(|| full.rsplit('\\').next().unwrap_or(&full).to_string());
                    names.imports.insert(alias, full);
                }
            }
            _ => {}
        }
    }
    names
}

/// What one class declares, by the AST.
#[derive(Default)]
struct ClassFacts {
    fqcn: String,
    extends: Option<String>,
    traits: Vec<String>,
    injected: Vec<String>,
    /// Property name → its default value node text facts.
    translatable: Vec<String>,
    fillable: Vec<String>,
    table: Option<String>,
    model: Option<String>,
    navigation: Map<String, Value>,
    relations: Vec<Value>,
    methods: Vec<String>,
}

/// Adds PHP metadata to the chunks of one file and appends `table_schema`
/// chunks for its migrations. Chunks are matched to classes and methods by
/// FQCN (`Ns\Class`, `Ns\Class::method`), as `search::symbols` computes it.
pub fn enrich(file: &str, source: &str, chunks: &mut Vec<Chunk>) {
    let Some(tree) = parse(Lang::Php, source) else {
        return;
    };
    let root = tree.root_node();
    let names = collect_names(root, source);
    let filament_file = names.imports.values().any(|f| f.starts_with("Filament\\"));
    let all = descendants(root);
    for class in all.iter().filter(|n| n.kind() == "class_declaration") {
        let facts = class_facts(*class, source, &names);
        apply_class(&facts, *class, source, &names, filament_file, chunks);
    }
    let migrations: Vec<Chunk> = all
        .iter()
        .filter(|n| n.kind() == "scoped_call_expression")
        .filter_map(|n| table_schema(*n, source, file))
        .collect();
    chunks.extend(migrations);
}

fn class_facts(class: Node, src: &str, names: &Names) -> ClassFacts {
    let short = class
        .child_by_field_name("name")
        .map_or("", |n| text(n, src));
    let mut f = ClassFacts {
        fqcn: names.resolve(short).unwrap_or_default(),
        ..ClassFacts::default()
    };
    for k in named_children(class) {
        if k.kind() == "base_clause" {
            f.extends = named_children(k)
                .first()
                .and_then(|b| names.resolve(text(*b, src)));
        }
    }
    let Some(body) = class.child_by_field_name("body") else {
        return f;
    };
    for member in named_children(body) {
        match member.kind() {
            "use_declaration" => {
                for t in named_children(member) {
                    if matches!(t.kind(), "name" | "qualified_name")
                        && let Some(full) = names.resolve(text(t, src))
                    {
                        f.traits.push(full);
                    }
                }
            }
            "property_declaration" => {
                for el in named_children(member)
                    .into_iter()
                    .filter(|e| e.kind() == "property_element")
                {
                    let prop = el
                        .child_by_field_name("name")
                        .map_or("", |n| text(n, src).trim_start_matches('$'));
                    let Some(value) = el.child_by_field_name("default_value") else {
                        continue;
                    };
                    match prop {
                        "translatable" => f.translatable = strings(value, src),
                        "fillable" => f.fillable = strings(value, src),
                        "table" => f.table = string_value(value, src),
                        "model" => {
                            f.model = class_constant(value, src).and_then(|c| names.resolve(&c));
                        }
                        "navigationIcon"
                        | "navigationGroup"
                        | "navigationLabel"
                        | "slug"
                        | "recordTitleAttribute" => {
                            if let Some(v) = string_value(value, src) {
                                f.navigation.insert(snake(prop), Value::String(v));
                            }
                        }
                        "cluster" => {
                            if let Some(c) =
                                class_constant(value, src).and_then(|c| names.resolve(&c))
                            {
                                f.navigation.insert("cluster".into(), Value::String(c));
                            }
                        }
                        _ => {}
                    }
                }
            }
            "method_declaration" => {
                let name = member
                    .child_by_field_name("name")
                    .map_or("", |n| text(n, src))
                    .to_string();
                if name == "__construct" {
                    f.injected = injected(member, src, names);
                }
                if let Some(rel) = relation(member, src, names) {
                    f.relations.push(rel);
                }
                f.methods.push(name);
            }
            _ => {}
        }
    }
    f
}

/// Constructor parameters with a class type (promoted properties too), as
/// FQCNs.
fn injected(method: Node, src: &str, names: &Names) -> Vec<String> {
    let Some(params) = method.child_by_field_name("parameters") else {
        return Vec::new();
    };
    named_children(params)
        .into_iter()
        .filter(|p| {
            matches!(
                p.kind(),
                "simple_parameter" | "property_promotion_parameter"
            )
        })
        .filter_map(|p| p.child_by_field_name("type"))
        .filter_map(|t| {
            // `?Foo` and `Foo|Bar`: every named type inside.
            let named: Vec<Node> = descendants(t)
                .into_iter()
                .filter(|n| n.kind() == "named_type")
                .collect();
            named.first().and_then(|n| names.resolve(text(*n, src)))
        })
        .collect()
}

/// `return $this->hasMany(Order::class, …)` in a method body → `{name,
/// type, related}`.
fn relation(method: Node, src: &str, names: &Names) -> Option<Value> {
    let body = method.child_by_field_name("body")?;
    let name = text(method.child_by_field_name("name")?, src);
    descendants(body).into_iter().find_map(|n| {
        if n.kind() != "member_call_expression" {
            return None;
        }
        let object = n.child_by_field_name("object")?;
        let call = text(n.child_by_field_name("name")?, src);
        if text(object, src) != "$this" || !RELATIONS.contains(&call) {
            return None;
        }
        let related = arguments(n)
            .first()
            .and_then(|a| class_constant(*a, src))
            .and_then(|c| names.resolve(&c));
        Some(json!({"name": name, "type": call, "related": related}))
    })
}

/// `navigationIcon` → `navigation_icon`.
fn snake(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if c.is_uppercase() {
            out.push('_');
        }
        out.extend(c.to_lowercase());
    }
    out
}

/// The Filament role of a class, by its parent class or (v4 schema
/// classes) its name and namespace.
fn filament_role(f: &ClassFacts, filament_file: bool) -> Option<&'static str> {
    let parent = f.extends.as_deref().unwrap_or("");
    let short = f.fqcn.rsplit('\\').next().unwrap_or("");
    if parent.starts_with("Filament\\") {
        let base = parent.rsplit('\\').next().unwrap_or("");
        return Some(match base {
            "Resource" => "resource",
            "RelationManager" => "relation_manager",
            "Cluster" => "cluster",
            b if b.ends_with("Widget") || b == "Widget" => "widget",
            _ => "page",
        });
    }
    if filament_file && f.methods.iter().any(|m| m == "configure") {
        for (suffix, role) in [
            ("Form", "form"),
            ("Table", "table"),
            ("Infolist", "infolist"),
        ] {
            if short.ends_with(suffix) {
                return Some(role);
            }
        }
    }
    None
}

/// Filament v4 puts a resource's schema, table and page classes beside it:
/// `…\Products\Schemas\ProductForm`, `…\Products\Tables\ProductsTable`,
/// `…\Products\Pages\EditProduct` belong to `…\Products\ProductResource`
/// (the directory name singularised by dropping a trailing `s`).
fn owning_resource(fqcn: &str, role: &str) -> Option<String> {
    if matches!(role, "resource" | "cluster" | "widget") {
        return None;
    }
    let mut parts: Vec<&str> = fqcn.split('\\').collect();
    parts.pop()?;
    let sub = parts.pop()?;
    if !matches!(sub, "Schemas" | "Tables" | "Pages" | "RelationManagers") {
        return None;
    }
    let dir = *parts.last()?;
    let singular = dir.strip_suffix('s').unwrap_or(dir);
    Some(format!("{}\\{singular}Resource", parts.join("\\")))
}

fn is_model(f: &ClassFacts) -> bool {
    matches!(
        f.extends.as_deref(),
        Some(
            "Illuminate\\Database\\Eloquent\\Model"
                | "Illuminate\\Foundation\\Auth\\User"
                | "Illuminate\\Database\\Eloquent\\Relations\\Pivot"
        )
    ) || !f.relations.is_empty()
}

/// `Product` → `products`, `Category` → `categories` (Laravel's default
/// table name for simple English nouns; `$table` wins when set).
fn plural_snake(class: &str) -> String {
    let s = snake(class).trim_start_matches('_').to_string();
    if let Some(stem) = s.strip_suffix('y')
        && !stem.ends_with(['a', 'e', 'i', 'o', 'u'])
    {
        return format!("{stem}ies");
    }
    if s.ends_with('s') || s.ends_with("sh") || s.ends_with("ch") || s.ends_with('x') {
        return format!("{s}es");
    }
    format!("{s}s")
}

fn apply_class(
    f: &ClassFacts,
    class: Node,
    src: &str,
    names: &Names,
    filament_file: bool,
    chunks: &mut [Chunk],
) {
    let mut class_meta = Map::new();
    let mut related: Vec<String> = Vec::new();
    if !names.imports.is_empty() {
        let mut imports: Vec<&String> = names.imports.values().collect();
        imports.sort();
        class_meta.insert("imports".into(), json!(imports));
    }
    if let Some(e) = &f.extends {
        class_meta.insert("extends".into(), json!(e));
        related.push(e.clone());
    }
    if !f.injected.is_empty() {
        class_meta.insert("injected_dependencies".into(), json!(f.injected));
        related.extend(f.injected.iter().cloned());
    }
    let translatable = !f.translatable.is_empty()
        || f.traits
            .iter()
            .any(|t| t.ends_with("\\HasTranslations") || t.ends_with("\\Translatable"));
    if translatable {
        // Models list their fields; a Filament resource with the
        // Translatable concern is translatable as a whole.
        class_meta.insert(
            "translatable".into(),
            if f.translatable.is_empty() {
                json!(true)
            } else {
                json!(f.translatable)
            },
        );
    }
    if is_model(f) {
        class_meta.insert("framework".into(), json!("laravel"));
        class_meta.insert("role".into(), json!("eloquent_model"));
        let short = f.fqcn.rsplit('\\').next().unwrap_or("");
        let table = f.table.clone().unwrap_or_else(|| plural_snake(short));
        class_meta.insert("table".into(), json!(table));
        related.push(format!("table:{table}"));
        if !f.fillable.is_empty() {
            class_meta.insert("fillable".into(), json!(f.fillable));
        }
        if !f.relations.is_empty() {
            class_meta.insert("relations".into(), json!(f.relations));
            related.extend(
                f.relations
                    .iter()
                    .filter_map(|r| r["related"].as_str().map(String::from)),
            );
        }
    }
    let role = filament_role(f, filament_file);
    let resource = role.and_then(|r| owning_resource(&f.fqcn, r));
    if let Some(role) = role {
        class_meta.insert("framework".into(), json!("filament"));
        class_meta.insert("role".into(), json!(role));
        if let Some(m) = &f.model {
            class_meta.insert("model".into(), json!(m));
            related.push(m.clone());
        }
        class_meta.extend(f.navigation.clone());
        if let Some(resource) = &resource {
            class_meta.insert("resource".into(), json!(resource));
            related.push(resource.clone());
        }
        if role == "resource" {
            for (method, key) in [
                ("form", "has_form"),
                ("table", "has_table"),
                ("infolist", "has_infolist"),
            ] {
                class_meta.insert(key.into(), json!(f.methods.iter().any(|m| m == method)));
            }
        }
    }
    related.sort();
    related.dedup();
    let class_fqcn = Some(f.fqcn.clone());
    for c in chunks.iter_mut().filter(|c| c.fqcn == class_fqcn) {
        if c.kind == "class" && role == Some("resource") {
            c.kind = "filament_resource".into();
        }
        c.meta.extend(class_meta.clone());
        c.related.clone_from(&related);
    }
    // Methods: relations, constructor DI, Filament components.
    let Some(body) = class.child_by_field_name("body") else {
        return;
    };
    for m in named_children(body)
        .into_iter()
        .filter(|m| m.kind() == "method_declaration")
    {
        let name = m.child_by_field_name("name").map_or("", |n| text(n, src));
        let fq = Some(format!("{}::{name}", f.fqcn));
        let mut meta = Map::new();
        let mut rel: Vec<String> = Vec::new();
        let mut kind: Option<String> = None;
        if name == "__construct" && !f.injected.is_empty() {
            meta.insert("injected_dependencies".into(), json!(f.injected));
            rel.extend(f.injected.iter().cloned());
        }
        if let Some(r) = f.relations.iter().find(|r| r["name"] == name) {
            meta.insert("relation".into(), r.clone());
            if let Some(model) = r["related"].as_str() {
                rel.push(model.to_string());
            }
            kind = Some("eloquent_relation".into());
        }
        if role.is_some() || filament_file {
            let parts = filament_components(m, src, names);
            let method_kind = match role {
                Some("form" | "table" | "infolist") if name == "configure" => {
                    Some(format!("filament_{}", role.unwrap_or_default()))
                }
                Some(_) => FILAMENT_METHODS
                    .iter()
                    .find(|(n, _)| *n == name)
                    .map(|(_, k)| (*k).to_string()),
                None => None,
            };
            let has_actions = parts.get("actions").is_some();
            if let Some(k) = method_kind {
                kind = Some(k);
            } else if has_actions {
                kind = Some("filament_action".into());
            }
            if kind.is_some() {
                if let Some(Value::Array(classes)) = parts.get("classes") {
                    rel.extend(classes.iter().filter_map(|c| c.as_str().map(String::from)));
                }
                meta.insert("framework".into(), json!("filament"));
                if let Some(model) = &f.model {
                    meta.insert("model".into(), json!(model));
                    rel.push(model.clone());
                }
                if let Some(r) = &resource {
                    meta.insert("resource".into(), json!(r));
                    rel.push(r.clone());
                }
                meta.extend(parts.into_iter().filter(|(k, _)| k != "classes"));
            }
        }
        if meta.is_empty() {
            continue;
        }
        rel.sort();
        rel.dedup();
        for c in chunks.iter_mut().filter(|c| c.fqcn == fq) {
            if let Some(k) = &kind {
                c.kind.clone_from(k);
            }
            c.meta.extend(meta.clone());
            c.related.clone_from(&rel);
        }
    }
}

/// `TextInput::make('name')`, `TextColumn::make('price')`,
/// `DeleteAction::make()` … in a method body, grouped by what the class
/// name says it is: `fields`, `columns`, `actions`, `filters`, `entries`,
/// `layout`; `relation_managers` (in `getRelations`) and `pages` from
/// `X::class` / `X::route(…)`; `classes` (FQCNs of everything referenced, for
/// related_symbols).
fn filament_components(method: Node, src: &str, names: &Names) -> Map<String, Value> {
    let mut groups: Vec<(&str, Vec<String>)> = Vec::new();
    let mut push =
        |group: &'static str, item: String| match groups.iter_mut().find(|(g, _)| *g == group) {
            Some((_, v)) => {
                if !v.contains(&item) {
                    v.push(item);
                }
            }
            None => groups.push((group, vec![item])),
        };
    let Some(body) = method.child_by_field_name("body") else {
        return Map::new();
    };
    // `X::class` names a relation manager only in getRelations(); elsewhere
    // (`->hiddenOn(ProductsRelationManager::class)`) it is a condition.
    let in_relations = method
        .child_by_field_name("name")
        .is_some_and(|n| text(n, src) == "getRelations");
    let mut classes = Vec::new();
    for n in descendants(body) {
        match n.kind() {
            "scoped_call_expression" => {
                let (Some(scope), Some(call)) = (
                    n.child_by_field_name("scope"),
                    n.child_by_field_name("name"),
                ) else {
                    continue;
                };
                let class = text(scope, src);
                let short = class.rsplit('\\').next().unwrap_or(class);
                let call = text(call, src);
                let arg = arguments(n).first().and_then(|a| string_value(*a, src));
                if call == "configure" {
                    // v4: `ProductForm::configure($schema)` delegates to a
                    // schema class.
                    push("configured_by", short.to_string());
                    classes.extend(names.resolve(class));
                    continue;
                }
                if call == "route" {
                    push("pages", short.to_string());
                    classes.extend(names.resolve(class));
                    continue;
                }
                if call != "make" {
                    continue;
                }
                classes.extend(names.resolve(class));
                let group = if short.ends_with("Column") {
                    "columns"
                } else if short.ends_with("Action") {
                    "actions"
                } else if short.ends_with("Filter") {
                    "filters"
                } else if short.ends_with("Entry") {
                    "entries"
                } else if matches!(
                    short,
                    "Section"
                        | "Grid"
                        | "Tabs"
                        | "Tab"
                        | "Fieldset"
                        | "Wizard"
                        | "Step"
                        | "Group"
                        | "Split"
                        | "Card"
                        | "Flex"
                ) {
                    "layout"
                } else {
                    "fields"
                };
                let item = match (group, arg) {
                    ("actions", Some(a)) => a,
                    ("actions", None) => short.trim_end_matches("Action").to_ascii_lowercase(),
                    (_, Some(a)) => a,
                    (_, None) => continue,
                };
                push(group, item);
            }
            "class_constant_access_expression" if in_relations => {
                if let Some(c) = class_constant(n, src)
                    && c.ends_with("RelationManager")
                {
                    push(
                        "relation_managers",
                        c.rsplit('\\').next().unwrap_or(&c).to_string(),
                    );
                    classes.extend(names.resolve(&c));
                }
            }
            _ => {}
        }
    }
    let mut out: Map<String, Value> = groups
        .into_iter()
        .map(|(g, v)| (g.to_string(), json!(v)))
        .collect();
    classes.sort();
    classes.dedup();
    if !classes.is_empty() {
        out.insert("classes".into(), json!(classes));
    }
    out
}

/// `Schema::create('orders', function (Blueprint $table) { … })` (or
/// `Schema::table`) → one `table_schema` chunk with its columns (name,
/// type, modifiers), indexes and foreign keys.
fn table_schema(call: Node, src: &str, file: &str) -> Option<Chunk> {
    let scope = text(call.child_by_field_name("scope")?, src);
    let op = text(call.child_by_field_name("name")?, src);
    if scope.rsplit('\\').next() != Some("Schema") || !matches!(op, "create" | "table") {
        return None;
    }
    let args = arguments(call);
    let table = string_value(*args.first()?, src)?;
    let closure = args.get(1)?.named_child(0)?;
    let body = closure.child_by_field_name("body")?;
    let mut columns = Vec::new();
    let mut indexes = Vec::new();
    let mut foreign = Vec::new();
    for stmt in named_children(body) {
        let Some(expr) = stmt.named_child(0) else {
            continue;
        };
        // Unwind `$table->type('name')->mod()->mod()` to its base call.
        let mut chain = Vec::new();
        let mut cur = expr;
        while cur.kind() == "member_call_expression" {
            chain.push(cur);
            match cur.child_by_field_name("object") {
                Some(o) => cur = o,
                None => break,
            }
        }
        let Some(&base) = chain.last() else { continue };
        if !text(cur, src).starts_with('$') {
            continue;
        }
        let method = text(base.child_by_field_name("name")?, src).to_string();
        let base_args = arguments(base);
        let first = base_args
            .first()
            .map(|a| strings(*a, src))
            .unwrap_or_default();
        let modifiers: Vec<(String, Vec<Node>)> = chain[..chain.len() - 1]
            .iter()
            .rev()
            .filter_map(|m| {
                Some((
                    text(m.child_by_field_name("name")?, src).to_string(),
                    arguments(*m),
                ))
            })
            .collect();
        let modifier_names: Vec<String> = modifiers
            .iter()
            .map(|(n, a)| match a.first() {
                Some(arg) => format!("{n}({})", text(*arg, src)),
                None => n.clone(),
            })
            .collect();
        if INDEX_METHODS.contains(&method.as_str()) {
            indexes.push(json!({"type": method, "columns": first}));
            continue;
        }
        if method == "foreign" {
            let references = modifiers
                .iter()
                .find(|(n, _)| n == "references")
                .and_then(|(_, a)| a.first().and_then(|x| string_value(*x, src)));
            let on = modifiers
                .iter()
                .find(|(n, _)| n == "on")
                .and_then(|(_, a)| a.first().and_then(|x| string_value(*x, src)));
            foreign.push(json!({"column": first.first(), "references": references, "on": on}));
            continue;
        }
        if let Some((_, fixed)) = FIXED_COLUMNS.iter().find(|(m, _)| *m == method) {
            for c in *fixed {
                columns.push(json!({"name": c, "type": method, "modifiers": modifier_names}));
            }
            continue;
        }
        if method.ends_with("morphs") || method.ends_with("Morphs") {
            if let Some(n) = first.first() {
                for suffix in ["_id", "_type"] {
                    columns.push(json!({"name": format!("{n}{suffix}"), "type": method, "modifiers": modifier_names}));
                }
            }
            continue;
        }
        if matches!(
            method.as_str(),
            "dropColumn" | "renameColumn" | "dropForeign" | "dropIndex"
        ) {
            indexes.push(json!({"type": method, "columns": first}));
            continue;
        }
        let name = match (method.as_str(), first.first()) {
            ("foreignIdFor", _) => base_args
                .first()
                .and_then(|a| class_constant(*a, src))
                .map(|c| format!("{}_id", snake(&c).trim_start_matches('_'))),
            (_, Some(n)) => Some(n.clone()),
            _ => None,
        };
        let Some(name) = name else { continue };
        if let Some((_, a)) = modifiers.iter().find(|(n, _)| n == "constrained") {
            let on = a
                .first()
                .and_then(|x| string_value(*x, src))
                .unwrap_or_else(|| plural_snake(name.trim_end_matches("_id")));
            foreign.push(json!({"column": name, "references": "id", "on": on}));
        }
        columns.push(json!({"name": name, "type": method, "modifiers": modifier_names}));
    }
    let related: Vec<String> = std::iter::once(format!("table:{table}"))
        .chain(
            foreign
                .iter()
                .filter_map(|f| f["on"].as_str().map(|t| format!("table:{t}"))),
        )
        .collect();
    let stmt = call
        .parent()
        .filter(|p| p.kind() == "expression_statement")
        .unwrap_or(call);
    let (start, end) = (stmt.start_position().row + 1, stmt.end_position().row + 1);
    let content = src
        .lines()
        .skip(start - 1)
        .take(end + 1 - start)
        .collect::<Vec<_>>()
        .join("\n");
    let mut meta = Map::new();
    meta.insert("framework".into(), json!("laravel"));
    meta.insert("table".into(), json!(table));
    meta.insert("operation".into(), json!(op));
    meta.insert("columns".into(), json!(columns));
    if !indexes.is_empty() {
        meta.insert("indexes".into(), json!(indexes));
    }
    if !foreign.is_empty() {
        meta.insert("foreign_keys".into(), json!(foreign));
    }
    Some(Chunk {
        file: file.to_string(),
        language: "php".into(),
        kind: "table_schema".into(),
        name: table.clone(),
        scope: None,
        fqcn: None,
        signature: format!("Schema::{op}('{table}')"),
        doc: Some(format!(
            "Database table {table} ({}) migration",
            if op == "create" { "created" } else { "altered" }
        )),
        start_line: start,
        end_line: end,
        content,
        meta,
        related,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plural_and_snake() {
        assert_eq!(plural_snake("Product"), "products");
        assert_eq!(plural_snake("Category"), "categories");
        assert_eq!(plural_snake("OrderItem"), "order_items");
        assert_eq!(plural_snake("Address"), "addresses");
        assert_eq!(snake("navigationIcon"), "navigation_icon");
    }
}
