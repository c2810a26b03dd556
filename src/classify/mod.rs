//! What a file is for: source, test, docs, example, config, generated,
//! vendored or lock. One classifier serves two decisions: which files the
//! semantic index leaves out by default (lock files, generated and vendored
//! files stay text-searchable but are not embedded), and how `query` ranks
//! files (source first unless the request asks for tests, docs or config).
//!
//! The rules follow GitHub Linguist's `vendor.yml` / `generated.rb` and
//! `documentation.yml` conventions, narrowed to the ecosystems we chunk
//! (PHP/Laravel, JS/TS, Python, Go, Java, Rust, Ruby): path segments and file
//! names first, then content markers (a "generated" header comment, minified
//! lines) for what names cannot tell. Every result carries the rule that
//! decided it, so `status` and `query` can say why.

use serde::{Deserialize, Serialize};

pub mod licence;

/// Version of the classification rules: an index classified under another
/// version reads every file again (vectors are reused by content hash).
/// 2: locale variants (`lang/de_informal/`) are `l10n`; another project's
/// licence marks its directory `vendored` ([`licence`]). 3: static
/// analysers' baselines (`phpstan-baseline.neon`) are `generated`.
pub const RULES_VERSION: u32 = 3;

/// The class of a file.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum FileClass {
    /// Code the project is made of.
    Source,
    /// Tests, fixtures, test data.
    Test,
    /// Documentation: Markdown, reStructuredText, `docs/`, README, CHANGELOG.
    Docs,
    /// Examples and samples.
    Example,
    /// Build, CI, tool and application configuration.
    Config,
    /// Produced by a tool: minified bundles, source maps, build output,
    /// files with a "generated" header, framework caches.
    Generated,
    /// Third-party code copied into the repository (`vendor/`,
    /// `node_modules/`, published vendor assets).
    Vendored,
    /// Dependency lock files.
    Lock,
    /// Translations into a locale other than the source one (`lang/fr/`,
    /// `resources/lang/de.json`, `locales/ja/`): text-searchable, not
    /// embedded, ranked like tests unless the request asks for them.
    L10n,
}

impl FileClass {
    /// Every class, in ranking-preference order.
    pub const ALL: [FileClass; 9] = [
        FileClass::Source,
        FileClass::Config,
        FileClass::Test,
        FileClass::Docs,
        FileClass::Example,
        FileClass::Generated,
        FileClass::Vendored,
        FileClass::Lock,
        FileClass::L10n,
    ];

    /// The lowercase name used in configs, filters and replies.
    pub fn name(self) -> &'static str {
        match self {
            FileClass::Source => "source",
            FileClass::Test => "test",
            FileClass::Docs => "docs",
            FileClass::Example => "example",
            FileClass::Config => "config",
            FileClass::Generated => "generated",
            FileClass::Vendored => "vendored",
            FileClass::Lock => "lock",
            FileClass::L10n => "l10n",
        }
    }

    /// Parses a class name (as [`FileClass::name`] prints it).
    pub fn parse(name: &str) -> Option<FileClass> {
        FileClass::ALL
            .into_iter()
            .find(|c| c.name().eq_ignore_ascii_case(name.trim()))
    }
}

/// A class with the rule that decided it (`"path segment tests/"`,
/// `"minified: average line 412 chars"`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Classification {
    pub class: FileClass,
    pub reason: String,
}

fn is(class: FileClass, reason: impl Into<String>) -> Classification {
    Classification {
        class,
        reason: reason.into(),
    }
}

/// Lock files of every ecosystem we know, by exact file name.
const LOCK_FILES: &[&str] = &[
    "composer.lock",
    "package-lock.json",
    "npm-shrinkwrap.json",
    "yarn.lock",
    "pnpm-lock.yaml",
    "bun.lock",
    "bun.lockb",
    "deno.lock",
    "Cargo.lock",
    "poetry.lock",
    "uv.lock",
    "pdm.lock",
    "Pipfile.lock",
    "conda-lock.yml",
    "Gemfile.lock",
    "go.sum",
    "go.work.sum",
    "mix.lock",
    "pubspec.lock",
    "Podfile.lock",
    "Package.resolved",
    "packages.lock.json",
    "gradle.lockfile",
    "flake.lock",
];

/// Directory names whose contents are third-party code.
const VENDOR_DIRS: &[&str] = &[
    "vendor",
    "node_modules",
    "bower_components",
    "jspm_packages",
    "third_party",
    "third-party",
    "thirdparty",
    "3rdparty",
    "site-packages",
    "Pods",
    "Carthage",
];

