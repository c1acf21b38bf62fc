//! Long ranges from summaries written with the prices: statewide statistics read from the
//! stored day figures and period counts equal those computed from every stored day, for any
//! window (cut weeks and months included) and after pruning; a store of the schema before
//! summaries keeps every answer when it is migrated; on SQLite and PostgreSQL.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use jiff::civil::{Date, date};
use wafuel_archive::import::{Importer, Plan};
use wafuel_domain::stats::{Interval, Market, Periods};
use wafuel_service::catalog::market::{MarketDays, StationFilter, market, periods};
use wafuel_service::memo::Recheck;
use wafuel_store::Store;

use crate::support::*;

/// Two months of the simulated archive (August and September 2026 up to the 29th).
async fn two_months(store: Arc<dyn Store>) {
    let (sim, clock) = origin_at(fixture_morning(), Default::default()).await;
    let list_url: url::Url = sim.archive_list_url().parse().expect("url");
    let base: url::Url = sim.archive_url().parse().expect("url");
    let today = {
        use wafuel_domain::time::Clock;
        wafuel_domain::time::perth_now(clock.now()).date()
    };
    let plan = Plan::make(&list_url, &base, (Some((2026, 8)), None), today, Default::default()).await;
    let mut importer = Importer::new(store).await.expect("importer");
    plan.run(&mut importer, Default::default(), &|_, _| {}).await.expect("import");
    assert_eq!(importer.summary.files, 2);
}

/// What statistics say from every stored day: the per-day path for days, the day-by-day fold
/// for weeks and months.
async fn from_days(
    store: &Arc<dyn Store>,
    product: u8,
    (from, to): (Date, Date),
    interval: Interval,
) -> Market {
    let all = StationFilter::default();
    if interval == Interval::Day {
        let rows = store.market(p(product), from, to).await.expect("days");
        market(&rows, all)
    } else {
        periods(store.as_ref(), (p(product), from, to), interval, all).await.expect("periods")
    }
}

/// Windows whole and cut: the whole span, from a Wednesday to a Tuesday, a fortnight inside a
/// month, from the 31st, one day.
fn windows() -> Vec<(Date, Date)> {
    vec![
        (date(2026, 8, 1), date(2026, 9, 29)),
        (date(2026, 8, 5), date(2026, 9, 15)),
        (date(2026, 8, 13), date(2026, 8, 27)),
        (date(2026, 8, 31), date(2026, 9, 29)),
        (date(2026, 9, 7), date(2026, 9, 7)),
        (date(2026, 7, 1), date(2026, 12, 31)),
    ]
}

async fn assert_summaries_equal_days(store: &Arc<dyn Store>, note: &str) {
    let held = MarketDays::new(store.clone(), Recheck::every(Duration::ZERO));
    let now = jiff::Timestamp::now();
    for product in [1, 4] {
        for window in windows() {
            for interval in [Interval::Day, Interval::Week, Interval::Month] {
                let summed =
                    held.statewide((p(product), window.0, window.1), interval, now).await.expect("summaries");
                let counted = from_days(store, product, window, interval).await;
                assert!(!counted.days.is_empty() || window.0 == window.1, "{note}: data in {window:?}");
                assert_eq!(summed, counted, "{note}: product {product}, {window:?}, {interval:?}");
            }
        }
    }
}

async fn summaries_equal_days(store: Arc<dyn Store>) {
    two_months(store.clone()).await;
    assert_summaries_equal_days(&store, "imported").await;
    // Pruning mid-month and mid-week: what stays answers as its days do.
    let pruned = store.prune_history(date(2026, 8, 20)).await.expect("prune");
    assert!(pruned > 1000, "{pruned}");
    assert_summaries_equal_days(&store, "pruned").await;
    let stations = store.stations().await.expect("stations");
    let (sid, station) = stations.iter().next().expect("a station");
    let history = store
        .station_history(&station.station_id, p(1), date(2026, 1, 1), date(2026, 12, 31))
        .await
        .expect("history")
        .expect("has ULP");
    assert!(
        history.first().is_some_and(|(d, _)| *d == date(2026, 8, 20)),
        "sid {sid}: {:?}",
        history.first()
    );
    assert_eq!(history.last().map(|(d, _)| *d), Some(date(2026, 9, 29)));
}

