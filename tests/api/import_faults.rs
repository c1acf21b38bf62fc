//! `import-history` when things break: killed with SIGKILL in the middle of a month and run
//! again, it ends with exactly the rows of a clean import; when PostgreSQL goes away in the
//! middle of an import, it stops naming the month it was writing, and the re-run resumes.

use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use sqlx::Connection;
use wafuel_archive::ImportError;
use wafuel_archive::import::{Importer, Plan};
use wafuel_store::Store;

use crate::support::*;

/// What an import leaves in the history, by station id (sids are numbers a store gives out;
/// PostgreSQL's sequences do not roll back).
const DUMP: [&str; 6] = [
    "SELECT h.station_id || '|' || m.product || '|' || m.month || '|' || m.prices FROM station_months m \
     JOIN history_stations h ON h.sid = m.sid ORDER BY 1",
    "SELECT product || '|' || day || '|' || length(pairs) FROM price_days ORDER BY 1",
    "SELECT product || '|' || day || '|' || stations || '|' || min || '|' || p10 || '|' || median || '|' || mean \
     || '|' || p90 || '|' || max FROM day_summaries ORDER BY 1",
    "SELECT product || '|' || period || '|' || start || '|' || days || '|' || stations || '|' || min || '|' || max \
     || '|' || p10_sum || '|' || median_sum || '|' || mean_sum || '|' || p90_sum FROM period_summaries ORDER BY 1",
    "SELECT station_id || '|' || brand || '|' || first_seen || '|' || last_seen || '|' || COALESCE(region, -1) \
     || '|' || archive FROM history_stations ORDER BY 1",
    "SELECT month || '|' || rows || '|' || COALESCE(file_date, '') || '|' || COALESCE(bytes, -1) \
     FROM history_imports ORDER BY 1",
];

async fn sqlite_dump(path: &std::path::Path) -> Vec<Vec<String>> {
    let mut conn =
        sqlx::SqliteConnection::connect(&format!("sqlite://{}", path.display())).await.expect("open");
    let mut out = Vec::new();
    for q in DUMP {
        out.push(sqlx::query_scalar::<_, String>(q).fetch_all(&mut conn).await.expect("dump"));
    }
    out
}

async fn months_recorded(path: &std::path::Path) -> i64 {
    let Ok(mut conn) = sqlx::SqliteConnection::connect(&format!("sqlite://{}?mode=ro", path.display())).await
    else {
        return 0;
    };
    sqlx::query_scalar("SELECT COUNT(*) FROM history_imports").fetch_one(&mut conn).await.unwrap_or(0)
}

