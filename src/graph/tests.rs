//! Tests of graph resolution and related files.

use super::*;

/// The kinds of the edges from `from` to `to`.
fn edge_kinds(g: &Graph, from: &str, to: &str) -> Vec<EdgeKind> {
    g.out(from)
        .iter()
        .filter(|e| e.to == to)
        .map(|e| e.kind)
        .collect()
}

fn repo(files: &[(&str, &str)]) -> (BTreeMap<String, FileFacts>, BTreeSet<String>) {
    let facts = files
        .iter()
        .map(|(f, text)| (f.to_string(), facts::extract(f, text)))
        .collect();
    let names = files.iter().map(|(f, _)| f.to_string()).collect();
    (facts, names)
}

#[test]
fn laravel_conventions_resolve_to_files() {
    let (facts, files) = repo(&[
        (
            "app/Http/Controllers/OrderController.php",
            "<?php\nnamespace App\\Http\\Controllers;\nuse App\\Models\\Order;\nclass OrderController extends Controller {\n public function show() { return view('orders.show', ['o' => Order::first(), 'c' => config('shop.x'), 't' => __('orders.saved')]); }\n}\n",
        ),
        (
            "app/Http/Controllers/Controller.php",
            "<?php\nnamespace App\\Http\\Controllers;\nabstract class Controller {}\n",
        ),
        (
            "app/Models/Order.php",
            "<?php\nnamespace App\\Models;\nclass Order extends Model {}\n",
        ),
        (
            "database/migrations/2024_01_01_create_orders_table.php",
            "<?php\nreturn new class extends Migration { public function up() { Schema::create('orders', function ($t) {}); } };\n",
        ),
        (
            "database/factories/OrderFactory.php",
            "<?php\nnamespace Database\\Factories;\nuse App\\Models\\Order;\nclass OrderFactory extends Factory { protected $model = Order::class; }\n",
        ),
        (
            "resources/views/orders/show.blade.php",
            "<x-layout>@include('orders.partials.line')</x-layout>",
        ),
        (
            "resources/views/orders/partials/line.blade.php",
            "<div></div>",
        ),
        ("resources/views/components/layout.blade.php", "{{ $slot }}"),
        ("config/shop.php", "<?php return ['x' => 1];"),
        ("lang/en/orders.php", "<?php return ['saved' => 'Saved'];"),
        (
            "lang/fr/orders.php",
            "<?php return ['saved' => 'Enregistré'];",
        ),
        (
            "routes/web.php",
            "<?php\nuse App\\Http\\Controllers\\OrderController;\nRoute::get('/o/{o}', [OrderController::class, 'show'])->name('orders.show');\n",
        ),
    ]);
    // Another locale's translations are walked, not indexed (`l10n`); the
    // application's own locales are (`Config::index_locales`).
    let mut facts = facts;
    facts.remove("lang/fr/orders.php");
    let g = Graph::build(&facts, &files);
    let to = |from: &str| -> Vec<(String, EdgeKind)> {
        g.out(from).iter().map(|e| (e.to.clone(), e.kind)).collect()
    };
    let c = to("app/Http/Controllers/OrderController.php");
    for want in [
        ("app/Models/Order.php", EdgeKind::Import),
        ("app/Http/Controllers/Controller.php", EdgeKind::Extends),
        ("resources/views/orders/show.blade.php", EdgeKind::View),
        ("config/shop.php", EdgeKind::Config),
        ("lang/en/orders.php", EdgeKind::Trans),
    ] {
        assert!(
            c.contains(&(want.0.to_string(), want.1)),
            "{want:?} in {c:?}"
        );
    }
    assert!(!c.iter().any(|(f, _)| f == "lang/fr/orders.php"));
    assert!(to("app/Models/Order.php").contains(&(
        "database/migrations/2024_01_01_create_orders_table.php".into(),
        EdgeKind::Table
    )));
    let v = to("resources/views/orders/show.blade.php");
    assert!(v.contains(&(
        "resources/views/orders/partials/line.blade.php".into(),
        EdgeKind::View
    )));
    assert!(v.contains(&(
        "resources/views/components/layout.blade.php".into(),
        EdgeKind::Component
    )));
    assert!(to("routes/web.php").contains(&(
        "app/Http/Controllers/OrderController.php".into(),
        EdgeKind::Import
    )));
    // A view's components as a reply names them: `<x-layout>` is an
    // anonymous component (its view, no class); a component with neither
    // class nor view (a package's) is left out; other names pass.
    assert_eq!(
        g.existing_related(&[
            "App\\View\\Components\\Layout".into(),
            "App\\View\\Components\\Button".into(),
            "App\\Livewire\\Cart".into(),
            "App\\Models\\Order".into(),
        ]),
        [
            "resources/views/components/layout.blade.php",
            "App\\Models\\Order"
        ]
    );

    // The model's change set: its migration, its factory, the controller.
    let r = related(&g, None, &["app/Models/Order.php".to_string()], 10);
    let files: Vec<&str> = r.iter().map(|x| x.file.as_str()).collect();
    for want in [
        "database/migrations/2024_01_01_create_orders_table.php",
        "database/factories/OrderFactory.php",
        "app/Http/Controllers/OrderController.php",
    ] {
        assert!(files.contains(&want), "{want} in {files:?}");
    }
    assert!(
        r[0].edges.iter().any(|e| e.kind == EdgeKind::Table),
        "{:?}",
        r[0]
    );
}

