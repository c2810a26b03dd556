use super::*;

fn targets(f: &FileFacts, kind: RefKind) -> Vec<&str> {
    f.refs
        .iter()
        .filter(|r| r.kind == kind)
        .map(|r| r.target.as_str())
        .collect()
}

#[test]
fn routes_define_endpoints_and_scripts_request_them() {
    let routes = r#"<?php
use App\Http\Controllers\API\AuthController;
use App\Http\Controllers\API\MovePlaylistSongsController;

Route::prefix('api')->middleware('api')->group(static function (): void {
    Route::post('me', [AuthController::class, 'login'])->name('auth.login');
    Route::post('playlists/{playlist}/songs/move', MovePlaylistSongsController::class);
    Route::delete(
        '/playlist-folders/{playlistFolder?}/playlists',
        [PlaylistFolderPlaylistController::class, 'destroy']
    );
    Route::apiResource('playlists.songs', PlaylistSongController::class);
    Route::get('/', 'HomeController@index');
    Route::get('about', static fn () => view('about'));
});
"#;
    let f = extract("routes/api.php", routes);
    let got: Vec<String> = f
        .endpoints
        .iter()
        .map(|e| {
            let short = e.controller.rsplit('\\').next().unwrap_or("");
            let action = e.action.as_deref().unwrap_or("-");
            let name = e.name.as_deref().unwrap_or("-");
            format!("{} {} {short}@{action} {name}", e.method, e.uri)
        })
        .collect();
    assert_eq!(
        got,
        [
            "DELETE playlist-folders/{}/playlists PlaylistFolderPlaylistController@destroy -",
            "DELETE playlists/{}/songs/{} PlaylistSongController@destroy playlists.songs.destroy",
            "GET  HomeController@index -",
            "GET playlists/{}/songs PlaylistSongController@index playlists.songs.index",
            "GET playlists/{}/songs/{} PlaylistSongController@show playlists.songs.show",
            "PATCH playlists/{}/songs/{} PlaylistSongController@update playlists.songs.update",
            "POST me AuthController@login auth.login",
            "POST playlists/{}/songs PlaylistSongController@store playlists.songs.store",
            "POST playlists/{}/songs/move MovePlaylistSongsController@__invoke -",
            "PUT playlists/{}/songs/{} PlaylistSongController@update playlists.songs.update",
        ]
    );
    // A bare 'X@m' in a file without a namespace: Laravel's old
    // controller namespace; `::class` names resolve as PHP does.
    assert!(
        f.endpoints
            .iter()
            .any(|e| e.controller == "App\\Http\\Controllers\\HomeController")
    );
    assert!(
        f.endpoints
            .iter()
            .any(|e| e.controller == "PlaylistSongController")
    );
    let store = r#"import { http } from '@/services'
export const playlistStore = {
  async move (playlist: Playlist, ids: string[]) {
    await http.silently.post(`playlists/${playlist.id}/songs/move`, { ids })
  },
  fetch: async () => http.get<Playlist[]>(`${base}/playlists?sort=${sort}`),
  logo: () => fetch('/img/logo.svg'),
  other: () => fetch('https://example.com/api/x'),
  cache: () => map.get('playlists'),
  me: () => axios.put('/api/me', data),
  save: () => form.post(route('playlists.store'), { onSuccess }),
}
"#;
    let view = r#"<form method="POST" action="{{ url("/books/{$book->slug}") }}">
<a href="{{ url('/settings/users/' . $user->id) }}">{{ $user->name }}</a>
<a href="{{ url('/tags?name=' . urlencode($tag)) }}">#</a>
<link rel="icon" href="{{ url('/icon.png') }}"> @if($x) {{ redirect('/login') }} @endif
"#;
    let f = extract("resources/views/books/edit.blade.php", view);
    assert_eq!(
        targets(&f, RefKind::Url),
        [
            "GET login",
            "GET settings/users/{}",
            "GET tags",
            "POST books/{}"
        ]
    );
    let forms = r#"<form action="{{ url("/settings/users/{$user->id}") }}" method="post">
    <input type="hidden" name="_method" value="PUT">
</form>
<form action="{{ url('/books/' . $book->slug) }}" method="POST">
    {{ method_field('delete') }}
</form>
<form action="{{ url('/search') }}"></form>
<script>const u = "{{ url('/api/x') }}"</script>
"#;
    let f = extract("resources/views/users/edit.blade.php", forms);
    assert_eq!(
        targets(&f, RefKind::Url),
        [
            "* api/x",
            "DELETE books/{}",
            "GET search",
            "PUT settings/users/{}"
        ]
    );
    let f = extract("resources/js/stores/playlistStore.ts", store);
    assert_eq!(
        targets(&f, RefKind::Url),
        [
            "GET playlists",
            "POST playlists/{}/songs/move",
            "PUT api/me"
        ]
    );
    assert_eq!(targets(&f, RefKind::RouteName), ["playlists.store"]);
}