/// `wafuel import-history` of July to September 2026 from `sim` into the SQLite file `path`.
fn import_process(sim: &wafuel_sim::SimHandle, path: &std::path::Path) -> std::process::Child {
    Command::new(env!("CARGO_BIN_EXE_wafuel"))
        .args(["import-history", "--from", "2026-07", "--to", "2026-09", "--log-format", "json"])
        .args(["--store", &format!("sqlite://{}", path.display())])
        .args(["--source-url", &sim.feed_url(), "--archive-list-url", &sim.archive_list_url()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("import-history starts")
}

/// Wait for the process without holding up the origin, which runs on this test's runtime.
fn wait(child: &mut std::process::Child) -> std::process::ExitStatus {
    tokio::task::block_in_place(|| crate::process::wait_with_timeout(child, Duration::from_secs(300)))
}

#[cfg_attr(
    not(wafuel_slow),
    ignore = "slow tier (browser, deployment, spawned processes): WAFUEL_SLOW_TESTS=1, as scripts/test sets"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_import_killed_mid_month_and_run_again_has_exactly_the_rows_of_a_clean_one() {
    let (sim, _clock) = origin_at(fixture_morning(), Default::default()).await;
    let dir = tempfile::tempdir().expect("dir");
    let clean = dir.path().join("clean.sqlite3");
    assert!(wait(&mut import_process(&sim, &clean)).success(), "the clean import");

    let killed = dir.path().join("killed.sqlite3");
    let mut child = import_process(&sim, &killed);
    let deadline = Instant::now() + Duration::from_secs(240);
    while months_recorded(&killed).await < 1 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // Into the next month: downloading, reading or writing it.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let recorded = months_recorded(&killed).await;
    child.kill().expect("SIGKILL");
    assert!(!wait(&mut child).success());
    assert!((1..3).contains(&recorded), "killed with {recorded} of 3 months recorded");

    assert!(wait(&mut import_process(&sim, &killed)).success(), "the re-run");
    let (got, want) = (sqlite_dump(&killed).await, sqlite_dump(&clean).await);
    assert!(want[0].len() > 3 * 900, "prices of three months: {}", want[0].len());
    for (i, (got, want)) in got.iter().zip(&want).enumerate() {
        assert!(got == want, "{}: {} rows against {} of a clean import", DUMP[i], got.len(), want.len());
    }
}

/// A database of its own, so that the test can take it away.
async fn fresh_database(admin: &str) -> (String, String) {
    let name = format!("wafuel_gone_{}", std::process::id());
    let mut conn = sqlx::PgConnection::connect(admin).await.expect("postgres");
    for statement in
        [format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"), format!("CREATE DATABASE {name}")]
    {
        sqlx::raw_sql(sqlx::AssertSqlSafe(statement)).execute(&mut conn).await.expect("database");
    }
    let url = format!("{}/{name}", admin.rsplit_once('/').map_or(admin, |(base, _)| base));
    (name, url)
}

/// Refuse new connections to `name` and end the open ones (or allow them again).
async fn take_away(admin: &str, name: &str, gone: bool) {
    let mut conn = sqlx::PgConnection::connect(admin).await.expect("postgres");
    let allow = if gone { "false" } else { "true" };
    sqlx::raw_sql(sqlx::AssertSqlSafe(format!("ALTER DATABASE {name} ALLOW_CONNECTIONS {allow}")))
        .execute(&mut conn)
        .await
        .expect("alter");
    if gone {
        sqlx::query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1")
            .bind(name)
            .execute(&mut conn)
            .await
            .expect("terminate");
    }
}

#[cfg_attr(
    any(not(wafuel_slow), not(wafuel_postgres)),
    ignore = "slow tier and PostgreSQL: WAFUEL_SLOW_TESTS=1 and WAFUEL_TEST_POSTGRES, as scripts/test sets"
)]
#[tokio::test]
async fn postgres_going_away_mid_import_stops_it_naming_the_month_and_the_rerun_resumes() {
    let url = postgres_url();
    let (sim, clock) = origin_at(fixture_morning(), Default::default()).await;
    let (list, base): (url::Url, url::Url) =
        (sim.archive_list_url().parse().expect("url"), sim.archive_url().parse().expect("url"));
    let today = {
        use wafuel_domain::time::Clock;
        wafuel_domain::time::perth_now(clock.now()).date()
    };
    let range = (Some((2026, 7)), Some((2026, 9)));
    let plan = Plan::make(&list, &base, range, today, Default::default()).await;
    let (name, db) = fresh_database(&url).await;
    let store: Arc<dyn Store> =
        Arc::new(wafuel_store::PostgresStore::connect(&db, None).await.expect("store"));
    let mut importer = Importer::new(store.clone()).await.expect("importer");

    // The database goes away once the first month is in.
    let watcher = {
        let (store, url, name) = (store.clone(), url.clone(), name.clone());
        tokio::spawn(async move {
            while store.imported_months().await.map_or(0, |m| m.len()) < 1 {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            take_away(&url, &name, true).await;
        })
    };
    let err =
        plan.run(&mut importer, Default::default(), &|_, _| {}).await.expect_err("the database went away");
    watcher.await.expect("watcher");
    let text = err.to_string();
    assert!(matches!(err, ImportError::Write { .. }), "{text}");
    assert!(
        text.starts_with("FuelWatchRetail-08-2026.csv: ")
            || text.starts_with("FuelWatchRetail-09-2026.csv: "),
        "the month being written is named: {text}"
    );
    drop(importer);
    drop(store);

    // Back: the re-run skips what was recorded and imports the rest.
    take_away(&url, &name, false).await;
    let store: Arc<dyn Store> =
        Arc::new(wafuel_store::PostgresStore::connect(&db, None).await.expect("store"));
    let mut again = Importer::new(store.clone()).await.expect("importer");
    plan.run(&mut again, Default::default(), &|_, _| {}).await.expect("the re-run");
    assert!(again.summary.already_imported >= 1, "{:?}", again.summary);
    assert_eq!(again.summary.files + again.summary.already_imported, 3);
    let months = store.imported_months().await.expect("months");
    assert_eq!(months.len(), 3);

    // Exactly a clean import's rows.
    let clean_store = postgres_store(&url).await;
    let mut clean = Importer::new(clean_store.clone()).await.expect("importer");
    plan.run(&mut clean, Default::default(), &|_, _| {}).await.expect("clean");
    let september = (jiff::civil::date(2026, 9, 1), jiff::civil::date(2026, 9, 29));
    for product in [1, 4] {
        let got = store.market(p(product), september.0, september.1).await.expect("market");
        let want = clean_store.market(p(product), september.0, september.1).await.expect("market");
        let prices = |rows: &wafuel_store::history::MarketRows| {
            let mut by_id: Vec<(jiff::civil::Date, String, i64)> = rows
                .prices()
                .into_iter()
                .filter_map(|(d, sid, p)| Some((d, rows.stations.get(&sid)?.station_id.clone(), p)))
                .collect();
            by_id.sort();
            by_id
        };
        assert_eq!(prices(&got), prices(&want), "product {product}");
        assert!(!prices(&want).is_empty());
    }
    drop(store);
    let mut conn = sqlx::PgConnection::connect(&url).await.expect("postgres");
    let _ = sqlx::raw_sql(sqlx::AssertSqlSafe(format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)")))
        .execute(&mut conn)
        .await;
}
