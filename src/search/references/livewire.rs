//! Livewire components in references: the Blade views a component
//! renders, and the view lines that call or bind its members
//! (`wire:click="markAsRead(1)"`, `$wire.markAsRead()`), which are the
//! component's callers (docs/sessions.md § Requirements).

use std::sync::OnceLock;

use regex::Regex;

/// The Blade views of a Livewire component (`fq`, declared with
/// `parents`) whose file is `text`: the `view('…')` names it renders
/// (package views `pkg::…` left out) and, for a class under a `Livewire`
/// namespace, the view Livewire's convention gives it. Empty for a class
/// that is not a `Component`.
pub(super) fn views(text: &str, fq: &str, parents: &[String]) -> Vec<String> {
    static VIEW: OnceLock<Regex> = OnceLock::new();
    if !parents.iter().any(|p| p == "Component") {
        return Vec::new();
    }
    let re = VIEW
        .get_or_init(|| Regex::new(r#"view\(\s*['"]([\w.\-/]+)['"]"#).expect("a valid pattern"));
    let path = |name: &str| format!("resources/views/{}.blade.php", name.replace('.', "/"));
    let mut out: Vec<String> = re.captures_iter(text).map(|c| path(&c[1])).collect();
    if let Some((_, rest)) = fq.split_once("\\Livewire\\") {
        let name: Vec<String> = rest.split('\\').map(crate::util::kebab).collect();
        out.push(path(&format!("livewire.{}", name.join("."))));
    }
    out
}

/// Whether a Blade line calls `name` the Livewire way: an action or a
/// binding (`wire:click="markAsRead(1)"`, `wire:submit.prevent="save"`,
/// `wire:model.live="search"`), Alpine's `$wire.markAsRead(…)`, or
/// `$this->markAsRead(…)` in the view's PHP.
pub(super) fn calls(line: &str, name: &str) -> bool {
    let n = regex::escape(name);
    Regex::new(&format!(
        r#"wire:[\w.\-]+\s*=\s*["']\s*(?:\$parent\.)?{n}\b|\$wire\.{n}\b|\$wire\.(?:call|set)\(\s*['"]{n}['"]|\$this->{n}\b"#
    ))
    .is_ok_and(|re| re.is_match(line))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn livewire_views_and_calls() {
        let parents = vec!["Component".to_string()];
        let text = "return view('livewire.home.feed', ['x' => 1]); view('pkg::x');";
        assert_eq!(
            views(text, "App\\Livewire\\Home\\UserFeed", &parents),
            [
                "resources/views/livewire/home/feed.blade.php",
                "resources/views/livewire/home/user-feed.blade.php"
            ]
        );
        assert!(views(text, "App\\Livewire\\Feed", &[]).is_empty());
        for line in [
            r#"<button wire:click="markAsRead({{ $id }})">"#,
            r#"<form wire:submit.prevent='markAsRead'>"#,
            r#"<input wire:model.live="markAsRead">"#,
            r#"x-on:click="$wire.markAsRead()""#,
            r#"$wire.call('markAsRead', 1)"#,
            r#"{{ $this->markAsRead() }}"#,
        ] {
            assert!(calls(line, "markAsRead"), "{line}");
        }
        for line in [
            r#"<button wire:click="markAsReadAll">"#,
            r#"{{ $notification->markAsRead() }}"#,
            r#"<p>markAsRead</p>"#,
        ] {
            assert!(!calls(line, "markAsRead"), "{line}");
        }
    }
}
