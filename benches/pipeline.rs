//! Measurements for scripts/bench (targets in docs/benchmarks.md). Not a test: it prints numbers.
//!
//! `cargo bench --bench pipeline -- pipeline` times, on the seven statewide feeds of the
//! simulated source: quick-xml alone reading the bytes, the cold catalog build (parse,
//! validate, normalise, render the identity JSON), and the gzip + brotli publish.
//! `cargo bench --bench pipeline -- burst N URL...` sends N concurrent GETs spread over the
//! URLs and prints the status counts.
//! `cargo bench --bench pipeline -- nearby` times an uncached nearby answer (filter by
//! distance, sort by price, render) over the statewide catalog of all seven products.
//! `cargo bench --bench pipeline -- history DIR` fills a SQLite store in DIR with three years
//! of every station's prices (all products), then times one station's three-year history and
//! a 90-day statewide statistics document (read, compute, render).

use std::time::{Duration, Instant};

use jiff::civil::date;
use quick_xml::Reader;
use quick_xml::events::Event;
use wafuel_domain::codes::product_codes;
use wafuel_domain::documents::{DocumentMeta, PriceDoc, PublicationStatus, Scope, price_rows};
use wafuel_domain::station::Quote;
use wafuel_domain::time::{ManualClock, perth_instant};
use wafuel_query::{Dialect, parse_selection};
use wafuel_sim::{Faults, SimState};
use wafuel_source::rss;
use wafuel_source::validate::{Component, validate};
use wafuel_web::render::jsonapi;
use wafuel_web::render::representation::{Coding, Representation};

/// The allocator the service is built with (src/main.rs), so the build is timed as it runs.
#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn time<T>(runs: usize, mut f: impl FnMut() -> T) -> Duration {
    let mut samples = Vec::with_capacity(runs);
    for _ in 0..runs {
        let started = Instant::now();
        std::hint::black_box(f());
        samples.push(started.elapsed());
    }
    median(samples)
}