#[test]
fn script_and_python_imports_resolve_with_extensions_and_packages() {
    let (facts, files) = repo(&[
        (
            "resources/js/app.js",
            "import Nav from './components/Nav.vue'\nimport util from './util'\nimport x from '@/lib'\n",
        ),
        ("resources/js/components/Nav.vue", "<template/>"),
        ("resources/js/util.ts", "export const a = 1"),
        ("resources/js/lib/index.js", "export default 1"),
        (
            "src/flask/app.py",
            "from .helpers import get_root\nfrom . import json\nimport flask.sessions\n",
        ),
        ("src/flask/helpers.py", ""),
        ("src/flask/json/__init__.py", ""),
        ("src/flask/sessions.py", ""),
    ]);
    let g = Graph::build(&facts, &files);
    let to = |from: &str| -> Vec<&str> { g.out(from).iter().map(|e| e.to.as_str()).collect() };
    assert_eq!(
        to("resources/js/app.js"),
        [
            "resources/js/components/Nav.vue",
            "resources/js/lib/index.js",
            "resources/js/util.ts"
        ]
    );
    assert_eq!(
        to("src/flask/app.py"),
        [
            "src/flask/helpers.py",
            "src/flask/json/__init__.py",
            "src/flask/sessions.py"
        ]
    );
}

#[test]
fn alias_imports_find_their_root() {
    // koel keeps its Vue app in resources/assets/js (Laravel before 5.7);
    // another app aliases `@` to frontend/src (tsconfig paths): a unique
    // file ending in the imported path is the target and its root is
    // learned (`@/util` then means frontend/src/util.ts, not tools/util.ts);
    // an ambiguous ending outside the learned roots is no edge.
    let (facts, files) = repo(&[
        (
            "resources/assets/js/components/LoginForm.vue",
            "<script setup lang=\"ts\">\nimport { authService } from '@/services/authService'\n</script>\n",
        ),
        (
            "resources/assets/js/services/authService.ts",
            "export const authService = {}",
        ),
        (
            "frontend/src/App.vue",
            "<script>\nimport { store } from '@/stores/cart'\nimport util from '@/util'\n</script>\n",
        ),
        ("frontend/src/stores/cart.ts", "export const store = 1"),
        ("frontend/src/util.ts", "export default 1"),
        ("tools/util.ts", "export default 2"),
        ("web/main.ts", "import { h } from '@/helpers'\n"),
        ("lib/a/helpers.ts", "export const h = 1"),
        ("lib/b/helpers.ts", "export const h = 2"),
    ]);
    let g = Graph::build(&facts, &files);
    let to = |from: &str| -> Vec<&str> { g.out(from).iter().map(|e| e.to.as_str()).collect() };
    assert_eq!(
        to("resources/assets/js/components/LoginForm.vue"),
        ["resources/assets/js/services/authService.ts"]
    );
    assert_eq!(
        to("frontend/src/App.vue"),
        ["frontend/src/stores/cart.ts", "frontend/src/util.ts"]
    );
    assert!(to("web/main.ts").is_empty());
}

#[test]
fn siblings_share_a_parent() {
    let storage = |name: &str| {
        format!(
            "<?php\nnamespace App\\Services\\SongStorages;\nclass {name} extends SongStorage {{}}\n"
        )
    };
    let (facts, files) = repo(&[
        (
            "app/Services/SongStorages/SongStorage.php",
            "<?php\nnamespace App\\Services\\SongStorages;\nabstract class SongStorage {}\n",
        ),
        (
            "app/Services/SongStorages/LocalStorage.php",
            &storage("LocalStorage"),
        ),
        (
            "app/Services/SongStorages/SftpStorage.php",
            &storage("SftpStorage"),
        ),
        (
            "app/Services/SongStorages/S3Storage.php",
            &storage("S3Storage"),
        ),
    ]);
    let g = Graph::build(&facts, &files);
    let r = related(
        &g,
        None,
        &["app/Services/SongStorages/LocalStorage.php".into()],
        10,
    );
    let files: Vec<&str> = r.iter().map(|x| x.file.as_str()).collect();
    assert_eq!(files[0], "app/Services/SongStorages/SongStorage.php");
    assert!(
        files.contains(&"app/Services/SongStorages/SftpStorage.php"),
        "{files:?}"
    );
    let sftp = r
        .iter()
        .find(|x| x.file.ends_with("SftpStorage.php"))
        .unwrap();
    assert!(
        sftp.edges[0].sibling_of.as_deref() == Some("app/Services/SongStorages/SongStorage.php"),
        "{sftp:?}"
    );
}

#[test]
fn names_become_paths() {
    assert_eq!(studly_path("admin.user-table"), "Admin\\UserTable");
    assert_eq!(normalize("a/./b/../c"), "a/c");
}

#[test]
fn callers_are_added_or_raise_a_related_file() {
    let r = |file: &str, score: f32| Related {
        file: file.to_string(),
        class: crate::classify::classify_path(file).class,
        score,
        edge_score: score,
        edges: vec![Tie {
            kind: EdgeKind::Class,
            direction: Direction::In,
            sibling_of: None,
            site: Site {
                file: "x".into(),
                line: 0,
            },
        }],
        cochange: None,
        cochange_commits: None,
    };
    let related = vec![r("app/A.php", 1.5), r("app/B.php", 0.6)];
    let callers = [
        ("app/B.php".to_string(), 12),
        ("app/B.php".to_string(), 30),
        ("tests/BTest.php".to_string(), 5),
        ("app/Seed.php".to_string(), 3),
    ];
    let out = with_callers(related, &callers, &["app/Seed.php".to_string()], 3);
    let files: Vec<&str> = out.iter().map(|r| r.file.as_str()).collect();
    // B: 0.6 + one caller (1.0) passes A; the test caller counts 0.6; the
    // seed itself is left out.
    assert_eq!(files, ["app/B.php", "app/A.php", "tests/BTest.php"]);
    assert_eq!(
        out[0].edges[0],
        Tie {
            kind: EdgeKind::Call,
            direction: Direction::In,
            sibling_of: None,
            site: Site {
                file: "app/B.php".into(),
                line: 12
            }
        }
    );
    assert!((out[0].score - 1.6).abs() < 1e-6, "{}", out[0].score);
    assert!((out[2].score - 0.6).abs() < 1e-6, "{}", out[2].score);
}

