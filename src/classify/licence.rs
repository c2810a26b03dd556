//! Another project's code kept in the tree: a directory below the root that
//! holds its own licence file naming a copyright holder the repository's
//! root licence does not name is a copy of that project (a fork or a
//! library copied in), classed `vendored` whole.
//!
//! Seen on BookStackApp/BookStack (6f1c54d01): Meta's Lexical editor forked
//! into `resources/js/wysiwyg/lexical/` with its `ORIGINAL-LEXICAL-LICENSE`
//! ("Copyright (c) Meta Platforms, Inc. and affiliates"; the root's is "Dan
//! Brown and the BookStack Project contributors"), 2,379 of the
//! application's 11,030 chunks. Monorepos whose packages carry the
//! repository's own licence stay source: the 37 `LICENSE.md` of
//! laravel/framework's components all say "Copyright (c) Taylor Otwell", as
//! its root does. Without a root licence, or a licence without a copyright
//! line, nothing is decided (ours cannot be told from theirs).

use std::collections::BTreeSet;

/// Words of a copyright line that name no one.
const NOT_NAMES: &[&str] = &[
    "the",
    "and",
    "inc",
    "llc",
    "ltd",
    "gmbh",
    "corp",
    "corporation",
    "company",
    "its",
    "all",
    "other",
    "others",
    "rights",
    "reserved",
    "present",
    "contributors",
    "authors",
    "affiliates",
    "project",
    "copyright",
    "holders",
];

/// A licence file by name: `LICENSE`, `LICENCE.md`, `license.txt`,
/// `COPYING`, `LICENSE-MIT`, `ORIGINAL-LEXICAL-LICENSE` (a name part, split
/// at `-`, `_` and `.`, is the word; the extension, if any, is a text one).
/// `LicenseService.php` is not one.
pub fn is_licence_file(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    let stem = match lower.rsplit_once('.') {
        Some((s, "md" | "txt" | "rst" | "markdown")) => s,
        Some((_, e)) if !matches!(e, "mit" | "apache" | "bsd" | "gpl") => return false,
        _ => lower.as_str(),
    };
    stem.split(['-', '_', '.'])
        .any(|w| matches!(w, "license" | "licence" | "copying"))
}

/// The names a licence text's copyright lines give, as lowercase words of
/// three letters or more (years, `(c)`, `©` and words like "contributors"
/// dropped): "Copyright (c) 2015-2024, Dan Brown and the BookStack Project
/// contributors." gives {brown, bookstack, dan}. A line counts when it opens
/// with "Copyright" followed by `(c)`, `©` or a year, so the MIT text's "The
/// above copyright notice …" and Apache's "Copyright [yyyy] [name of
/// copyright owner]" template name no one.
pub fn copyright_holders(text: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for line in text.lines() {
        let line = line
            .trim_start_matches(|c: char| c.is_whitespace() || matches!(c, '/' | '*' | '#'))
            .to_lowercase();
        let Some(rest) = line.strip_prefix("copyright") else {
            continue;
        };
        let rest = rest.trim_start();
        if !(rest.starts_with("(c)")
            || rest.starts_with('©')
            || rest.starts_with(|c: char| c.is_ascii_digit()))
        {
            continue;
        }
        names.extend(
            rest.split(|c: char| !c.is_alphabetic())
                .filter(|w| w.chars().count() >= 3 && !NOT_NAMES.contains(w))
                .map(str::to_string),
        );
    }
    names
}

