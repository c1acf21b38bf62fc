//! The snapshot store suite, run against a real SQLite file and a real PostgreSQL (a fresh
//! schema per test): round trips, TTLs, corrupt rows, lease contention, fencing, takeover,
//! pruning that spares active leases, job leases.

use std::sync::Arc;

use jiff::civil::date;
use jiff::{SignedDuration, Timestamp};
use wafuel_domain::station::Quote;
use wafuel_domain::time::Clock;
use wafuel_source::rss;
use wafuel_source::validate::{Component, validate};
use wafuel_store::{Snapshot, SnapshotStore};

use crate::support::*;

fn quotes() -> Vec<Quote> {
    let text = std::fs::read_to_string("tests/fixtures/2026-09-29_statewide-excerpt_product-1.xml")
        .expect("fixture");
    let feed = rss::parse(&text).expect("parses");
    validate(&[Component { product: p(1), feed }], date(2026, 9, 29)).expect("valid")
}

fn t0() -> Timestamp {
    wafuel_domain::time::perth_instant(date(2026, 9, 29).at(10, 0, 0, 0))
}

fn at(secs: i64) -> Timestamp {
    t0().checked_add(SignedDuration::from_secs(secs)).expect("time")
}

fn snapshot(key: &str, fetched: i64, ttl: i64, quotes: Vec<Quote>) -> Snapshot {
    Snapshot {
        key: key.into(),
        date: date(2026, 9, 29),
        fetched_at: at(fetched),
        expires_at: at(fetched + ttl),
        quotes: Arc::new(quotes),
    }
}

async fn round_trip_and_ttl(store: Arc<dyn SnapshotStore>) {
    assert!(store.load("k").await.expect("load").is_none());
    assert!(store.claim("k", "a", at(0), at(60), false).await.expect("claim"));
    assert!(store.publish(&snapshot("k", 0, 21_600, quotes()), "a", None).await.expect("publish"));
    let loaded = store.load("k").await.expect("load").expect("present");
    assert_eq!(*loaded.quotes, quotes());
    assert_eq!(loaded.fetched_at, at(0));
    assert_eq!(loaded.expires_at, at(21_600));
    assert!(loaded.is_fresh(at(21_599)) && !loaded.is_fresh(at(21_600)));
    // Reads never extend expiry or reset fetchedAt.
    let again = store.load("k").await.expect("load").expect("present");
    assert_eq!((again.fetched_at, again.expires_at), (loaded.fetched_at, loaded.expires_at));
    // A fresh snapshot cannot be claimed for a fill, only forced (the warm job).
    assert!(!store.claim("k", "b", at(10), at(70), false).await.expect("claim"));
    assert!(store.claim("k", "b", at(10), at(70), true).await.expect("forced claim"));
    store.release("k", "b").await.expect("release");
    // Expired: claimable again.
    assert!(store.claim("k", "c", at(21_600), at(21_660), false).await.expect("claim expired"));
    // Publishing without the lease is refused.
    assert!(!store.publish(&snapshot("k", 5, 30, quotes()), "not-the-owner", None).await.expect("publish"));
}

async fn contention(store: Arc<dyn SnapshotStore>) {
    let claims: Vec<_> = (0..8)
        .map(|i| {
            let store = store.clone();
            tokio::spawn(async move {
                store.claim("hot", &format!("owner-{i}"), at(0), at(60), false).await.expect("claim")
            })
        })
        .collect();
    let mut won = 0;
    for c in claims {
        won += usize::from(c.await.expect("task"));
    }
    assert_eq!(won, 1, "exactly one filler wins");
}

async fn fencing_and_takeover(store: Arc<dyn SnapshotStore>) {
    assert!(store.claim("f", "slow", at(0), at(60), false).await.expect("claim"));
    assert!(!store.claim("f", "other", at(59), at(119), false).await.expect("held"));
    // The slow filler's lease expires; another takes over and publishes.
    assert!(store.claim("f", "other", at(60), at(120), false).await.expect("takeover"));
    let newer = snapshot("f", 61, 21_600, quotes());
    assert!(store.publish(&newer, "other", None).await.expect("publish"));
    // The late filler cannot overwrite the newer snapshot.
    let late = snapshot("f", 70, 21_600, quotes()[..1].to_vec());
    assert!(!store.publish(&late, "slow", None).await.expect("fenced"));
    let kept = store.load("f").await.expect("load").expect("present");
    assert_eq!(kept.fetched_at, at(61));
    assert_eq!(kept.quotes.len(), 3);
}

