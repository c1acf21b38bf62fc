//! `cfg(wafuel_postgres)` when `WAFUEL_TEST_POSTGRES` names a database: the PostgreSQL
//! tests are marked ignored without it, so `cargo test` lists them as skipped, with the reason,
//! rather than passing them untried (`scripts/test` sets it whenever PostgreSQL answers).
//!
//! And `cfg(wafuel_slow)` when `WAFUEL_SLOW_TESTS` is set: the slow tier (a real browser,
//! nginx, spawned processes) is marked ignored without it, so `cargo test` is the fast tier
//! and `scripts/test` (which sets it) runs both.
fn main() {
    println!("cargo:rerun-if-env-changed=WAFUEL_SLOW_TESTS");
    println!("cargo::rustc-check-cfg=cfg(wafuel_slow)");
    if std::env::var("WAFUEL_SLOW_TESTS").is_ok_and(|v| !v.is_empty() && v != "0") {
        println!("cargo:rustc-cfg=wafuel_slow");
    }
    println!("cargo:rerun-if-env-changed=WAFUEL_TEST_POSTGRES");
    println!("cargo::rustc-check-cfg=cfg(wafuel_postgres)");
    if std::env::var("WAFUEL_TEST_POSTGRES").is_ok_and(|url| !url.is_empty()) {
        println!("cargo:rustc-cfg=wafuel_postgres");
    }
}