/// Path prefixes (repo-relative) where frameworks publish built or vendored
/// assets: Laravel's `vendor:publish` targets and Vite/Mix output, Filament's
/// published assets, Symfony's bundles.
const VENDOR_PREFIXES: &[&str] = &[
    "public/vendor/",
    "public/build/",
    "public/hot",
    "public/js/filament/",
    "public/css/filament/",
    "public/fonts/filament/",
    "public/bundles/",
    "web/bundles/",
    // Libraries copied into the web root by hand (`public/libs/tinymce`).
    "public/libs/",
    "public/lib/",
    "public/js/vendor/",
    "public/js/libs/",
    "public/assets/vendor/",
    "public/assets/libs/",
    "public/plugins/",
];

/// Directory names that hold translations, one locale per subdirectory or
/// file (`lang/fr/auth.php`, `lang/de.json`, `locales/ja/common.json`).
const L10N_DIRS: &[&str] = &["lang", "langs", "locale", "locales", "i18n", "translations"];

/// Locales whose translations are the source text (the rest are `l10n`).
/// As [`locale_key`]s.
pub const SOURCE_LOCALES: &[&str] = &["en", "en_us", "en_gb"];

/// `fr`, `pt_BR`, `zh-Hans`, `es-419`, `zh_Hant_TW`, `de_informal`: a locale
/// code (BCP 47's shape: a language of 2–3 lowercase letters, then at most
/// two subtags of 2–8 letters or digits — script, region, variant).
/// BookStackApp/BookStack ships `lang/de_informal/` beside `lang/de/`.
fn is_locale(s: &str) -> bool {
    let mut parts = s.split(['_', '-']);
    let lang = parts.next().unwrap_or("");
    let subtags: Vec<&str> = parts.collect();
    (2..=3).contains(&lang.len())
        && lang.chars().all(|c| c.is_ascii_lowercase())
        && subtags.len() <= 2
        && subtags
            .iter()
            .all(|r| (2..=8).contains(&r.len()) && r.chars().all(|c| c.is_ascii_alphanumeric()))
}

/// A locale code in one spelling for comparing: lowercase, `_` between
/// subtags (`pt-BR` and `pt_br` are `pt_br`).
pub fn locale_key(code: &str) -> String {
    code.to_ascii_lowercase().replace('-', "_")
}

/// The locale a translation path is for: the segment (or file stem) after
/// a translations directory, when it is a locale code.
pub fn translation_locale(rel: &str) -> Option<&str> {
    let parts: Vec<&str> = rel.split('/').collect();
    let at = parts.iter().position(|p| L10N_DIRS.contains(p))?;
    let next = *parts.get(at + 1)?;
    let code = if at + 2 == parts.len() {
        next.split('.').next().unwrap_or(next)
    } else {
        next
    };
    is_locale(code).then_some(code)
}

/// Directory names whose contents are produced by tools.
const GENERATED_DIRS: &[&str] = &["dist", "__snapshots__", "__generated__", "generated"];

/// Path prefixes of framework runtime caches (Laravel).
const GENERATED_PREFIXES: &[&str] = &["bootstrap/cache/", "storage/framework/", "storage/logs/"];

const TEST_DIRS: &[&str] = &[
    "tests",
    "test",
    "__tests__",
    "__mocks__",
    "spec",
    "specs",
    "fixtures",
    "__fixtures__",
    "testdata",
    "test-data",
    "e2e",
    "cypress",
];

const DOC_DIRS: &[&str] = &["docs", "doc", "documentation", "man"];

const EXAMPLE_DIRS: &[&str] = &["examples", "example", "samples", "sample", "demos"];

/// Documentation files by name without extension (README.md, LICENSE, …).
const DOC_STEMS: &[&str] = &[
    "readme",
    "changelog",
    "changes",
    "history",
    "news",
    "license",
    "licence",
    "copying",
    "authors",
    "contributors",
    "contributing",
    "upgrade",
    "upgrading",
    "security",
    "code_of_conduct",
    "release",
    "releasing",
];

const DOC_EXTENSIONS: &[&str] = &[
    "md", "mdx", "markdown", "rst", "adoc", "asciidoc", "txt", "rdoc",
];