fn pipeline() {
    let now = date(2026, 9, 29).at(10, 0, 0, 0);
    let state = SimState::new(ManualClock::at_perth(now), Faults::default()).expect("data set");
    let feeds: Vec<(wafuel_domain::codes::ProductCode, String)> = product_codes()
        .map(|p| {
            (p, String::from_utf8(state.feed_body(&format!("Product={p}&Day=today"), None)).expect("utf8"))
        })
        .collect();
    let bytes: usize = feeds.iter().map(|(_, f)| f.len()).sum();
    let runs = 30;

    let xml_only = time(runs, || {
        let mut events = 0usize;
        for (_, feed) in &feeds {
            let mut reader = Reader::from_str(feed);
            loop {
                match reader.read_event() {
                    Ok(Event::Eof) | Err(_) => break,
                    Ok(_) => events += 1,
                }
            }
        }
        events
    });

    let selection = parse_selection(Dialect::V1, "", perth_instant(now)).expect("selection");
    let meta = DocumentMeta::default();
    let no_enrichment = std::collections::HashMap::new();
    let render = |all: &[Vec<Quote>]| {
        // Grouping quotes into rows is the catalog's work, timed here with the bytes.
        let scope =
            Scope { date: selection.date, products: selection.products.clone(), expand: selection.expand };
        let rows = price_rows(all.iter().flatten(), &scope.date.to_string());
        jsonapi::render(&PriceDoc {
            scope,
            rows,
            fetched_at: perth_instant(now),
            status: PublicationStatus::Available,
            meta: &meta,
            enrichment: no_enrichment.clone(),
        })
        .expect("render")
    };
    let validate_one = |product: wafuel_domain::codes::ProductCode, feed: &str| {
        let parsed = rss::parse(feed).expect("feed");
        validate(&[Component { product, feed: parsed }], date(2026, 9, 29)).expect("valid")
    };
    let build = || {
        // Cold: nothing remembered from the previous run.
        wafuel_domain::normalize::clear_memo();
        // One extract per product, validated separately, as the service does.
        let mut all: Vec<Vec<Quote>> = Vec::with_capacity(feeds.len());
        for (product, feed) in &feeds {
            all.push(validate_one(*product, feed));
        }
        render(&all)
    };
    let cold = time(runs, build);
    // The same, in a process that has met these phone numbers before (libphonenumber's
    // validation of each distinct number is most of a cold build; the service remembers
    // its results for the life of the process).
    let phones_known = time(runs, || {
        wafuel_domain::normalize::clear_station_memo();
        let all: Vec<Vec<Quote>> = feeds.iter().map(|(product, feed)| validate_one(*product, feed)).collect();
        render(&all)
    });
    println!("cold_build_phones_known_ms {:.3}", phones_known.as_secs_f64() * 1e3);
    // The service validates the seven extracts concurrently (one task each on the runtime's
    // workers); the same build with one thread per feed.
    let build_parallel = || {
        wafuel_domain::normalize::clear_memo();
        let all: Vec<Vec<Quote>> = std::thread::scope(|scope| {
            let handles: Vec<_> = feeds
                .iter()
                .map(|(product, feed)| {
                    let validate_one = &validate_one;
                    scope.spawn(move || validate_one(*product, feed))
                })
                .collect();
            handles.into_iter().map(|h| h.join().expect("thread")).collect()
        });
        render(&all)
    };
    let cold_parallel = time(runs, build_parallel);
    println!("cold_build_parallel_ms {:.3}", cold_parallel.as_secs_f64() * 1e3);
    let parse_only =
        time(runs, || feeds.iter().map(|(_, f)| rss::parse(f).expect("feed").items.len()).sum::<usize>());
    let parsed: Vec<(wafuel_domain::codes::ProductCode, rss::Feed)> =
        feeds.iter().map(|(p, f)| (*p, rss::parse(f).expect("feed"))).collect();
    let validate_only = time(runs, || {
        parsed
            .iter()
            .map(|(p, f)| {
                validate(&[Component { product: *p, feed: f.clone() }], date(2026, 9, 29))
                    .expect("valid")
                    .len()
            })
            .sum::<usize>()
    });
    let records: Vec<_> = parsed.iter().flat_map(|(_, f)| f.items.iter().cloned()).collect();
    let phones = time(runs, || {
        records.iter().fold(0usize, |n, r| {
            std::hint::black_box(wafuel_domain::phone::normalize_phone(r.phone.as_deref().unwrap_or("")));
            n + 1
        })
    });
    let features = time(runs, || {
        records.iter().fold(0usize, |n, r| {
            std::hint::black_box(wafuel_domain::site_features::parse_site_features(
                r.site_features.as_deref().unwrap_or(""),
            ));
            n + 1
        })
    });
    println!("parse_only_ms {:.3}", parse_only.as_secs_f64() * 1e3);
    println!("validate_only_ms {:.3}", validate_only.as_secs_f64() * 1e3);
    println!("phones_ms {:.3}", phones.as_secs_f64() * 1e3);
    println!("features_ms {:.3}", features.as_secs_f64() * 1e3);
    let document = build();
    // Both codings, as the first gzip and the first brotli client of a document make them.
    let publish = time(runs, || {
        let r = Representation::build(document.clone());
        (r.body(Coding::Gzip).len(), r.body(Coding::Br).len())
    });
    let repr = Representation::build(document.clone());

    println!("feeds_bytes {bytes}");
    println!("document_bytes {}", document.len());
    println!("gzip_bytes {}", repr.body(Coding::Gzip).len());
    println!("br_bytes {}", repr.body(Coding::Br).len());
    println!("xml_only_ms {:.3}", xml_only.as_secs_f64() * 1e3);
    println!("cold_build_ms {:.3}", cold.as_secs_f64() * 1e3);
    println!("publish_ms {:.3}", publish.as_secs_f64() * 1e3);
}

/// The seven statewide extracts of one day, validated, as the service holds them.
fn catalog(now: jiff::civil::DateTime) -> Vec<Quote> {
    let state = SimState::new(ManualClock::at_perth(now), Faults::default()).expect("data set");
    product_codes()
        .flat_map(|p| {
            let body =
                String::from_utf8(state.feed_body(&format!("Product={p}&Day=today"), None)).expect("utf8");
            let parsed = rss::parse(&body).expect("feed");
            validate(&[Component { product: p, feed: parsed }], now.date()).expect("valid")
        })
        .collect()
}