async fn pruning_spares_leases(store: Arc<dyn SnapshotStore>) {
    for (key, ttl) in [("old", 30), ("fresh", 21_600), ("old-leased", 30)] {
        assert!(store.claim(key, "w", at(0), at(60), false).await.expect("claim"));
        assert!(store.publish(&snapshot(key, 0, ttl, quotes()), "w", None).await.expect("publish"));
    }
    assert!(store.claim("old-leased", "x", at(100), at(10_000), true).await.expect("lease"));
    // A lease-only row whose lease ran out (a filler that died).
    assert!(store.claim("orphan", "dead", at(0), at(60), false).await.expect("claim"));
    let pruned = store.prune(at(200), at(100)).await.expect("prune");
    assert_eq!(pruned, 2, "the expired unleased snapshot and the orphan lease");
    assert!(store.load("old").await.expect("load").is_none());
    assert!(store.load("fresh").await.expect("load").is_some());
    assert!(store.load("old-leased").await.expect("load").is_some());
}

async fn job_leases(store: Arc<dyn SnapshotStore>) {
    assert!(store.claim_job("warm:2026-09-29T10", "a", at(0), at(3_600)).await.expect("claim"));
    assert!(!store.claim_job("warm:2026-09-29T10", "b", at(5), at(3_605)).await.expect("held"));
    assert!(store.claim_job("warm:2026-09-29T11", "b", at(3_600), at(7_200)).await.expect("next hour"));
    assert!(store.claim_job("warm:2026-09-29T10", "c", at(3_600), at(7_200)).await.expect("expired"));
    store.ping().await.expect("ping");
}

/// Run one case against both backends.
macro_rules! both {
    ($name:ident) => {
        mod $name {
            use super::*;

            #[tokio::test]
            async fn sqlite() {
                let dir = tempfile::tempdir().expect("dir");
                super::$name(sqlite_store(&dir).await).await;
            }

            #[cfg_attr(
                not(wafuel_postgres),
                ignore = "needs PostgreSQL: set WAFUEL_TEST_POSTGRES (scripts/test does)"
            )]
            #[tokio::test]
            async fn postgres() {
                let url = postgres_url();
                super::$name(postgres_store(&url).await).await;
            }
        }
    };
}

both!(round_trip_and_ttl);
both!(contention);
both!(fencing_and_takeover);
both!(pruning_spares_leases);
both!(job_leases);

/// Overwrite a stored payload with garbage, behind the store's back.
async fn corrupt_sqlite(dir: &tempfile::TempDir, key: &str) {
    use sqlx::Connection;
    let url = format!("sqlite://{}/wafuel.sqlite3", dir.path().display());
    let mut conn = sqlx::SqliteConnection::connect(&url).await.expect("connect");
    sqlx::query("UPDATE snapshots SET payload = x'00ff00ff' WHERE key = $1")
        .bind(key)
        .execute(&mut conn)
        .await
        .expect("corrupt");
}

#[tokio::test]
async fn corrupt_rows_are_deleted_and_refetched_sqlite() {
    let app = TestApp::new().await;
    assert_eq!(app.get("/v1?product=10").await.status, 200);
    assert_eq!(app.source_requests(), 1);
    corrupt_sqlite(&app.dir, "extract:10:2026-09-29").await;
    // Within the recheck interval this replica serves the snapshot it holds decoded,
    // without reading the payload. (Its event reader, polling each second, may by now have
    // heard the replica's own publish and made it confirm the stamp: the row's stamp is
    // untouched, so that check passes too.)
    let held = app.get("/v1?product=10&brand=6").await;
    assert_eq!(held.status, 200);
    assert_eq!(held.header("x-fuel-snapshot-cache"), "HIT");
    assert_eq!(app.source_requests(), 1);
    let store = sqlite_store(&app.dir).await;
    assert!(
        store.load("extract:10:2026-09-29").await.expect("load").is_none(),
        "corrupt row reads as absent (and is deleted)"
    );
    // Past it, the stamp read finds the row gone and the API refetches it (a new selection,
    // so the rendered cache does not answer).
    app.clock.advance(std::time::Duration::from_secs(2));
    let r = app.get("/v1?product=10&brand=5").await;
    assert_eq!(r.status, 200);
    assert_eq!(r.header("x-fuel-snapshot-cache"), "MISS");
    assert_eq!(app.source_requests(), 2);
    assert!(store.load("extract:10:2026-09-29").await.expect("load").is_some());
}

