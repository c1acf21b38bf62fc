//! `cfg(wafuel_postgres)` when `WAFUEL_TEST_POSTGRES` names a database: the PostgreSQL
//! tests are marked ignored without it, so `cargo test` lists them as skipped, with the reason,
//! rather than passing them untried (`scripts/test` sets it whenever PostgreSQL answers).
fn main() {
    println!("cargo:rerun-if-env-changed=WAFUEL_TEST_POSTGRES");
    println!("cargo::rustc-check-cfg=cfg(wafuel_postgres)");
    if std::env::var("WAFUEL_TEST_POSTGRES").is_ok_and(|url| !url.is_empty()) {
        println!("cargo:rustc-cfg=wafuel_postgres");
    }
}