fn nearby() {
    let now = date(2026, 9, 29).at(10, 0, 0, 0);
    let quotes = catalog(now);
    let refs: Vec<&Quote> = quotes.iter().collect();
    let meta = DocumentMeta::default();
    let no_profiles = wafuel_service::catalog::ProfileMap::default();
    // Distinct points over the metro area, so nothing could be reused between queries.
    let points: Vec<(f64, f64)> =
        (0..200).map(|i| (-32.2 + (i % 20) as f64 * 0.025, 115.7 + (i / 20) as f64 * 0.03)).collect();
    // Rows and the JSON:API document of nearby quotes, as the service writes them.
    let render = |query: &wafuel_query::stations::StationsQuery, base: &[&Quote]| {
        use wafuel_domain::documents::{Circle, NextDay, StationsDoc};
        let open_at = now;
        let showing = wafuel_service::catalog::search::Showing {
            open_at,
            profiles: &no_profiles,
            now: perth_instant(now),
        };
        let rows = wafuel_service::catalog::search::station_rows(query, None, base, None, showing);
        let selection = &query.selection;
        let doc = StationsDoc {
            scope: Scope {
                date: selection.date,
                products: selection.products.clone(),
                expand: selection.expand,
            },
            near: query.near.map(|centre| Circle { centre, radius_m: query.radius_m }),
            route: None,
            stop: None,
            rows,
            fetched_at: perth_instant(now),
            status: PublicationStatus::Available,
            next: NextDay { date: selection.date, status: PublicationStatus::NotYetPublished },
            meta: &meta,
            one: false,
            missing: None,
            open_at,
            discounts: None,
            unknown_suburbs: None,
        };
        wafuel_web::render::stations::render_jsonapi(&doc).expect("render").len()
    };
    let mut k = 0;
    let one = || {
        k = (k + 1) % points.len();
        let (lat, lon) = points[k];
        let raw = format!("near={lat:.4},{lon:.4}&product=1&sort=price&limit=20");
        let query = wafuel_query::stations::parse_stations(&raw, perth_instant(now)).expect("query");
        let base: Vec<&Quote> = refs.iter().copied().filter(|q| q.product == 1).collect();
        render(&query, &base)
    };
    let took = time(1000, one);
    // The same queries through the day catalog's grid (as the service answers them): only
    // the stations in the cells around the point are measured and ranked.
    let snapshot = std::sync::Arc::new(wafuel_store::Snapshot {
        key: "extract:1:2026-09-29".into(),
        date: date(2026, 9, 29),
        fetched_at: perth_instant(now),
        expires_at: perth_instant(now),
        quotes: std::sync::Arc::new(quotes.iter().filter(|q| q.product == 1).cloned().collect()),
    });
    let day = wafuel_service::catalog::DayCatalog::new(snapshot);
    let mut k = 0;
    let grid = || {
        k = (k + 1) % points.len();
        let (lat, lon) = points[k];
        let raw = format!("near={lat:.4},{lon:.4}&product=1&sort=price&limit=20");
        let query = wafuel_query::stations::parse_stations(&raw, perth_instant(now)).expect("query");
        let near = query.near.expect("near");
        let base = day.near(near, query.radius_m);
        render(&query, &base)
    };
    let took_grid = time(1000, grid);
    println!("catalog_quotes {}", quotes.len());
    println!("nearby_uncached_ms {:.4}", took.as_secs_f64() * 1e3);
    println!("nearby_grid_ms {:.4}", took_grid.as_secs_f64() * 1e3);
}