#[cfg_attr(not(wafuel_postgres), ignore = "needs PostgreSQL: set WAFUEL_TEST_POSTGRES (scripts/test does)")]
#[tokio::test]
async fn corrupt_rows_are_deleted_postgres() {
    let url = postgres_url();
    let schema = fresh_schema(&url).await;
    let store = wafuel_store::PostgresStore::connect(&url, Some(&schema)).await.expect("store");
    assert!(store.claim("c", "a", at(0), at(60), false).await.expect("claim"));
    assert!(store.publish(&snapshot("c", 0, 21_600, quotes()), "a", None).await.expect("publish"));
    use sqlx::Connection;
    let mut conn = sqlx::PgConnection::connect(&url).await.expect("connect");
    sqlx::raw_sql(sqlx::AssertSqlSafe(format!(
        "UPDATE {schema}.snapshots SET checksum = 'bad' WHERE key = 'c'"
    )))
    .execute(&mut conn)
    .await
    .expect("corrupt");
    assert!(store.load("c").await.expect("load").is_none());
    // Deleted, so a filler can claim it at once.
    assert!(store.claim("c", "b", at(1), at(61), false).await.expect("claim after delete"));
}

#[tokio::test]
async fn restart_on_the_same_sqlite_file_needs_no_source_request() {
    let app = TestApp::new().await;
    let first = app.get("/v1").await;
    assert_eq!(first.status, 200);
    assert_eq!(app.source_requests(), 7);
    // A new process: new state and caches over the same file.
    let config = app_config(&app.sim, &app.clock, sqlite_store(&app.dir).await, None);
    let restarted = Server::start(config, Default::default()).await;
    let response = restarted.get("/v1").await;
    assert_eq!(response.status, 200);
    assert_eq!(response.header("x-fuel-cache"), "MISS");
    assert_eq!(response.header("x-fuel-snapshot-cache"), "HIT");
    assert_eq!(response.header("etag"), first.header("etag"));
    assert_eq!(app.source_requests(), 7, "served from the stored snapshots");
}

#[tokio::test]
async fn a_held_lease_makes_readers_wait_then_busy() {
    let (sim, clock) = origin_at(fixture_morning(), wafuel_sim::Faults::default()).await;
    let dir = tempfile::tempdir().expect("dir");
    let store = sqlite_store(&dir).await;
    let fill = wafuel_service::snapshot::FillConfig {
        wait_limit: std::time::Duration::from_millis(900),
        first_poll: std::time::Duration::from_millis(100),
        ..Default::default()
    };
    let config = wafuel::app::AppConfig { fill, ..app_config(&sim, &clock, store.clone(), None) };
    let server = Server::start(config, Default::default()).await;
    // Another replica holds the fill lease of the product-4 extract.
    let now = clock.now();
    let until = now.checked_add(SignedDuration::from_secs(60)).expect("t");
    assert!(store.claim("extract:4:2026-09-29", "elsewhere", now, until, false).await.expect("claim"));
    let r = server.get("/v1?product=4").await;
    assert_eq!(r.status, 503);
    assert_eq!(r.header("retry-after"), "2");
    assert_eq!(r.json()["errors"][0]["code"], "cache_refresh_busy");
    assert_eq!(sim.state.request_count(), 0, "the lease holder is fetching, not us");
    // The other replica publishes; readers are served its snapshot.
    let quotes = {
        let client = client_for(&sim, quick_limits());
        client
            .fetch_quotes(
                &[wafuel_source::client::SourceRequest::extract(p(4), wafuel_domain::time::Day::Today)],
                date(2026, 9, 29),
            )
            .await
            .expect("quotes")
    };
    let published = Snapshot {
        key: "extract:4:2026-09-29".into(),
        date: date(2026, 9, 29),
        fetched_at: now,
        expires_at: now.checked_add(SignedDuration::from_hours(6)).expect("t"),
        quotes: Arc::new(quotes),
    };
    assert!(store.publish(&published, "elsewhere", None).await.expect("publish"));
    let r = server.get("/v1?product=4").await;
    assert_eq!(r.status, 200);
    assert_eq!(r.header("x-fuel-snapshot-cache"), "HIT");
    assert_eq!(sim.state.request_count(), 1, "only the other replica's fetch");
}

