//! The locales a Laravel application is written in: `config/app.php`'s
//! `locale`, `fallback_locale` and `default_locale` (BookStack's
//! `app/Config/app.php` layout too), the literal or `env()`'s default. Their
//! translation files are the application's own text (`lang/ja/` of a
//! Japanese application), not translations into another language.

use std::path::Path;
use std::sync::LazyLock;

use regex::Regex;

/// Where applications keep `app.php`: Laravel's layout, BookStack's.
const APP_CONFIGS: &[&str] = &["config/app.php", "app/Config/app.php"];

static LOCALE_KEY: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r#"['"](?:locale|fallback_locale|default_locale)['"]\s*=>\s*(?:env\(\s*['"]\w+['"]\s*,\s*)?['"]([A-Za-z]{2,3}(?:[_-][A-Za-z0-9]{2,8}){0,2})['"]"#,
    )
    .expect("locale pattern")
});

/// The locales `source` (an `app.php`) names, lowercase, in order, without
/// repeats.
pub fn locales_in(source: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for c in LOCALE_KEY.captures_iter(source) {
        let l = c[1].to_ascii_lowercase();
        if !out.contains(&l) {
            out.push(l);
        }
    }
    out
}

/// The locales of the application at `root`, those of each `app.php` found
/// in turn (empty when there is none in a known place).
pub fn app_locales(root: &Path) -> Vec<String> {
    APP_CONFIGS
        .iter()
        .filter_map(|p| std::fs::read_to_string(root.join(p)).ok())
        .flat_map(|s| locales_in(&s))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_applications_locales_are_read_from_app_php() {
        // laravel/laravel's skeleton.
        let skeleton = "    'locale' => env('APP_LOCALE', 'en'),\n    'fallback_locale' => env('APP_FALLBACK_LOCALE', 'en'),\n    'faker_locale' => env('APP_FAKER_LOCALE', 'en_US'),\n";
        assert_eq!(locales_in(skeleton), ["en"]);
        // A Japanese application, literal values.
        let ja = "'locale' => 'ja',\n'fallback_locale' => 'en',\n'faker_locale' => 'ja_JP',";
        assert_eq!(locales_in(ja), ["ja", "en"]);
        // BookStack's app/Config/app.php.
        let bookstack =
            "'locale' => env('APP_LANG', 'en'),\n'default_locale' => env('APP_LANG', 'pt_BR'),\n";
        assert_eq!(locales_in(bookstack), ["en", "pt_br"]);
        assert!(locales_in("'timezone' => 'UTC',").is_empty());
    }
}