const CONFIG_EXTENSIONS: &[&str] = &[
    "yml",
    "yaml",
    "toml",
    "ini",
    "cfg",
    "conf",
    "neon",
    "properties",
    "xml",
    "dist",
    "env",
    "json",
    "jsonc",
    "json5",
    "editorconfig",
];

const CONFIG_FILES: &[&str] = &[
    "Makefile",
    "Dockerfile",
    "Procfile",
    "Justfile",
    "justfile",
    "Vagrantfile",
    "Gemfile",
    "Rakefile",
    "artisan",
    "setup.py",
    "setup.cfg",
    "manage.py",
    "vite.config.js",
    "vite.config.ts",
    "webpack.mix.js",
    "webpack.config.js",
    "rollup.config.js",
    "postcss.config.js",
    "postcss.config.cjs",
    "eslint.config.js",
    "babel.config.js",
    "jest.config.js",
    "vitest.config.ts",
    "tailwind.config.js",
    "tailwind.config.ts",
    "tailwind.config.cjs",
    "tailwind.config.mjs",
    "rector.php",
    "pint.json",
    "phpunit.xml",
    ".php-cs-fixer.php",
    "noxfile.py",
    "tox.ini",
    // Tool and VCS dotfiles (a Laravel app keeps `storage/**/.gitignore`
    // placeholders that otherwise rank as source for short requests).
    ".gitignore",
    ".gitattributes",
    ".gitkeep",
    ".dockerignore",
    ".npmrc",
    ".nvmrc",
    ".prettierrc",
    ".prettierignore",
    ".eslintrc",
    ".eslintignore",
    ".styleci.yml",
];

/// Directory names of application configuration (Laravel's `config/`).
const CONFIG_DIRS: &[&str] = &["config", "configs", ".github", ".circleci"];

/// File-name suffixes of generated code and minified or mapped bundles.
const GENERATED_SUFFIXES: &[&str] = &[
    ".min.js",
    ".min.mjs",
    ".min.css",
    "-min.js",
    ".bundle.js",
    ".map",
    ".pb.go",
    "_pb2.py",
    "_pb2_grpc.py",
    ".pb.cc",
    ".pb.h",
    ".g.dart",
    ".freezed.dart",
    ".designer.cs",
    ".snap",
];

/// Names of tool-written helper files.
const GENERATED_FILES: &[&str] = &[
    "_ide_helper.php",
    "_ide_helper_models.php",
    ".phpstorm.meta.php",
    // Written by `phpstan analyse --generate-baseline` and `psalm
    // --set-baseline`: every known error's class and method names, which
    // matched the words of a validation ticket in an agent trial
    // (bench/README.md § Honest agent trial).
    "phpstan-baseline.neon",
    "phpstan-baseline.php",
    "psalm-baseline.xml",
];

/// Bytes of the head scanned for a "generated" marker.
const MARKER_HEAD_BYTES: usize = 1024;
/// A line longer than this many bytes in a JS/CSS/JSON/SVG file marks it
/// minified (Linguist's `minified_files?` uses an average over 110; whole
/// bundles on one line are the case that fills an index: filamentphp/demo's
/// `public/vendor/horizon/app.css` gave 2,277 chunks).
pub(crate) const MINIFIED_LINE_BYTES: usize = 2000;
/// Average line length (bytes) above which a JS/CSS file is minified
/// (Linguist: 110).
const MINIFIED_AVERAGE_BYTES: usize = 110;

/// Whether a repo-relative path is a test file ([`classify_path`]'s
/// [`FileClass::Test`]).
pub fn is_test_path(rel: &str) -> bool {
    classify_path(rel).class == FileClass::Test
}