/// Directories (repo-relative, ending in `/`) holding another project's
/// code, each with the reason, from the repository's licence files
/// (`licences`: repo-relative path and text, the root's among them).
/// A directory is foreign when its licence names holders and none of them
/// is a holder the root licences name.
pub fn foreign_trees(licences: &[(String, String)]) -> Vec<(String, String)> {
    let root: BTreeSet<String> = licences
        .iter()
        .filter(|(rel, _)| !rel.contains('/'))
        .flat_map(|(_, text)| copyright_holders(text))
        .collect();
    if root.is_empty() {
        return Vec::new();
    }
    let mut out: Vec<(String, String)> = Vec::new();
    for (rel, text) in licences {
        let Some((dir, _)) = rel.rsplit_once('/') else {
            continue;
        };
        let holders = copyright_holders(text);
        if holders.is_empty() || !holders.is_disjoint(&root) {
            continue;
        }
        let prefix = format!("{dir}/");
        if out.iter().any(|(p, _)| prefix.starts_with(p.as_str())) {
            continue;
        }
        out.retain(|(p, _)| !p.starts_with(prefix.as_str()));
        let theirs: Vec<&str> = holders.iter().map(String::as_str).collect();
        out.push((
            prefix,
            format!(
                "under another project's licence {rel}: copyright {}, not the repository's",
                theirs.join(" ")
            ),
        ));
    }
    out.sort();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIT: &str = "Permission is hereby granted, free of charge …\n\nThe above copyright notice and this permission notice shall be included in all\ncopies or substantial portions of the Software.\nAUTHORS OR COPYRIGHT HOLDERS BE LIABLE";

    fn licence(holder: &str) -> String {
        format!("MIT License\n\nCopyright (c) {holder}\n\n{MIT}")
    }

    #[test]
    fn licence_files_by_name() {
        for yes in [
            "LICENSE",
            "LICENSE.md",
            "license.txt",
            "LICENCE",
            "COPYING",
            "LICENSE-MIT",
            "ORIGINAL-LEXICAL-LICENSE",
        ] {
            assert!(is_licence_file(yes), "{yes}");
        }
        for no in [
            "LicenseService.php",
            "license.php",
            "license-activated-successful.json",
            "licenses.blade.php",
            "README.md",
        ] {
            assert!(!is_licence_file(no), "{no}");
        }
    }

    #[test]
    fn holders_are_the_names_of_copyright_lines() {
        let h = copyright_holders(&licence(
            "2015-2024, Dan Brown and the BookStack Project contributors.",
        ));
        assert_eq!(
            h.into_iter().collect::<Vec<_>>(),
            ["bookstack", "brown", "dan"]
        );
        assert!(copyright_holders(MIT).is_empty());
        assert!(
            copyright_holders("Copyright [yyyy] [name of copyright owner]").is_empty(),
            "Apache's appendix template names no one"
        );
        assert_eq!(
            copyright_holders("Copyright © 2004-present Fabien Potencier")
                .into_iter()
                .collect::<Vec<_>>(),
            ["fabien", "potencier"]
        );
    }

    #[test]
    fn a_fork_under_its_own_licence_is_foreign_a_monorepo_package_is_not() {
        let bookstack = [
            (
                "LICENSE".to_string(),
                licence("2015-2024, Dan Brown and the BookStack Project contributors."),
            ),
            (
                "resources/js/wysiwyg/lexical/ORIGINAL-LEXICAL-LICENSE".to_string(),
                licence("Meta Platforms, Inc. and affiliates."),
            ),
            (
                "resources/js/wysiwyg/lexical/core/LICENSE".to_string(),
                licence("Meta Platforms, Inc."),
            ),
            // A licence without a copyright line decides nothing.
            ("resources/js/code/LICENSE".to_string(), MIT.to_string()),
        ];
        let trees = foreign_trees(&bookstack);
        assert_eq!(trees.len(), 1, "{trees:?}");
        assert_eq!(trees[0].0, "resources/js/wysiwyg/lexical/");
        assert!(
            trees[0].1.contains("ORIGINAL-LEXICAL-LICENSE") && trees[0].1.contains("meta"),
            "{}",
            trees[0].1
        );

        let laravel = [
            ("LICENSE.md".to_string(), licence("Taylor Otwell")),
            (
                "src/Illuminate/Auth/LICENSE.md".to_string(),
                licence("Taylor Otwell"),
            ),
        ];
        assert!(foreign_trees(&laravel).is_empty());
        // No root licence: ours cannot be told from theirs.
        assert!(foreign_trees(&bookstack[1..]).is_empty());
    }
}