#[tokio::test]
async fn a_broken_store_is_bypassed() {
    let app = TestApp::new().await;
    drop_sqlite_table(&app.dir, "snapshots").await;
    let r = app.get("/v1?product=1,2").await;
    assert_eq!(r.status, 200, "a price request never fails because of the store");
    assert_eq!(r.header("x-fuel-snapshot-cache"), "BYPASS");
    assert!(!r.json()["data"].as_array().expect("data").is_empty());
}

#[tokio::test]
async fn a_snapshot_fetched_as_tomorrow_serves_today_after_midnight() {
    let app = TestApp::at(date(2026, 9, 29).at(20, 0, 0, 0)).await;
    let evening = app.get("/v1?day=tomorrow&product=2").await;
    assert_eq!(evening.json()["meta"]["sourceDate"], "2026-09-30");
    assert_eq!(app.sim.state.requests()[0].query, "Product=2&Day=tomorrow");
    app.clock.advance(std::time::Duration::from_secs(4 * 3_600 + 1_800)); // 00:30 on the 30th
    let morning = app.get("/v1?day=today&product=2").await;
    assert_eq!(morning.status, 200);
    assert_eq!(morning.json()["meta"]["sourceDate"], "2026-09-30");
    assert_eq!(morning.header("x-fuel-snapshot-cache"), "HIT");
    assert_eq!(morning.header("etag"), evening.header("etag"), "the same document");
    assert_eq!(app.source_requests(), 1, "no new source request after midnight");
}

#[tokio::test]
async fn a_failed_fill_releases_its_lease() {
    let app = TestApp::with(
        fixture_morning(),
        wafuel_sim::Faults { status: Some(403), ..Default::default() },
        None,
    )
    .await;
    assert_eq!(app.get("/v1?product=1").await.status, 502);
    // The lease is free at once (not after 60 s): another replica may try now.
    let store = sqlite_store(&app.dir).await;
    let now = app.clock.now();
    let until = now.checked_add(SignedDuration::from_secs(60)).expect("t");
    assert!(store.claim("extract:1:2026-09-29", "another-replica", now, until, false).await.expect("claim"));
}

/// The application's admin port says ready while its store answers, and not ready once it
/// fails.
#[tokio::test]
async fn readiness_follows_the_store() {
    let app = TestApp::new().await;
    let ready = || async {
        let r =
            http().get(format!("http://{}/readyz", app.server.admin)).send().await.expect("admin answers");
        (r.status().as_u16(), r.text().await.expect("body"))
    };
    assert_eq!(ready().await.0, 200);
    drop_sqlite_table(&app.dir, "snapshots").await;
    let (status, body) = ready().await;
    assert_eq!(status, 503, "{body}");
    assert!(body.starts_with("not ready"));
}

/// Two processes' stores on one SQLite file, both writing enrichment seeds at once: every
/// write transaction takes the write lock before it reads, so neither ever fails with
/// SQLITE_BUSY_SNAPSHOT (a transaction that read, then found another's commit in its way).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_writers_on_one_sqlite_file_never_fail() {
    let dir = tempfile::tempdir().expect("dir");
    let (a, b) = (sqlite_store(&dir).await, sqlite_store(&dir).await);
    let seeds = |round: usize, writer: usize| -> Vec<wafuel_store::enrich::Seed> {
        (0..20)
            .map(|i| wafuel_store::enrich::Seed {
                station_key: format!("station-{i}"),
                name: format!("Station {i} seen by {writer} in round {round}"),
                brand: 5,
                street: format!("{i} Main St"),
                suburb: "PERTH".into(),
                latitude: -31.95,
                longitude: 115.86,
            })
            .collect()
    };
    let write = |store: Arc<dyn wafuel_store::Store>, writer: usize| async move {
        for round in 0..60 {
            store.upsert_seeds(&seeds(round, writer)).await.map_err(|e| format!("round {round}: {e}"))?;
        }
        Ok::<(), String>(())
    };
    let (ra, rb) = tokio::join!(tokio::spawn(write(a, 0)), tokio::spawn(write(b, 1)));
    assert_eq!(ra.expect("writer a"), Ok(()));
    assert_eq!(rb.expect("writer b"), Ok(()));
}