#[test]
fn models_have_their_factories_and_policies_and_events_their_listeners() {
    let (facts, files) = repo(&[
        (
            "app/Models/Shop/Product.php",
            "<?php\nnamespace App\\Models\\Shop;\nclass Product extends Model { use HasFactory; }\n",
        ),
        (
            "database/factories/Shop/ProductFactory.php",
            "<?php\nnamespace Database\\Factories\\Shop;\nclass ProductFactory extends Factory { public function definition(): array { return []; } }\n",
        ),
        (
            "database/factories/BrandFactory.php",
            "<?php\nnamespace Database\\Factories;\nclass BrandFactory extends Factory {}\n",
        ),
        (
            "app/Policies/Shop/ProductPolicy.php",
            "<?php\nnamespace App\\Policies\\Shop;\nclass ProductPolicy { public function view($user): bool { return true; } }\n",
        ),
        (
            "app/Events/OrderShipped.php",
            "<?php\nnamespace App\\Events;\nclass OrderShipped { use Dispatchable; }\n",
        ),
        (
            "app/Listeners/SendShipmentNotification.php",
            "<?php\nnamespace App\\Listeners;\nuse App\\Events\\OrderShipped;\nclass SendShipmentNotification {\n public function handle(OrderShipped $event): void {}\n}\n",
        ),
        (
            "app/Services/Shipping.php",
            "<?php\nnamespace App\\Services;\nuse App\\Events\\OrderShipped;\nclass Shipping {\n public function ship(): void {\n  OrderShipped::dispatch();\n }\n}\n",
        ),
        (
            "database/seeders/DatabaseSeeder.php",
            "<?php\nnamespace Database\\Seeders;\nuse App\\Models\\Shop\\Product;\nclass DatabaseSeeder extends Seeder {\n public function run(): void {\n  Product::factory(3)->create();\n  \\App\\Models\\Brand::factory()->create();\n  Product::count();\n }\n}\n",
        ),
    ]);
    let g = Graph::build(&facts, &files);
    let kinds = |from: &str, to: &str| edge_kinds(&g, from, to);
    let (model, factory) = (
        "app/Models/Shop/Product.php",
        "database/factories/Shop/ProductFactory.php",
    );
    let policy = "app/Policies/Shop/ProductPolicy.php";
    assert_eq!(kinds(model, factory), [EdgeKind::Convention]);
    assert_eq!(kinds(factory, model), [EdgeKind::Convention]);
    assert_eq!(kinds(model, policy), [EdgeKind::Convention]);
    assert!(kinds(model, "database/factories/BrandFactory.php").is_empty());
    // `Model::factory()` ties its caller to the model's factory, at the
    // line of the call; a model's other statics do not.
    let seeder = "database/seeders/DatabaseSeeder.php";
    let call = g
        .out(seeder)
        .iter()
        .find(|e| e.to == factory)
        .expect("seeder → factory");
    assert_eq!((call.kind, call.line), (EdgeKind::Factory, 6));
    assert_eq!(
        kinds(seeder, "database/factories/BrandFactory.php"),
        [EdgeKind::Factory]
    );
    assert_eq!(kinds(seeder, model), [EdgeKind::Import, EdgeKind::Class]);
    assert!(kinds(seeder, policy).is_empty());
    let (event, listener) = (
        "app/Events/OrderShipped.php",
        "app/Listeners/SendShipmentNotification.php",
    );
    assert!(kinds(event, listener).contains(&EdgeKind::Listener));
    assert!(kinds(listener, event).contains(&EdgeKind::Listener));
    // The dispatching file points at the listener, at the line that uses
    // the event class.
    let user = g
        .out("app/Services/Shipping.php")
        .iter()
        .find(|e| e.to == listener)
        .expect("dispatcher → listener");
    assert_eq!((user.kind, user.line), (EdgeKind::Listener, 6));
    // The listener itself is not its own dispatcher, and a file that is not
    // under `Listeners` is no listener of what it names.
    assert!(kinds(listener, listener).is_empty());
    assert!(kinds(event, "app/Services/Shipping.php").is_empty());
    let related = related(&g, None, &[model.to_string()], 10);
    let names: Vec<&str> = related.iter().map(|r| r.file.as_str()).collect();
    assert!(
        names.contains(&factory) && names.contains(&policy),
        "{names:?}"
    );
}

#[test]
fn laravel_finds_a_models_factory_and_policy_by_these_names() {
    let got = model_conventions("App\\Models\\Shop\\Product");
    for want in [
        "Database\\Factories\\Shop\\ProductFactory",
        "App\\Policies\\ProductPolicy",
        "App\\Models\\Policies\\ProductPolicy",
        "App\\Models\\Shop\\Policies\\ProductPolicy",
        "App\\Policies\\Shop\\ProductPolicy",
        "App\\Models\\Policies\\Shop\\ProductPolicy",
    ] {
        assert!(got.iter().any(|g| g == want), "{want} in {got:?}");
    }
    assert_eq!(
        model_conventions("App\\User"),
        [
            "App\\Policies\\UserPolicy",
            "Database\\Factories\\UserFactory"
        ]
    );
    // An application namespace other than `App\` (BookStack's).
    assert_eq!(
        model_factory("BookStack\\Entities\\Models\\Page"),
        "Database\\Factories\\Entities\\Models\\PageFactory"
    );
    assert_eq!(
        model_factory("BookStack\\Models\\Tag"),
        "Database\\Factories\\TagFactory"
    );
}

