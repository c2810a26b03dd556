//! Properties of the fact scanners over generated PHP, Blade, route and
//! test texts (well-formed fragments, cut-off ones and arbitrary chars,
//! multibyte included): [`extract`] terminates without a panic, gives the
//! same facts twice, names lines that exist (1-based), keeps at most
//! `MAX_REFS` references and defines only names without whitespace.

use proptest::prelude::*;

use super::{MAX_REFS, extract};

/// Pieces of the files the scanners read, cut anywhere by the generator.
const FRAGMENTS: &[&str] = &[
    "<?php\n",
    "namespace App\\Http\\Controllers;\n",
    "use App\\Models\\User;\n",
    "use App\\Http\\Controllers\\ProfileController as Profile;\n",
    "class FeedController extends Controller\n{\n",
    "}\n",
    "    public function show(User $user) { return view('users.show', compact('user')); }\n",
    "Route::get('/articles/{slug}', [ArticleController::class, 'show'])->name('articles.show');\n",
    "Route::resource('photos', PhotoController::class);\n",
    "Route::post('feed', Profile::class);\n",
    "$this->postJson('/api/profiles/'.$user->id.'/follow')->assertOk();\n",
    "$this->json('DELETE', \"/api/articles/{$slug}\");\n",
    "User::factory()->count(3)->create();\n",
    "function helper_name($x) { return $x; }\n",
    "<livewire:home.feed :user=\"$user\" />\n",
    "@livewire('notifications')\n",
    "<x-user-card :user=\"$user\" />\n",
    "@include('partials.nav')\n",
    "@extends('layouts.app')\n",
    "{{ __('messages.welcome') }}\n",
    "<form action=\"{{ route('logout') }}\" method=\"POST\">\n",
    "Schema::create('comments', function (Blueprint $table) {\n",
    "protected $table = 'user_profiles';\n",
    "'\"([{::->\\",
    "画面の設定一覧",
    "\n",
];

fn text() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        6 => proptest::sample::select(FRAGMENTS).prop_flat_map(|f| {
            let n = f.chars().count();
            (Just(f), 0..=n).prop_map(|(f, cut)| f.chars().take(cut).collect::<String>())
        }),
        6 => proptest::sample::select(FRAGMENTS).prop_map(str::to_string),
        1 => proptest::collection::vec(any::<char>(), 0..6).prop_map(|cs| cs.into_iter().collect()),
    ];
    proptest::collection::vec(piece, 0..40).prop_map(|ps| ps.concat())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn facts_of_any_text_are_bounded_and_stable(text in text(), kind in 0..5usize) {
        let rel = [
            "app/Http/Controllers/FeedController.php",
            "resources/views/home.blade.php",
            "routes/web.php",
            "tests/Feature/FollowTest.php",
            "database/migrations/2024_01_01_000000_create_comments_table.php",
        ][kind];
        let facts = extract(rel, &text);
        prop_assert_eq!(&facts, &extract(rel, &text));
        let lines = text.split('\n').count() as u32;
        for r in &facts.refs {
            prop_assert!(r.line >= 1 && r.line <= lines, "{:?} of {} lines", r, lines);
        }
        prop_assert!(facts.refs.len() <= MAX_REFS);
        for d in &facts.defines {
            prop_assert!(!d.is_empty() && !d.contains(char::is_whitespace), "{:?}", d);
        }
    }
}