/// The rows a store as the previous version left it holds under an old joined key
/// (`filtered:…s=NORTHAM|YORK…`, which `suburb=NORTHAM|YORK` and `suburb=NORTHAM,YORK`
/// shared) and under a catalog key, before and after it is opened by this version.
const OLD_KEY: &str = "filtered:p=1;b=*;r=*;s=NORTHAM|YORK;sur=-;d=2026-09-29";
const CATALOG_KEY: &str = "extract:1:2026-09-29";

const KEYS: &str = "SELECT key FROM snapshots ORDER BY key";

#[tokio::test]
async fn an_upgrade_drops_snapshots_under_the_old_joined_keys_on_sqlite() {
    use sqlx::sqlite::{SqliteConnectOptions, SqlitePool};
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("wafuel.sqlite3");
    let options = SqliteConnectOptions::new().filename(&path).create_if_missing(true);
    let pool = SqlitePool::connect_with(options).await.expect("sqlite");
    let migrator = sqlx::migrate::Migrator::new(std::path::Path::new("crates/store/migrations/sqlite"))
        .await
        .expect("migrations");
    migrator.run_to(8, &pool).await.expect("the previous version's schema");
    for key in [OLD_KEY, CATALOG_KEY] {
        sqlx::query("INSERT INTO snapshots (key) VALUES ($1)").bind(key).execute(&pool).await.expect("row");
    }
    let keys = || sqlx::query_scalar::<_, String>(KEYS);
    assert_eq!(keys().fetch_all(&pool).await.expect("keys"), [CATALOG_KEY, OLD_KEY]);
    pool.close().await;
    let _store = wafuel_store::open(&format!("sqlite://{}", path.display())).await.expect("upgraded");
    let pool = SqlitePool::connect_with(SqliteConnectOptions::new().filename(&path)).await.expect("sqlite");
    let left = keys().fetch_all(&pool).await.expect("keys");
    assert_eq!(left, [CATALOG_KEY], "the poisoned row is gone, the catalog's kept");
}

#[cfg_attr(not(wafuel_postgres), ignore = "needs PostgreSQL: set WAFUEL_TEST_POSTGRES (scripts/test does)")]
#[tokio::test]
async fn an_upgrade_drops_snapshots_under_the_old_joined_keys_on_postgres() {
    use sqlx::Connection;
    let url = postgres_url();
    let schema = fresh_schema(&url).await;
    let mut conn = sqlx::PgConnection::connect(&url).await.expect("postgres");
    sqlx::raw_sql(sqlx::AssertSqlSafe(format!("SET search_path TO {schema}")))
        .execute(&mut conn)
        .await
        .expect("schema");
    let migrator = sqlx::migrate::Migrator::new(std::path::Path::new("crates/store/migrations/postgres"))
        .await
        .expect("migrations");
    migrator.run_to(8, &mut conn).await.expect("the previous version's schema");
    for key in [OLD_KEY, CATALOG_KEY] {
        sqlx::query("INSERT INTO snapshots (key) VALUES ($1)")
            .bind(key)
            .execute(&mut conn)
            .await
            .expect("row");
    }
    let keys = || sqlx::query_scalar::<_, String>(KEYS);
    assert_eq!(keys().fetch_all(&mut conn).await.expect("keys"), [CATALOG_KEY, OLD_KEY]);
    let _store = wafuel_store::PostgresStore::connect(&url, Some(&schema)).await.expect("upgraded");
    let left = keys().fetch_all(&mut conn).await.expect("keys");
    assert_eq!(left, [CATALOG_KEY], "the poisoned row is gone, the catalog's kept");
}