#[tokio::test]
async fn statewide_statistics_from_summaries_equal_those_of_the_days_on_sqlite() {
    let dir = tempfile::tempdir().expect("dir");
    summaries_equal_days(sqlite_store(&dir).await).await;
}

#[cfg_attr(not(wafuel_postgres), ignore = "needs PostgreSQL: set WAFUEL_TEST_POSTGRES (scripts/test does)")]
#[tokio::test]
async fn statewide_statistics_from_summaries_equal_those_of_the_days_on_postgres() {
    let url = postgres_url();
    summaries_equal_days(postgres_store(&url).await).await;
}

/// Prices of a store written in the schema before summaries: (sid, product, day, tenths).
fn old_prices() -> Vec<(i64, i64, Date, i64)> {
    let mut out = Vec::new();
    let mut d = date(2026, 6, 20);
    while d <= date(2026, 8, 12) {
        for sid in 1..=40_i64 {
            for product in [1_i64, 4] {
                // A station skips some days; prices move with the day and the station.
                if (sid + i64::from(d.day())) % 7 == 0 && product == 4 {
                    continue;
                }
                let price = 1700 + product * 50 + sid * 3 + i64::from(d.day() % 9) * 11 - (sid % 5) * 7;
                out.push((sid, product, d, price));
            }
        }
        d = d.tomorrow().expect("date");
    }
    out
}

fn day_number(d: Date) -> i64 {
    i64::from(d.year()) * 10_000 + i64::from(d.month()) * 100 + i64::from(d.day())
}

/// SQL filling the old schema (`price_history`, `price_days`, `history_stations`): the test's
/// own numbers, written as literals.
fn old_rows() -> String {
    let mut sql = String::new();
    for sid in 1..=40_i64 {
        sql.push_str(&format!(
            "INSERT INTO history_stations (sid, station_id, brand, details, first_seen, last_seen) \
             VALUES ({sid}, '{sid:064x}', {}, '{{}}', 20260620, 20260812);\n",
            sid % 4
        ));
    }
    let mut days: BTreeMap<(i64, i64), Vec<(i64, i64)>> = BTreeMap::new();
    for (sid, product, d, price) in old_prices() {
        sql.push_str(&format!(
            "INSERT INTO price_history (product, day, sid, price) VALUES ({product}, {}, {sid}, {price});\n",
            day_number(d)
        ));
        days.entry((product, day_number(d))).or_default().push((sid, price));
    }
    for ((product, day), pairs) in days {
        let text: Vec<String> = pairs.iter().map(|(s, p)| format!("{s}:{p}")).collect();
        sql.push_str(&format!(
            "INSERT INTO price_days (product, day, pairs) VALUES ({product}, {day}, '{}');\n",
            text.join(",")
        ));
    }
    sql
}