#[test]
fn php_classes_resolve_through_namespace_and_imports() {
    let src = r#"<?php
namespace App\Http\Controllers;

use App\Models\Order;
use App\Http\Requests\{StoreOrderRequest, UpdateOrderRequest as Update};
use Illuminate\Support\Facades\Route;

// OrderPolicy is mentioned in a comment only.
final class OrderController extends Controller implements HasMiddleware
{
    use AuthorizesRequests;

    public function store(StoreOrderRequest $request, Update $u): View
    {
        $svc = app(OrderService::class);
        $x = new \App\Support\Money(1);
        \Facades\App\Services\Pricing::quote();
        return view('orders.show', ['o' => Order::find(1), 'n' => __('orders.saved')]);
    }

    public function index()
    {
        return redirect()->route('orders.index')->with('x', config('shop.currency'));
    }
}
"#;
    let f = extract("app/Http/Controllers/OrderController.php", src);
    assert_eq!(f.defines, ["App\\Http\\Controllers\\OrderController"]);
    assert_eq!(
        targets(&f, RefKind::Extends),
        [
            "App\\Http\\Controllers\\AuthorizesRequests",
            "App\\Http\\Controllers\\Controller",
            "App\\Http\\Controllers\\HasMiddleware"
        ]
    );
    let classes = targets(&f, RefKind::Class);
    for want in [
        "App\\Http\\Controllers\\OrderService",
        "App\\Http\\Requests\\StoreOrderRequest",
        "App\\Http\\Requests\\UpdateOrderRequest",
        "App\\Models\\Order",
        "App\\Support\\Money",
        "App\\Services\\Pricing",
    ] {
        assert!(classes.contains(&want), "{want}: {classes:?}");
    }
    assert!(
        !classes.iter().any(|c| c.ends_with("OrderPolicy")),
        "{classes:?}"
    );
    assert_eq!(targets(&f, RefKind::View), ["orders.show"]);
    assert_eq!(targets(&f, RefKind::Trans), ["orders"]);
    assert_eq!(targets(&f, RefKind::Config), ["shop"]);
    assert_eq!(targets(&f, RefKind::RouteName), ["orders.index"]);
    let view = f.refs.iter().find(|r| r.kind == RefKind::View).unwrap();
    assert_eq!(view.line, 18);
}

#[test]
fn models_migrations_and_routes_name_their_tables_and_routes() {
    let model = "<?php\nnamespace App\\Models;\nclass OrderItem extends Model {}\n";
    assert_eq!(
        extract("app/Models/OrderItem.php", model).tables,
        ["order_items"]
    );
    let named = "<?php\nnamespace App\\Models;\nclass Category extends Model { protected $table = 'cats'; }\n";
    assert_eq!(extract("app/Models/Category.php", named).tables, ["cats"]);
    let migration = "<?php\nreturn new class extends Migration {\n public function up() {\n  Schema::create('orders', function (Blueprint $t) {});\n  Schema::table('users', function ($t) {});\n }\n};\n";
    assert_eq!(
        extract("database/migrations/x.php", migration).tables,
        ["orders", "users"]
    );
    let routes = "<?php\nRoute::get('/o', [OrderController::class, 'index'])->name('orders.index');\nRoute::get('/x', 'UserController@show');\n";
    let f = extract("routes/web.php", routes);
    assert_eq!(f.route_names, ["orders.index"]);
    let classes = targets(&f, RefKind::Class);
    assert!(classes.contains(&"OrderController"), "{classes:?}");
    assert!(
        classes.contains(&"App\\Http\\Controllers\\UserController"),
        "{classes:?}"
    );
}

#[test]
fn blade_scripts_and_python() {
    let blade = "@extends('layouts.app')\n<x-forms.input name=\"a\" />\n@include('partials.nav')\n<livewire:cart />\n{{ __('auth.failed') }} {{ \\App\\Models\\User::count() }}";
    let f = extract("resources/views/home.blade.php", blade);
    assert_eq!(targets(&f, RefKind::View), ["layouts.app", "partials.nav"]);
    assert_eq!(targets(&f, RefKind::Component), ["forms.input"]);
    assert_eq!(targets(&f, RefKind::Livewire), ["cart"]);
    assert_eq!(targets(&f, RefKind::Trans), ["auth"]);
    assert_eq!(targets(&f, RefKind::Class), ["App\\Models\\User"]);

    let js = "import a from './a'\nimport { b } from \"../lib/b.js\";\nconst c = require('./c');\nimport 'lodash';\nimport x from '@/components/X.vue'";
    let f = extract("resources/js/app.js", js);
    assert_eq!(
        targets(&f, RefKind::Import),
        ["../lib/b.js", "./a", "./c", "@/components/X.vue"]
    );

    let py = "from .utils import helper, other\nimport os, flask.json\nfrom flask import (\n    Flask,\n)\n";
    let f = extract("src/flask/app.py", py);
    assert_eq!(
        targets(&f, RefKind::Import),
        [
            ".utils:helper",
            ".utils:other",
            "flask.json",
            "flask:Flask",
            "os"
        ]
    );
}

