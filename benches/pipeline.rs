//! Measurements for scripts/bench (DESIGN.md §7). Not a test: it prints numbers.
//!
//! `cargo bench --bench pipeline -- pipeline` times, on the seven statewide feeds of the
//! simulated source: quick-xml alone reading the bytes, the cold catalogue build (parse,
//! validate, normalise, render the identity JSON), and the gzip + brotli publish.
//! `cargo bench --bench pipeline -- burst N URL...` sends N concurrent GETs spread over the
//! URLs and prints the status counts.

use std::time::{Duration, Instant};

use jiff::civil::date;
use quick_xml::Reader;
use quick_xml::events::Event;
use wafuel::model::codes::product_codes;
use wafuel::model::station::Quote;
use wafuel::query::{Route, parse_selection};
use wafuel::render::representation::Representation;
use wafuel::render::{DocumentMeta, PublicationStatus, jsonapi};
use wafuel::sim::{Faults, SimState};
use wafuel::source::rss;
use wafuel::source::validate::{Component, validate};
use wafuel::time::{ManualClock, perth_instant};

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
    let feeds: Vec<(u8, String)> = product_codes()
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

    let selection = parse_selection(Route::V1, "", perth_instant(now)).expect("selection");
    let meta = DocumentMeta::default();
    let no_enrichment = std::collections::HashMap::new();
    let render = |all: &[Vec<Quote>]| {
        let refs: Vec<&Quote> = all.iter().flatten().collect();
        jsonapi::render(&jsonapi::PriceDocument {
            selection: &selection,
            quotes: &refs,
            fetched_at: perth_instant(now),
            status: PublicationStatus::Available,
            meta: &meta,
            enrichment: &no_enrichment,
        })
    };
    let validate_one = |product: u8, feed: &str| {
        let parsed = rss::parse(feed).expect("feed");
        validate(&[Component { product, feed: parsed }], date(2026, 9, 29)).expect("valid")
    };
    let build = || {
        // Cold: nothing remembered from the previous run.
        wafuel::model::normalize::clear_memo();
        // One extract per product, validated separately, as the service does.
        let mut all: Vec<Vec<Quote>> = Vec::with_capacity(feeds.len());
        for (product, feed) in &feeds {
            all.push(validate_one(*product, feed));
        }
        render(&all)
    };
    let cold = time(runs, build);
    // The service validates the seven extracts concurrently (one task each on the runtime's
    // workers); the same build with one thread per feed.
    let build_parallel = || {
        wafuel::model::normalize::clear_memo();
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
    let parsed: Vec<(u8, rss::Feed)> =
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
            std::hint::black_box(wafuel::model::phone::normalize_phone(r.phone.as_deref().unwrap_or("")));
            n + 1
        })
    });
    let features = time(runs, || {
        records.iter().fold(0usize, |n, r| {
            std::hint::black_box(wafuel::model::site_features::parse_site_features(
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
    let publish = time(runs, || Representation::build(document.clone()));
    let repr = Representation::build(document.clone());

    println!("feeds_bytes {bytes}");
    println!("document_bytes {}", document.len());
    println!("gzip_bytes {}", repr.gzip.len());
    println!("br_bytes {}", repr.br.len());
    println!("xml_only_ms {:.3}", xml_only.as_secs_f64() * 1e3);
    println!("cold_build_ms {:.3}", cold.as_secs_f64() * 1e3);
    println!("publish_ms {:.3}", publish.as_secs_f64() * 1e3);
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
        Some("pipeline") | None => pipeline(),
        Some(other) => eprintln!("unknown mode {other}"),
    }
}