#[test]
fn vue_templates_reach_globally_registered_directives_and_components() {
    // koel's app.ts registers its directives globally; a template uses
    // `v-koel-hide-broken-icon` with no import of the directive's file.
    let (facts, files) = repo(&[
        (
            "resources/assets/js/app.ts",
            "import { hideBrokenIcon } from '@/directives/hideBrokenIcon'\nimport IconLayers from './components/ui/IconLayers.vue'\nimport { FontAwesomeIcon } from '@fortawesome/vue-fontawesome'\ncreateApp(App)\n  .component('Icon', FontAwesomeIcon)\n  .component('IconLayers', IconLayers)\n  .directive('koel-hide-broken-icon', hideBrokenIcon)\n",
        ),
        (
            "resources/assets/js/directives/hideBrokenIcon.ts",
            "export const hideBrokenIcon = {}",
        ),
        (
            "resources/assets/js/components/ui/IconLayers.vue",
            "<template><i/></template>",
        ),
        (
            "resources/assets/js/components/song/SongThumbnail.vue",
            "<template>\n  <img v-if=\"src\" v-koel-hide-broken-icon.lazy :src=\"src\">\n  <icon-layers />\n  <Icon :icon=\"x\" />\n  <SongList />\n</template>\n<script setup lang=\"ts\">\nimport SongList from './SongList.vue'\n</script>\n",
        ),
        (
            "resources/assets/js/components/song/SongList.vue",
            "<template><ul/></template>",
        ),
    ]);
    let thumb = "resources/assets/js/components/song/SongThumbnail.vue";
    let globals: Vec<&str> = facts[thumb]
        .refs
        .iter()
        .filter(|r| r.kind == RefKind::Global)
        .map(|r| r.target.as_str())
        .collect();
    // Built-in directives and the locally imported SongList are not global uses.
    assert_eq!(globals, ["icon", "icon-layers", "v-koel-hide-broken-icon"]);
    let g = Graph::build(&facts, &files);
    let to: Vec<(&str, EdgeKind, u32)> = g
        .out(thumb)
        .iter()
        .map(|e| (e.to.as_str(), e.kind, e.line))
        .collect();
    assert_eq!(
        to,
        [
            (
                "resources/assets/js/components/song/SongList.vue",
                EdgeKind::Import,
                8
            ),
            (
                "resources/assets/js/components/ui/IconLayers.vue",
                EdgeKind::Component,
                3
            ),
            (
                "resources/assets/js/directives/hideBrokenIcon.ts",
                EdgeKind::Component,
                2
            ),
        ]
    );
    // The registering file keeps its imports only (FontAwesomeIcon is a package).
    let app: Vec<&str> = g
        .out("resources/assets/js/app.ts")
        .iter()
        .map(|e| e.to.as_str())
        .collect();
    assert_eq!(
        app,
        [
            "resources/assets/js/components/ui/IconLayers.vue",
            "resources/assets/js/directives/hideBrokenIcon.ts"
        ]
    );
}

