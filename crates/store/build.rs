//! Rebuild when a migration is added or changed: `sqlx::migrate!` embeds the directory at
//! compile time but cannot tell cargo to watch it on stable Rust.
fn main() {
    println!("cargo:rerun-if-changed=migrations");
}
