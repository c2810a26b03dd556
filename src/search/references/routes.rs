//! How PHP route files name a controller: string actions
//! (`'Common\Items@enable'`, `Route::resource('items', 'Common\Items')`)
//! and the `->only(…)` / `->except(…)` lines that continue a route.

use regex::Regex;

use crate::search::text::TextMatch;

/// `m`, a line of the file `text`, with the `->only(…)` / `->except(…)`
/// lines that continue it appended to its content.
pub(super) fn with_continuation(text: &str, mut m: TextMatch) -> TextMatch {
    let after = text.lines().skip(m.line as usize);
    for next in after.take_while(|l| l.trim_start().starts_with("->")) {
        m.content.push(' ');
        m.content.push_str(next.trim());
    }
    m
}

/// The controller a string route action `'Ns\Class@name'` names, as written
/// (`Common\Items` for `'Common\Items@enable'`), when its class is `class`.
pub(super) fn route_string(line: &str, class: &str, name: &str) -> Option<String> {
    let re = Regex::new(&format!(
        r#"['"]\\?((?:[\w\\]*\\)?{})@{}['"]"#,
        regex::escape(class),
        regex::escape(name)
    ))
    .ok()?;
    re.captures(line).map(|c| c[1].to_string())
}

/// The controller a string route names (`'Common\Items'` in
/// `Route::resource('items', 'Common\Items')`), as written.
pub(super) fn written_controller(line: &str, class: &str) -> Option<String> {
    let re = Regex::new(&format!(
        r#"['"]\\?((?:[\w\\]*\\)?{})['"]"#,
        regex::escape(class)
    ))
    .ok()?;
    re.captures(line).map(|c| c[1].to_string())
}