#[test]
fn a_reference_kind_of_a_later_version_is_read_and_resolves_to_nothing() {
    let f: FileFacts =
        serde_json::from_str(r#"{"refs":[{"kind":"from_the_future","target":"x","line":1}]}"#)
            .expect("an unknown kind does not fail the state");
    assert_eq!(f.refs[0].kind, RefKind::Unknown);
    let facts: BTreeMap<String, FileFacts> = [("a.ts".to_string(), f)].into_iter().collect();
    let files: BTreeSet<String> = ["a.ts".to_string(), "x".to_string()].into_iter().collect();
    assert!(Graph::build(&facts, &files).is_empty());
}

#[test]
fn files_named_after_a_model_are_tied_to_it_even_when_they_import_it() {
    let (facts, files) = repo(&[
        (
            "app/Models/User.php",
            "<?php\nnamespace App\\Models;\nclass User extends Model { protected $table = 'users'; }\n",
        ),
        (
            "app/Http/Resources/UserResource.php",
            "<?php\nnamespace App\\Http\\Resources;\nuse App\\Models\\User;\nclass UserResource extends JsonResource { public function __construct(private User $user) {} }\n",
        ),
        (
            "app/Observers/UserObserver.php",
            "<?php\nnamespace App\\Observers;\nclass UserObserver {}\n",
        ),
        (
            "app/Http/Resources/UserProspectResource.php",
            "<?php\nnamespace App\\Http\\Resources;\nclass UserProspectResource {}\n",
        ),
    ]);
    let g = Graph::build(&facts, &files);
    let kinds = |from: &str, to: &str| edge_kinds(&g, from, to);
    let (model, resource) = ("app/Models/User.php", "app/Http/Resources/UserResource.php");
    assert!(kinds(resource, model).contains(&EdgeKind::Import));
    assert!(kinds(resource, model).contains(&EdgeKind::Convention));
    assert_eq!(
        kinds("app/Observers/UserObserver.php", model),
        [EdgeKind::Convention]
    );
    // One way: the model does not point at them.
    assert!(g.out(model).is_empty());
    // A name that merely starts with the model's is not one of its files.
    assert!(kinds("app/Http/Resources/UserProspectResource.php", model).is_empty());
    let related = related(&g, None, &[model.to_string()], 10);
    assert_eq!(related[0].file, resource);
}

#[test]
fn a_call_of_a_global_helper_reaches_the_file_that_defines_it() {
    let (facts, files) = repo(&[
        (
            "app/Helpers.php",
            "<?php\n\nif (! function_exists('koel_version')) {\n    function koel_version(): string { return trim(file_get_contents(base_path('.version'))); }\n}\n\nfunction Artifact_Path(?string $sub = null): string { return $sub; }\n",
        ),
        (
            "app/Services/InfoService.php",
            "<?php\nnamespace App\\Services;\nclass InfoService {\n    public function get(): array { return [strtoupper(koel_version()), \\artifact_path('x')]; }\n    public function koel_version() {}\n}\n",
        ),
        (
            "app/Services/Other.php",
            "<?php\nnamespace App\\Services;\nclass Other {\n    // koel_version() in a comment\n    public function a() { return $this->koel_version() . Other::artifact_path() . $artifact_path(); }\n}\n",
        ),
    ]);
    assert_eq!(
        facts["app/Helpers.php"].functions,
        ["artifact_path", "koel_version"]
    );
    assert!(
        facts["app/Services/InfoService.php"].functions.is_empty(),
        "methods are not global functions"
    );
    let g = Graph::build(&facts, &files);
    assert_eq!(
        edge_kinds(&g, "app/Services/InfoService.php", "app/Helpers.php"),
        [EdgeKind::Call]
    );
    let line = g
        .out("app/Services/InfoService.php")
        .iter()
        .find(|e| e.to == "app/Helpers.php")
        .map(|e| e.line);
    assert_eq!(line, Some(4));
    // A method of the same name, a static call, a variable function and a
    // comment are not calls of the helper.
    assert!(edge_kinds(&g, "app/Services/Other.php", "app/Helpers.php").is_empty());
}

#[test]
fn a_scripts_request_reaches_the_controller_of_the_route_it_matches_best() {
    let (facts, files) = repo(&[
        (
            "routes/api.php",
            "<?php\nuse App\\Http\\Controllers\\ProfileController;\nuse App\\Http\\Controllers\\AuthController;\nuse App\\Http\\Controllers\\SongController;\nuse App\\Http\\Controllers\\FavoriteSongsController;\nRoute::get('me', [ProfileController::class, 'show']);\nRoute::post('me', [AuthController::class, 'login'])->name('auth.login');\nRoute::apiResource('songs', SongController::class);\nRoute::get('songs/favorite', FavoriteSongsController::class);\n",
        ),
        (
            "app/Http/Controllers/ProfileController.php",
            "<?php\nnamespace App\\Http\\Controllers;\nclass ProfileController {}\n",
        ),
        (
            "app/Http/Controllers/AuthController.php",
            "<?php\nnamespace App\\Http\\Controllers;\nclass AuthController {}\n",
        ),
        (
            "app/Http/Controllers/SongController.php",
            "<?php\nnamespace App\\Http\\Controllers;\nclass SongController {}\n",
        ),
        (
            "app/Http/Controllers/FavoriteSongsController.php",
            "<?php\nnamespace App\\Http\\Controllers;\nclass FavoriteSongsController {}\n",
        ),
        (
            "resources/js/stores/songStore.ts",
            "export const s = {\n  one: (id) => http.get(`songs/${id}`),\n  liked: () => http.get('songs/favorite'),\n  reload: (id) => http.get(`songs/${id}`),\n}\n",
        ),
        (
            "resources/js/stores/authStore.ts",
            "export const a = {\n  login: (d) => axios.post('/api/me', d),\n  profile: () => axios.get('/api/me'),\n  nested: (p) => axios.get(`albums/${p}/songs`),\n}\n",
        ),
    ]);
    let mut facts = facts;
    let mut files = files;
    let view = "resources/views/songs/show.blade.php";
    facts.insert(
        view.to_string(),
        facts::extract(
            view,
            "<a href=\"{{ url(\"/songs/{$song->id}\") }}\">x</a>\n<form action=\"{{ route('auth.login') }}\">\n<img src=\"{{ url('/img/logo.png') }}\">\n<a href=\"{{ url('songs/' . $next->id) }}\">next</a>\n",
        ),
    );
    files.insert(view.to_string());
    let page = "resources/js/Pages/Auth/Login.vue";
    facts.insert(
        page.to_string(),
        facts::extract(
            page,
            "<script setup>\nconst submit = () => form.post(route('auth.login'))\n</script>\n",
        ),
    );
    files.insert(page.to_string());
    let g = Graph::build(&facts, &files);
    // An Inertia page's Ziggy `route()`: the controller the name routes to.
    assert_eq!(
        edge_kinds(&g, page, "app/Http/Controllers/AuthController.php"),
        [EdgeKind::Route]
    );
    // A view's links and forms: `url()` by path, `route()` by name (the
    // routes file that names it and the controller it routes to).
    assert_eq!(
        edge_kinds(&g, view, "app/Http/Controllers/SongController.php"),
        [EdgeKind::Endpoint]
    );
    assert_eq!(
        edge_kinds(&g, view, "app/Http/Controllers/AuthController.php"),
        [EdgeKind::Route]
    );
    assert_eq!(edge_kinds(&g, view, "routes/api.php"), [EdgeKind::Route]);
    assert_eq!(g.out(view).len(), 3, "{:#?}", g.out(view));
    let songs = "resources/js/stores/songStore.ts";
    let auth = "resources/js/stores/authStore.ts";
    let ctl = |c: &str| format!("app/Http/Controllers/{c}.php");
    assert_eq!(
        edge_kinds(&g, songs, &ctl("SongController")),
        [EdgeKind::Endpoint]
    );
    // A literal segment beats a route parameter; the method picks between
    // two routes of one path; `api/` is a prefix no route file spells.
    assert_eq!(
        edge_kinds(&g, songs, &ctl("FavoriteSongsController")),
        [EdgeKind::Endpoint]
    );
    assert_eq!(
        edge_kinds(&g, auth, &ctl("AuthController")),
        [EdgeKind::Endpoint]
    );
    assert_eq!(
        edge_kinds(&g, auth, &ctl("ProfileController")),
        [EdgeKind::Endpoint]
    );
    assert!(edge_kinds(&g, auth, &ctl("SongController")).is_empty());
    // Requests by controller action, when one action serves them: the
    // view's links (`href`: GET) reach `show` only.
    let at = |class: &str, action: &str| -> Vec<(String, u32)> {
        g.requests_of(class, action)
            .into_iter()
            .map(|a| (a.file.clone(), a.line))
            .collect()
    };
    // Every line of a request, also a second call of one endpoint in a
    // file (the store's `reload`, the view's `next` link).
    assert_eq!(
        at("SongController", "show"),
        [
            (songs.to_string(), 2),
            (songs.to_string(), 4),
            (view.to_string(), 1),
            (view.to_string(), 4)
        ]
    );
    assert_eq!(
        at("App\\Http\\Controllers\\SongController", "show"),
        at("SongController", "show")
    );
    assert!(at("SongController", "update").is_empty());
    assert_eq!(
        at("FavoriteSongsController", "__invoke"),
        [(songs.to_string(), 3)]
    );
    assert_eq!(at("AuthController", "login"), [(auth.to_string(), 2)]);
    assert_eq!(at("ProfileController", "show"), [(auth.to_string(), 3)]);
    assert!(
        at("Controller", "show").is_empty(),
        "a class name is matched whole"
    );
    // The files that define a class, by the same names.
    let song = ctl("SongController");
    assert_eq!(g.class_files("SongController"), [song.as_str()]);
    assert_eq!(
        g.class_files("\\App\\Http\\Controllers\\SongController"),
        [song.as_str()]
    );
    assert!(g.class_files("ongController").is_empty());
    let edges: Vec<&Edge> = g.out(songs).iter().collect();
    assert_eq!(edges.len(), 2, "{edges:#?}");
    let lines: Vec<(&str, u32)> = edges.iter().map(|e| (e.to.as_str(), e.line)).collect();
    assert_eq!(
        lines,
        [
            ("app/Http/Controllers/FavoriteSongsController.php", 3),
            ("app/Http/Controllers/SongController.php", 2)
        ]
    );
}

#[test]
fn a_laravel_tests_http_calls_reach_the_actions_they_request() {
    let (facts, files) = repo(&[
        (
            "routes/api.php",
            "<?php\nuse App\\Http\\Controllers\\ProfileController;\nRoute::post('profiles/{username}/follow', [ProfileController::class, 'follow']);\nRoute::get('profiles/{username}', [ProfileController::class, 'show']);\nRoute::delete('profiles/{username}/follow', [ProfileController::class, 'unfollow']);\n",
        ),
        (
            "app/Http/Controllers/ProfileController.php",
            "<?php\nnamespace App\\Http\\Controllers;\nclass ProfileController {}\n",
        ),
        (
            "tests/Feature/FollowProfileTest.php",
            "<?php\nclass FollowProfileTest extends TestCase {\n  public function testFollow() {\n    $this->actingAs($u)\n      ->postJson(\"/api/profiles/{$this->user->username}/follow\");\n    $this->json('DELETE', 'api/profiles/x/follow');\n    $this->get('/api/profiles/' . $name);\n    $items->get('profiles');\n    $this->deleteAs('api/profiles/y/follow', $u);\n  }\n}\n",
        ),
    ]);
    let g = Graph::build(&facts, &files);
    let test = "tests/Feature/FollowProfileTest.php";
    let at = |action: &str| -> Vec<u32> {
        g.requests_of("ProfileController", action)
            .into_iter()
            .filter(|a| a.file == test)
            .map(|a| a.line)
            .collect()
    };
    // By the verb the helper's name starts with; `->get('profiles')` on a
    // collection is no request (no `/` in it).
    assert_eq!(at("follow"), [5]);
    assert_eq!(at("unfollow"), [6, 9]);
    assert_eq!(at("show"), [7]);
    assert_eq!(
        edge_kinds(&g, test, "app/Http/Controllers/ProfileController.php"),
        [EdgeKind::Endpoint]
    );
}

#[test]
fn create_and_edit_forms_are_counterparts() {
    let names = [
        "resources/js/components/playlist/CreatePlaylistForm.vue",
        "resources/js/components/playlist/EditPlaylistForm.vue",
        "resources/js/components/playlist/CreatePlaylistForm.spec.ts",
        "resources/js/components/user/AddUserForm.vue",
        "resources/js/components/user/EditUserForm.vue",
        "resources/js/components/user/UserForm.vue",
        "resources/js/components/other/EditUserForm.vue",
        "app/Http/Requests/StoreUserRequest.php",
        "app/Http/Requests/UpdateUserRequest.php",
        "app/Http/Requests/Newsletter.php",
        "app/Http/Requests/Editor.php",
        "resources/views/books/create.blade.php",
        "resources/views/books/edit.blade.php",
        "resources/views/books/show.blade.php",
        "app/Http/Requests/API/PlaylistFolderStoreRequest.php",
        "app/Http/Requests/API/PlaylistFolderUpdateRequest.php",
        "app/Http/Requests/API/PlaylistStoreRequest.php",
        "app/Http/Requests/AddressRequest.php",
        "app/Http/Requests/EditorRequest.php",
    ];
    let files: BTreeSet<String> = names.iter().map(|s| s.to_string()).collect();
    let g = Graph::build(&BTreeMap::new(), &files);
    let pairs = [
        (
            "resources/js/components/playlist/CreatePlaylistForm.vue",
            "resources/js/components/playlist/EditPlaylistForm.vue",
        ),
        (
            "resources/js/components/user/AddUserForm.vue",
            "resources/js/components/user/EditUserForm.vue",
        ),
        (
            "app/Http/Requests/StoreUserRequest.php",
            "app/Http/Requests/UpdateUserRequest.php",
        ),
        (
            "resources/views/books/create.blade.php",
            "resources/views/books/edit.blade.php",
        ),
        (
            "app/Http/Requests/API/PlaylistFolderStoreRequest.php",
            "app/Http/Requests/API/PlaylistFolderUpdateRequest.php",
        ),
    ];
    for (a, b) in pairs {
        assert_eq!(edge_kinds(&g, a, b), [EdgeKind::Counterpart], "{a} → {b}");
        assert_eq!(edge_kinds(&g, b, a), [EdgeKind::Counterpart], "{b} → {a}");
    }
    // Another directory, another extension, no verb, another rest of the
    // name, a word that only starts like a verb (`Address`, `Editor`):
    // nothing.
    assert_eq!(
        g.len(),
        2 * pairs.len(),
        "{:?}",
        g.out.keys().collect::<Vec<_>>()
    );
    // `query`'s "also check": the counterparts of listed files not listed.
    let listed = [
        pairs[0].0.to_string(),
        pairs[1].0.to_string(),
        pairs[1].1.to_string(),
    ];
    let c = counterparts(&g, &listed);
    assert_eq!(c.len(), 1, "{c:?}");
    assert_eq!(c[0].file, pairs[0].1);
    assert_eq!(
        c[0].edges,
        [Tie {
            kind: EdgeKind::Counterpart,
            direction: Direction::Out,
            sibling_of: None,
            site: Site {
                file: pairs[0].0.to_string(),
                line: 0
            }
        }]
    );
    assert!((c[0].score - 1.0).abs() < 1e-6, "{}", c[0].score);
}

#[test]
fn resources_and_models_reach_the_typescript_types_of_their_json() {
    let (facts, files) = repo(&[
        (
            "app/Http/Resources/SongResource.php",
            "<?php\nnamespace App\\Http\\Resources;\nclass SongResource extends JsonResource {}\n",
        ),
        (
            "app/Models/Album.php",
            "<?php\nnamespace App\\Models;\nclass Album extends Model {}\n",
        ),
        (
            "app/Http/Resources/Resource.php",
            "<?php\nnamespace App\\Http\\Resources;\nclass Resource {}\n",
        ),
        (
            "resources/js/types.d.ts",
            "declare type Closure = () => void\ninterface Song extends Playable {\n  title: string\n}\nexport interface Album {\n  name: string\n}\n",
        ),
        (
            "resources/js/components/SongCard.vue",
            "<script lang=\"ts\">\ninterface Song { id: string }\n</script>\n",
        ),
    ]);
    let g = Graph::build(&facts, &files);
    let types = "resources/js/types.d.ts";
    assert_eq!(
        facts[types].ts_types,
        ["Album", "Closure", "Song"],
        "declared types"
    );
    assert_eq!(
        edge_kinds(&g, "app/Http/Resources/SongResource.php", types),
        [EdgeKind::Shape]
    );
    assert_eq!(
        edge_kinds(&g, "app/Models/Album.php", types),
        [EdgeKind::Shape]
    );
    // A `.vue` file's local types are not the application's JSON; a bare
    // `Resource` names no type.
    assert!(g.inn("resources/js/components/SongCard.vue").is_empty());
    assert!(g.out("app/Http/Resources/Resource.php").is_empty());
}

#[test]
fn convergent_files_are_those_several_files_share() {
    let class = |name: &str, uses: &[&str]| {
        let imports: String = uses
            .iter()
            .map(|u| format!("use App\\Models\\{u};\n"))
            .collect();
        let body: String = uses.iter().map(|u| format!(" {u}::first();")).collect();
        format!(
            "<?php\nnamespace App\\Http\\Controllers;\n{imports}class {name} {{\n public function show() {{{body} }}\n}}\n"
        )
    };
    let model = |name: &str| format!("<?php\nnamespace App\\Models;\nclass {name} {{}}\n");
    let (a, b, c) = (
        class("OrderController", &["Order", "Invoice"]),
        class("CheckoutController", &["Order", "Cart"]),
        class("ReportController", &["Report"]),
    );
    let (order, invoice, cart, report) = (
        model("Order"),
        model("Invoice"),
        model("Cart"),
        model("Report"),
    );
    let (facts, files) = repo(&[
        ("app/Http/Controllers/OrderController.php", &a),
        ("app/Http/Controllers/CheckoutController.php", &b),
        ("app/Http/Controllers/ReportController.php", &c),
        ("app/Models/Order.php", &order),
        ("app/Models/Invoice.php", &invoice),
        ("app/Models/Cart.php", &cart),
        ("app/Models/Report.php", &report),
    ]);
    let g = Graph::build(&facts, &files);
    let listed: Vec<String> = [
        "app/Http/Controllers/OrderController.php",
        "app/Http/Controllers/CheckoutController.php",
        "app/Http/Controllers/ReportController.php",
    ]
    .map(String::from)
    .to_vec();
    let shared = convergent(&g, None, &listed, 2, 10);
    let names: Vec<&str> = shared.iter().map(|r| r.file.as_str()).collect();
    // Order is used by two listed controllers; Invoice, Cart and Report by one.
    assert_eq!(names, ["app/Models/Order.php"]);
    assert!(
        shared[0]
            .edges
            .iter()
            .any(|e| e.site.file.contains("OrderController.php"))
            && shared[0]
                .edges
                .iter()
                .any(|e| e.site.file.contains("CheckoutController.php")),
        "{:?}",
        shared[0].edges
    );
    // A listed file is never its own answer; one listed file shares nothing.
    let with_order = [listed.clone(), vec!["app/Models/Order.php".to_string()]].concat();
    assert!(convergent(&g, None, &with_order, 2, 10).is_empty());
    assert!(convergent(&g, None, &listed[..1], 2, 10).is_empty());
    assert_eq!(convergent(&g, None, &listed, 1, 10).len(), 4);
}

/// The tests of listed files: named after one (less a layer suffix), or
/// referring to one; a test of an unrelated file is not listed, nor a
/// source file; co-change history never names a file that is gone.
#[test]
fn tests_for_listed_files_by_name_and_reference() {
    let (facts, files) = repo(&[
        (
            "app/Http/Controllers/SongController.php",
            "<?php\nnamespace App\\Http\\Controllers;\nclass SongController {}\n",
        ),
        (
            "app/Models/Album.php",
            "<?php\nnamespace App\\Models;\nclass Album {}\n",
        ),
        (
            "tests/Feature/SongTest.php",
            "<?php\nnamespace Tests\\Feature;\nclass SongTest {}\n",
        ),
        (
            "tests/Unit/AlbumCoverTest.php",
            "<?php\nnamespace Tests\\Unit;\nuse App\\Models\\Album;\nclass AlbumCoverTest { function t() { new Album(); } }\n",
        ),
        (
            "tests/Unit/PlaylistTest.php",
            "<?php\nnamespace Tests\\Unit;\nclass PlaylistTest {}\n",
        ),
        (
            "resources/js/components/SongList.vue",
            "<template><div/></template>\n",
        ),
        (
            "resources/js/components/SongList.spec.ts",
            "import x from './SongList.vue'\n",
        ),
    ]);
    let g = Graph::build(&facts, &files);
    let listed = [
        ("app/Http/Controllers/SongController.php".to_string(), 1.0),
        ("app/Models/Album.php".to_string(), 1.0),
        ("resources/js/components/SongList.vue".to_string(), 1.0),
    ];
    let got: Vec<String> = tests_for(&g, None, &listed, &[], 10)
        .into_iter()
        .map(|r| r.file)
        .collect();
    let mut sorted = got.clone();
    sorted.sort();
    assert_eq!(
        sorted,
        [
            "resources/js/components/SongList.spec.ts",
            "tests/Feature/SongTest.php",
            "tests/Unit/AlbumCoverTest.php",
        ],
        "{got:?}"
    );
    // Named after the file itself first: the spec beside the component.
    assert_eq!(got[0], "resources/js/components/SongList.spec.ts");
    assert!(g.has_file("app/Models/Album.php"));
    assert!(!g.has_file("app/User.php"));
}

/// A partial most views include is a hub; one a single page includes is
/// not.
#[test]
fn a_partial_most_views_include_is_a_hub() {
    let mut files: Vec<(String, String)> = (0..10)
        .map(|i| {
            let extra = if i == 0 {
                "@include('partials.card')\n"
            } else {
                ""
            };
            (
                format!("resources/views/page{i}.blade.php"),
                format!("@include('partials.icon')\n{extra}"),
            )
        })
        .collect();
    files.push((
        "resources/views/partials/icon.blade.php".into(),
        "<svg/>\n".into(),
    ));
    files.push((
        "resources/views/partials/card.blade.php".into(),
        "<div/>\n".into(),
    ));
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    let (facts, names) = repo(&refs);
    let g = Graph::build(&facts, &names);
    assert!(g.is_view_hub("resources/views/partials/icon.blade.php"));
    assert!(!g.is_view_hub("resources/views/partials/card.blade.php"));
}

/// A test named after an action shown of a listed controller
/// (`DeleteArticleTest` for `ArticleController::delete`, `ListArticlesTest`
/// for `list`); the controller's other action tests are not, nor a model's
/// method (a file without a layer suffix).
#[test]
fn tests_for_actions_shown_by_name() {
    let test = |name: &str| {
        (
            format!("tests/Feature/Api/Article/{name}.php"),
            format!("<?php\nnamespace Tests\\Feature\\Api\\Article;\nclass {name} {{}}\n"),
        )
    };
    let owned = [
        (
            "app/Http/Controllers/Api/ArticleController.php".to_string(),
            "<?php\nnamespace App\\Http\\Controllers\\Api;\nclass ArticleController {}\n"
                .to_string(),
        ),
        (
            "app/Models/Comment.php".to_string(),
            "<?php\nnamespace App\\Models;\nclass Comment {}\n".to_string(),
        ),
        test("DeleteArticleTest"),
        test("ListArticlesTest"),
        test("UpdateArticleTest"),
        test("DeleteCommentTest"),
    ];
    let borrowed: Vec<(&str, &str)> = owned
        .iter()
        .map(|(f, c)| (f.as_str(), c.as_str()))
        .collect();
    let (facts, files) = repo(&borrowed);
    let g = Graph::build(&facts, &files);
    let controller = "app/Http/Controllers/Api/ArticleController.php".to_string();
    let model = "app/Models/Comment.php".to_string();
    let listed = [(controller.clone(), 1.0), (model.clone(), 1.0)];
    let actions = [
        (controller.clone(), "delete".to_string()),
        (controller, "list".to_string()),
        (model, "delete".to_string()),
    ];
    let mut got: Vec<String> = tests_for(&g, None, &listed, &actions, 10)
        .into_iter()
        .map(|r| r.file)
        .collect();
    got.sort();
    assert_eq!(
        got,
        [
            "tests/Feature/Api/Article/DeleteArticleTest.php",
            "tests/Feature/Api/Article/ListArticlesTest.php",
        ]
    );
    assert!(tests_for(&g, None, &listed, &[], 10).is_empty());
}

/// A Blade component alias registered in a provider resolves `<x-alias>`
/// to its view or class, over the naming convention, and the registering
/// line is a use of the view; `Route::view` renders its view.
#[test]
fn blade_aliases_and_route_views_resolve() {
    let (facts, files) = repo(&[
        (
            "app/Providers/BladeComponentServiceProvider.php",
            "<?php\nnamespace App\\Providers;\nuse App\\Http\\Components\\AdComponent;\nuse Illuminate\\Support\\Facades\\Blade;\nclass BladeComponentServiceProvider {\n public function boot(): void {\n  Blade::component('ad', AdComponent::class);\n  Blade::component('front.layouts.app', 'app-layout');\n }\n}\n",
        ),
        (
            "app/Http/Components/AdComponent.php",
            "<?php\nnamespace App\\Http\\Components;\nclass AdComponent extends Component {}\n",
        ),
        ("resources/views/front/layouts/app.blade.php", "{{ $slot }}"),
        // The convention's file for `<x-app-layout>`, which the alias overrides.
        (
            "resources/views/components/app-layout.blade.php",
            "{{ $slot }}",
        ),
        (
            "resources/views/front/pages/search.blade.php",
            "<x-app-layout title=\"Search\">\n<x-ad />\n</x-app-layout>",
        ),
        (
            "routes/web.php",
            "<?php\nRoute::view('search', 'front.pages.search')->name('search');\n",
        ),
    ]);
    let g = Graph::build(&facts, &files);
    let page = "resources/views/front/pages/search.blade.php";
    assert_eq!(
        edge_kinds(&g, page, "resources/views/front/layouts/app.blade.php"),
        [EdgeKind::Component]
    );
    assert!(edge_kinds(&g, page, "resources/views/components/app-layout.blade.php").is_empty());
    assert_eq!(
        edge_kinds(&g, page, "app/Http/Components/AdComponent.php"),
        [EdgeKind::Component]
    );
    assert_eq!(edge_kinds(&g, "routes/web.php", page), [EdgeKind::View]);
    let provider = "app/Providers/BladeComponentServiceProvider.php";
    let registers = g
        .out(provider)
        .iter()
        .find(|e| e.to == "resources/views/front/layouts/app.blade.php")
        .map(|e| (e.kind, e.line));
    assert_eq!(registers, Some((EdgeKind::View, 8)));
}