/// Classifies a file by its repo-relative path (`/`-separated) alone.
pub fn classify_path(rel: &str) -> Classification {
    let name = rel.rsplit('/').next().unwrap_or(rel);
    let dirs: Vec<&str> = rel.split('/').collect();
    let dirs = &dirs[..dirs.len().saturating_sub(1)];
    let lower = name.to_ascii_lowercase();
    let ext = lower.rsplit_once('.').map_or("", |(_, e)| e);
    let stem = lower.split('.').next().unwrap_or("");

    if LOCK_FILES.contains(&name) || (ext == "lock" && !lower.starts_with('.')) {
        return is(FileClass::Lock, format!("lock file {name}"));
    }
    if let Some(d) = dirs.iter().find(|d| VENDOR_DIRS.contains(d)) {
        return is(FileClass::Vendored, format!("path segment {d}/"));
    }
    if let Some(p) = VENDOR_PREFIXES.iter().find(|p| rel.starts_with(*p)) {
        return is(FileClass::Vendored, format!("published assets under {p}"));
    }
    if let Some(s) = GENERATED_SUFFIXES.iter().find(|s| lower.ends_with(*s)) {
        return is(FileClass::Generated, format!("file name ends with {s}"));
    }
    if GENERATED_FILES.contains(&name) {
        return is(FileClass::Generated, format!("tool-written file {name}"));
    }
    if let Some(d) = dirs.iter().find(|d| GENERATED_DIRS.contains(d)) {
        return is(FileClass::Generated, format!("path segment {d}/"));
    }
    if let Some(p) = GENERATED_PREFIXES.iter().find(|p| rel.starts_with(*p)) {
        return is(FileClass::Generated, format!("framework cache under {p}"));
    }
    if ext == "svg" {
        return is(FileClass::Generated, "SVG image markup");
    }
    if let Some(d) = dirs.iter().find(|d| TEST_DIRS.contains(d)) {
        return is(FileClass::Test, format!("path segment {d}/"));
    }
    if let Some(loc) = translation_locale(rel)
        && !SOURCE_LOCALES.contains(&locale_key(loc).as_str())
    {
        return is(FileClass::L10n, format!("translation for locale {loc}"));
    }
    if is_test_file(name, &lower) {
        return is(FileClass::Test, format!("test file name {name}"));
    }
    if let Some(d) = dirs.iter().find(|d| EXAMPLE_DIRS.contains(d)) {
        return is(FileClass::Example, format!("path segment {d}/"));
    }
    if lower.ends_with(".example") || lower.contains(".example.") {
        return is(FileClass::Example, format!("example file {name}"));
    }
    if let Some(d) = dirs.iter().find(|d| DOC_DIRS.contains(d)) {
        return is(FileClass::Docs, format!("path segment {d}/"));
    }
    if ext == "txt" && (stem.starts_with("requirements") || stem == "constraints") {
        return is(FileClass::Config, format!("dependency list {name}"));
    }
    if DOC_EXTENSIONS.contains(&ext) || DOC_STEMS.contains(&stem) {
        return is(FileClass::Docs, format!("documentation file {name}"));
    }
    if CONFIG_FILES.contains(&name) || name.starts_with("docker-compose") {
        return is(FileClass::Config, format!("tool configuration {name}"));
    }
    if let Some(d) = dirs.iter().find(|d| CONFIG_DIRS.contains(d)) {
        return is(FileClass::Config, format!("path segment {d}/"));
    }
    if CONFIG_EXTENSIONS.contains(&ext) || (name.starts_with('.') && !name.contains('/')) {
        return is(FileClass::Config, format!("configuration format .{ext}"));
    }
    is(FileClass::Source, "code")
}

/// Test files by name in each ecosystem: `*_test.go`, `test_*.py`,
/// `*_test.py`, `conftest.py`, `*Test.php`, `*Test.java`, `*Tests.*`,
/// `*.test.ts`, `*.spec.js`, `*_spec.rb`, `*_test.rb`.
fn is_test_file(name: &str, lower: &str) -> bool {
    let stem = name.split('.').next().unwrap_or(name);
    lower.starts_with("test_") && lower.ends_with(".py")
        || lower == "conftest.py"
        || stem.ends_with("_test")
        || stem.ends_with("_spec")
        || (stem.ends_with("Test") || stem.ends_with("Tests")) && stem.len() > 5
        || lower.contains(".test.")
        || lower.contains(".spec.")
}