/// Artisan commands: the names a command class, an `#[AsCommand]` and a
/// closure command define, and the code that runs one by its name; an HTTP
/// `$this->call('GET', …)` in a test names no command that exists, and a
/// `$name` outside a command is not one.
#[test]
fn artisan_commands_by_name() {
    let command = "<?php\nnamespace App\\Console\\Commands;\nuse Illuminate\\Console\\Command;\nclass ResetPasswordCommand extends Command\n{\n    protected $signature = 'reset-password\n        {--email= : The user}';\n    protected $name = 'legacy:reset';\n    public function handle(): void { $this->call('cache:clear'); }\n}\n";
    let f = extract("app/Console/Commands/ResetPasswordCommand.php", command);
    assert_eq!(f.commands, ["reset-password", "legacy:reset"]);
    assert_eq!(targets(&f, RefKind::Command), ["cache:clear"]);

    let attribute =
        "<?php\n#[AsCommand(name: 'links:check')]\nclass CheckLinks extends Command {}\n";
    assert_eq!(
        extract("app/Console/Commands/CheckLinks.php", attribute).commands,
        ["links:check"]
    );
    let console = "<?php\nArtisan::command('inspire', function () {})->purpose('x');\nSchedule::command('links:check')->daily();\n";
    let f = extract("routes/console.php", console);
    assert_eq!(f.commands, ["inspire"]);
    assert_eq!(targets(&f, RefKind::Command), ["links:check"]);

    let test = "<?php\nclass ResetPasswordCommandTest extends TestCase\n{\n    public function testCommand(): void\n    {\n        $this->artisan('reset-password', ['--email' => 'a@b.c'])->assertExitCode(0);\n        Artisan::call(\"links:check\");\n        $this->call('GET', '/links');\n    }\n}\n";
    let f = extract("tests/Commands/ResetPasswordCommandTest.php", test);
    assert_eq!(
        targets(&f, RefKind::Command),
        ["GET", "links:check", "reset-password"]
    );
    let runs = f
        .refs
        .iter()
        .find(|r| r.target == "reset-password")
        .unwrap();
    assert_eq!(runs.line, 6);
    assert!(f.commands.is_empty());

    let model = "<?php\nclass Tag extends Model { protected $name = 'tag'; }\n";
    assert!(extract("app/Models/Tag.php", model).commands.is_empty());
}

/// `Blade::component` aliases: a view's name first, a class on either
/// side (as `::class` or in a string), as Laravel takes them.
#[test]
fn blade_component_aliases_name_their_targets() {
    let f = crate::graph::facts::extract(
        "app/Providers/AppServiceProvider.php",
        r#"<?php
namespace App\Providers;
use App\Http\Components\AdComponent;
class AppServiceProvider {
    public function boot(): void {
        Blade::component('ad', AdComponent::class);
        Blade::component(AdComponent::class, 'banner');
        Blade::component('front.layouts.app', 'app-layout');
        Blade::component('App\\View\\Alert', 'alert');
    }
}
"#,
    );
    assert_eq!(
        f.component_aliases,
        [
            (
                "ad".to_string(),
                "App\\Http\\Components\\AdComponent".to_string()
            ),
            (
                "banner".to_string(),
                "App\\Http\\Components\\AdComponent".to_string()
            ),
            ("app-layout".to_string(), "front.layouts.app".to_string()),
            ("alert".to_string(), "App\\View\\Alert".to_string()),
        ]
    );
    assert_eq!(targets(&f, RefKind::View), ["front.layouts.app"]);
}

/// An import's reference is on its own `use` line, also when its alias
/// is written earlier inside another import (`…\Common\Import as
/// ImportRequest` before `…\Banking\Transactions as Import`).
#[test]
fn an_import_is_on_its_own_line() {
    let f = crate::graph::facts::extract(
        "app/Http/Controllers/Banking/Transactions.php",
        "<?php\nnamespace App\\Http\\Controllers\\Banking;\n\nuse App\\Http\\Requests\\Common\\Import as ImportRequest;\nuse App\\Imports\\Banking\\Transactions as Import;\nuse App\\Models\\Transaction;\nuse App\\Models\\TransactionTag;\n",
    );
    let line = |fq: &str| {
        f.refs
            .iter()
            .find(|r| r.kind == RefKind::Import && r.target == fq)
            .map(|r| r.line)
    };
    assert_eq!(line("App\\Http\\Requests\\Common\\Import"), Some(4));
    assert_eq!(line("App\\Imports\\Banking\\Transactions"), Some(5));
    assert_eq!(line("App\\Models\\Transaction"), Some(6));
    assert_eq!(line("App\\Models\\TransactionTag"), Some(7));
}
