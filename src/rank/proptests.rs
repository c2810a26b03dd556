//! Properties of the Japanese side of the query plan over generated
//! requests mixing hiragana, katakana, kanji, ASCII and punctuation: the
//! plan terminates without a panic (segmentation once had a loop that did
//! not advance), names only terms the request holds, and is the same plan
//! when asked twice; its English rendering has no Japanese left and is
//! stable; katakana compounds split into pieces that rebuild the term, and
//! romanisation gives ASCII.

use proptest::prelude::*;

use super::bridge::{compound_splits, romanize};
use super::plan::plan;

/// One char of a request: mostly Japanese, with the ASCII, digits and
/// punctuation tickets mix in.
fn request_char() -> impl Strategy<Value = char> {
    prop_oneof![
        4 => proptest::char::range('ぁ', 'ゖ'),
        4 => proptest::char::range('ァ', 'ヺ'),
        1 => Just('ー'),
        3 => proptest::sample::select(
            "画面設定一覧記事削除追加表示更新検索制限上限件数文字投稿曲再生時間値空数"
                .chars()
                .collect::<Vec<_>>()
        ),
        3 => proptest::char::range('a', 'z'),
        1 => proptest::sample::select(" 、。「」()0123456789_:/-".chars().collect::<Vec<_>>()),
    ]
}

fn request() -> impl Strategy<Value = String> {
    proptest::collection::vec(request_char(), 0..80).prop_map(|cs| cs.into_iter().collect())
}

fn katakana_term() -> impl Strategy<Value = String> {
    proptest::collection::vec(proptest::char::range('ァ', 'ヺ'), 0..12)
        .prop_map(|cs| cs.into_iter().collect())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn a_plan_names_only_what_the_request_holds_and_is_the_same_twice(q in request()) {
        let p = plan(&q);
        for t in &p.translated {
            prop_assert!(q.contains(&t.term), "{:?} not in {q:?}", t.term);
        }
        for u in &p.untranslated {
            prop_assert!(q.contains(u.as_str()), "{u:?} not in {q:?}");
        }
        let again = plan(&q);
        prop_assert_eq!(
            serde_json::to_string(&p).unwrap(),
            serde_json::to_string(&again).unwrap()
        );
    }

    /// The English rendering of a request (what a Japanese request is
    /// embedded as) has no Japanese left, is the same twice and, rendered
    /// again as a request of its own, is left as it is (nothing to render).
    #[test]
    fn a_rendering_is_english_and_stable(q in request()) {
        let p = plan(&q);
        if let Some(r) = p.english_rendering(&q) {
            let japanese = |c: char| matches!(c, '\u{3040}'..='\u{30ff}' | '\u{4e00}'..='\u{9fff}');
            prop_assert!(!r.chars().any(japanese), "{q:?} → {r:?}");
            prop_assert_eq!(Some(r.clone()), plan(&q).english_rendering(&q));
            prop_assert_eq!(plan(&r).english_rendering(&r), None, "{:?}", r);
        }
    }

    #[test]
    fn compound_pieces_rebuild_the_term(term in katakana_term()) {
        for (a, b) in compound_splits(&term) {
            prop_assert_eq!(format!("{a}{b}"), term.clone());
            prop_assert!(a.chars().count() >= 2 && b.chars().count() >= 2);
        }
    }

    #[test]
    fn romanisation_is_ascii(term in katakana_term()) {
        prop_assert!(romanize(&term).is_ascii(), "{term:?} → {:?}", romanize(&term));
    }
}