/// Classifies a file by path and, where the path says source or config, by
/// content: a "generated" marker in the first 1 KiB, or minified lines in
/// JS/CSS/JSON/SVG. `content` may be the whole file or its head.
pub fn classify(rel: &str, content: &[u8]) -> Classification {
    let by_path = classify_path(rel);
    if !matches!(by_path.class, FileClass::Source | FileClass::Config) {
        return by_path;
    }
    let head = String::from_utf8_lossy(&content[..content.len().min(MARKER_HEAD_BYTES)]);
    let head_lower = head.to_ascii_lowercase();
    // Explicit generator markers, as GitHub Linguist's generated.rb reads
    // them; a bare "do not edit" is not one (Laravel apps' own config
    // files say "Do not edit this file unless you're happy to maintain any
    // changes yourself").
    for marker in [
        "@generated",
        "code generated by",
        "this file is generated",
        "this file was generated",
        "generated by the protocol buffer compiler",
    ] {
        if head_lower.contains(marker) {
            return is(FileClass::Generated, format!("header says \"{marker}\""));
        }
    }
    if let Some(marker) = head_lower.lines().find_map(generated_self) {
        return is(FileClass::Generated, format!("header says \"{marker}\""));
    }
    // A webpack bundle (Laravel Mix writes `public/js/app.js`) opens with
    // its runtime, which names itself.
    if head_lower.contains("webpackbootstrap") || head_lower.contains("__webpack_require__") {
        return is(FileClass::Generated, "a webpack bundle");
    }
    if head_lower
        .lines()
        .any(|l| l.contains("code generated") && l.contains("do not edit"))
    {
        return is(
            FileClass::Generated,
            "header says \"Code generated … DO NOT EDIT\"",
        );
    }
    let lower = rel.to_ascii_lowercase();
    let minifiable = [".js", ".mjs", ".cjs", ".css", ".json", ".svg"]
        .iter()
        .any(|e| lower.ends_with(e));
    if minifiable && content.len() > MINIFIED_LINE_BYTES {
        let lines = content.split(|b| *b == b'\n').filter(|l| !l.is_empty());
        let (mut n, mut longest) = (0usize, 0usize);
        for l in lines {
            n += 1;
            longest = longest.max(l.len());
        }
        let average = content.len() / n.max(1);
        if longest > MINIFIED_LINE_BYTES || average > MINIFIED_AVERAGE_BYTES {
            return is(
                FileClass::Generated,
                format!("minified: longest line {longest} bytes, average {average}"),
            );
        }
    }
    by_path
}

/// The loose generator words of a header line ("auto-generated",
/// "autogenerated", "automatically generated") when the line says the file
/// itself is generated: it opens the comment, or the line names the file
/// ("this file", "file is"), its generator ("generated by/from/with") or
/// says "do not edit". Every Laravel application's `artisan` and
/// `public/index.php` say "Composer provides a convenient, automatically
/// generated class loader": that describes the loader, not the file (seen
/// on BookStackApp/BookStack, 2026-11-25).
fn generated_self(line: &str) -> Option<&'static str> {
    let marker = ["automatically generated", "auto-generated", "autogenerated"]
        .into_iter()
        .find(|m| line.contains(m))?;
    let text = line.trim_start_matches(|c: char| {
        c.is_whitespace() || matches!(c, '/' | '*' | '#' | '-' | '<' | '!' | '|' | ';' | '"')
    });
    let opens = text.starts_with(marker) || text.starts_with("this is");
    let names_file = [
        "this file",
        "file is",
        "file was",
        "generated by",
        "generated from",
        "generated with",
        "generated using",
        "do not edit",
        "don't edit",
        "do not modify",
    ]
    .iter()
    .any(|w| line.contains(w));
    (opens || names_file).then_some(marker)
}

/// Classes a request asks for by its words ("the test for…", 「テスト」,
/// "docs", "config"): those are not ranked below source for it.
pub fn requested_classes(query: &str) -> Vec<FileClass> {
    let lower = query.to_lowercase();
    let words: Vec<&str> = lower
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    let has = |ws: &[&str]| ws.iter().any(|w| words.contains(w));
    let mut out = Vec::new();
    if has(&[
        "test", "tests", "testing", "spec", "specs", "fixture", "fixtures", "phpunit", "pest",
        "pytest",
    ]) || lower.contains("テスト")
    {
        out.push(FileClass::Test);
    }
    if has(&[
        "translation",
        "translations",
        "translate",
        "locale",
        "locales",
        "localization",
        "localisation",
        "i18n",
        "l10n",
    ]) || lower.contains("翻訳")
        || lower.contains("ロケール")
        || lower.contains("多言語")
    {
        out.push(FileClass::L10n);
    }
    if has(&[
        "docs",
        "doc",
        "documentation",
        "readme",
        "changelog",
        "guide",
    ]) || lower.contains("ドキュメント")
        || lower.contains("説明書")
    {
        out.push(FileClass::Docs);
    }
    if has(&[
        "config",
        "configuration",
        "settings",
        "env",
        "yaml",
        "yml",
        "toml",
        "ci",
        "workflow",
    ]) || lower.contains("設定")
    {
        out.push(FileClass::Config);
    }
    if has(&["example", "examples", "sample", "samples"]) || lower.contains("サンプル") {
        out.push(FileClass::Example);
    }
    out
}

#[cfg(test)]
mod tests;