/// The answers the old store's prices give, computed from them directly.
async fn assert_answers_kept(store: &Arc<dyn Store>) {
    let prices = old_prices();
    for sid in [1_i64, 7, 40] {
        for product in [1_u8, 4] {
            let want: Vec<(Date, i64)> = prices
                .iter()
                .filter(|(s, p, ..)| *s == sid && *p == i64::from(product))
                .map(|(_, _, d, price)| (*d, *price))
                .collect();
            let got = store
                .station_history(&format!("{sid:064x}"), p(product), date(2026, 1, 1), date(2026, 12, 31))
                .await
                .expect("history")
                .expect("known");
            assert_eq!(got, want, "station {sid}, product {product}");
        }
    }
    let held = MarketDays::new(store.clone(), Recheck::every(Duration::ZERO));
    for product in [1_u8, 4] {
        let ids: Vec<String> = (0..=40).map(|sid: i64| format!("{sid:064x}")).collect();
        let mut by_day: BTreeMap<Date, Vec<(&str, i64)>> = BTreeMap::new();
        for (sid, p, d, price) in &prices {
            if *p == i64::from(product) {
                by_day.entry(*d).or_default().push((ids[*sid as usize].as_str(), *price));
            }
        }
        for (from, to) in [(date(2026, 6, 20), date(2026, 8, 12)), (date(2026, 7, 3), date(2026, 7, 30))] {
            let days: Vec<(Date, Vec<(&str, i64)>)> = by_day
                .iter()
                .filter(|(d, _)| (from..=to).contains(*d))
                .map(|(d, p)| (*d, p.clone()))
                .collect();
            let now = jiff::Timestamp::now();
            let daily = held.statewide((p(product), from, to), Interval::Day, now).await.expect("days");
            assert_eq!(daily, Market::of_days(&days), "daily {product} {from}..{to}");
            for interval in [Interval::Week, Interval::Month] {
                let mut folded = Periods::new(interval, 365);
                for (d, p) in &days {
                    folded.add(*d, p);
                }
                let got = held.statewide((p(product), from, to), interval, now).await.expect("periods");
                assert_eq!(got, folded.finish(), "{interval:?} {product} {from}..{to}");
            }
        }
    }
}

/// Migrations 1–7 only: the schema before summaries.
fn old_migrator(all: sqlx::migrate::Migrator) -> sqlx::migrate::Migrator {
    let mut old = all;
    old.migrations =
        std::borrow::Cow::Owned(old.migrations.iter().filter(|m| m.version <= 7).cloned().collect());
    old
}

#[tokio::test]
async fn a_store_migrated_to_summaries_keeps_every_answer_on_sqlite() {
    let dir = tempfile::tempdir().expect("dir");
    let url = format!("sqlite://{}/old.sqlite3?mode=rwc", dir.path().display());
    {
        let pool = sqlx::SqlitePool::connect(&url).await.expect("old store");
        old_migrator(sqlx::migrate!("crates/store/migrations/sqlite")).run(&pool).await.expect("old schema");
        sqlx::raw_sql(sqlx::AssertSqlSafe(old_rows())).execute(&pool).await.expect("old rows");
        pool.close().await;
    }
    let store: Arc<dyn Store> = Arc::new(wafuel_store::SqliteStore::open(&url).await.expect("migrated"));
    assert_answers_kept(&store).await;
}

#[cfg_attr(not(wafuel_postgres), ignore = "needs PostgreSQL: set WAFUEL_TEST_POSTGRES (scripts/test does)")]
#[tokio::test]
async fn a_store_migrated_to_summaries_keeps_every_answer_on_postgres() {
    let url = postgres_url();
    let schema = fresh_schema(&url).await;
    {
        let search = format!("SET search_path TO {schema}");
        let pool = sqlx::postgres::PgPoolOptions::new()
            .max_connections(1)
            .after_connect(move |conn, _| {
                let search = sqlx::AssertSqlSafe(search.clone());
                Box::pin(async move {
                    sqlx::raw_sql(search).execute(conn).await?;
                    Ok(())
                })
            })
            .connect(&url)
            .await
            .expect("old store");
        old_migrator(sqlx::migrate!("crates/store/migrations/postgres"))
            .run(&pool)
            .await
            .expect("old schema");
        sqlx::raw_sql(sqlx::AssertSqlSafe(old_rows())).execute(&pool).await.expect("old rows");
        pool.close().await;
    }
    let store: Arc<dyn Store> =
        Arc::new(wafuel_store::PostgresStore::connect(&url, Some(&schema)).await.expect("migrated"));
    assert_answers_kept(&store).await;
}