async fn history(dir: &str) {
    use wafuel_store::history::HistoryStore;
    let now = date(2026, 9, 29).at(10, 0, 0, 0);
    let quotes = catalog(now);
    let url = format!("sqlite://{dir}/history.sqlite3");
    let store = wafuel_store::SqliteStore::open(&url).await.expect("store");
    let days = 1096;
    let first = date(2026, 9, 29).checked_sub(jiff::Span::new().days(days - 1)).expect("date");
    let filled = Instant::now();
    let mut rows = 0u64;
    // Ten days (70 extracts) a write, as a bulk load does.
    for chunk_start in (0..days).step_by(10) {
        let mut batch: Vec<(wafuel_domain::codes::ProductCode, jiff::civil::Date, Vec<Quote>)> = Vec::new();
        for i in chunk_start..(chunk_start + 10).min(days) {
            let day = first.checked_add(jiff::Span::new().days(i)).expect("date");
            for p in product_codes() {
                // Each day's prices move with the simulated market (cycle and drift).
                let dated: Vec<Quote> = quotes
                    .iter()
                    .filter(|q| q.product == p)
                    .map(|q| {
                        let mut q = q.clone();
                        let shift = wafuel_sim::dataset::market_tenths(p.get(), day, q.price as u64);
                        q.price = ((q.price * 10.0).round() + shift as f64) / 10.0;
                        q
                    })
                    .collect();
                batch.push((p, day, dated));
            }
        }
        let extracts: Vec<wafuel_store::history::DayExtract<'_>> = batch
            .iter()
            .map(|(product, date, quotes)| wafuel_store::history::DayExtract {
                product: *product,
                date: *date,
                quotes,
            })
            .collect();
        rows += store.record(&extracts).await.expect("record").written;
    }
    println!("history_rows {rows}");
    println!("history_fill_s {:.1}", filled.elapsed().as_secs_f64());
    let station = quotes.iter().find(|q| q.product == 1).expect("a station").station.id.to_string();
    let last = date(2026, 9, 29);
    let mut samples = Vec::new();
    for _ in 0..30 {
        let t = Instant::now();
        let points = store
            .station_history(&station, wafuel_domain::codes::ProductCode::UNLEADED, first, last)
            .await
            .expect("read")
            .expect("some");
        std::hint::black_box(
            wafuel_web::render::market::history_jsonapi(
                &station,
                wafuel_domain::codes::ProductCode::UNLEADED,
                (first, last),
                &points,
                (None, &DocumentMeta::default()),
            )
            .expect("render"),
        );
        samples.push(t.elapsed());
    }
    println!("history_3y_points {}", days);
    println!("history_3y_ms {:.3}", median(samples).as_secs_f64() * 1e3);
    let from = last.checked_sub(jiff::Span::new().days(89)).expect("date");
    let mut samples = Vec::new();
    for _ in 0..15 {
        let t = Instant::now();
        let rows =
            store.market(wafuel_domain::codes::ProductCode::UNLEADED, from, last).await.expect("market");
        let m = wafuel_service::catalog::market::market(&rows, Default::default());
        let scope = wafuel_web::render::market::StatsScope {
            product: wafuel_domain::codes::ProductCode::UNLEADED,
            brands: None,
            regions: None,
            from,
            to: last,
            interval: Default::default(),
            wholesale: None,
            loading: None,
        };
        std::hint::black_box(
            wafuel_web::render::market::stats_jsonapi(&scope, &m, &DocumentMeta::default()).expect("render"),
        );
        samples.push(t.elapsed());
    }
    println!("stats_90d_ms {:.3}", median(samples).as_secs_f64() * 1e3);
}

async fn burst(n: usize, urls: Vec<String>) {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let client = reqwest::Client::builder().pool_max_idle_per_host(0).build().expect("client");
    let started = Instant::now();
    let tasks: Vec<_> = (0..n)
        .map(|i| {
            let client = client.clone();
            let url = urls[i % urls.len()].clone();
            tokio::spawn(async move {
                match client.get(&url).send().await {
                    Ok(r) => {
                        let status = r.status().as_u16();
                        let body = r.bytes().await.map(|b| b.len()).unwrap_or(0);
                        (status, body)
                    }
                    Err(_) => (0, 0),
                }
            })
        })
        .collect();
    let mut counts = std::collections::BTreeMap::new();
    for t in tasks {
        let (status, _) = t.await.unwrap_or((0, 0));
        *counts.entry(status).or_insert(0usize) += 1;
    }
    for (status, count) in counts {
        println!("status_{status} {count}");
    }
    println!("burst_ms {:.1}", started.elapsed().as_secs_f64() * 1e3);
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| a != "--bench").collect();
    match args.first().map(String::as_str) {
        Some("burst") => {
            let n: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(1000);
            let urls = args[2..].to_vec();
            let runtime = tokio::runtime::Runtime::new().expect("runtime");
            runtime.block_on(burst(n, urls));
        }
        Some("nearby") => nearby(),
        Some("history") => {
            let dir = args.get(1).cloned().unwrap_or_else(|| std::env::temp_dir().display().to_string());
            let runtime = tokio::runtime::Runtime::new().expect("runtime");
            runtime.block_on(history(&dir));
        }
        Some("pipeline") | None => pipeline(),
        Some(other) => eprintln!("unknown mode {other}"),
    }
}
