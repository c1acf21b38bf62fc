//! The wholesale level: what the terminal gate price (TGP) says of the level the cycle rides
//! on. Retailers pay the TGP; a move in it reaches the pump over the following week or so,
//! whatever the cycle is doing, and the cycle's own drift (read off its past weeks) learns it
//! only after it has happened. The outlook of a market with a cycle adds a share of last
//! week's TGP change, reaching the pump a seventh more each day.

use super::*;

/// Share of last week's TGP change the level has still to take up by day +7. Measured on
/// FuelWatch's 2026 files (docs/forecast.md): a quarter brought ULP's mean over days 1–7 from
/// 0.81× to 0.77× its best naive statewide (Metro 0.81× → 0.78×, PULP 0.78× → 0.74×, 98 RON
/// 0.79× → 0.74×); a half or all of it overshot where the TGP turned, and a share the replay
/// chose per day from its own errors did worse than none (0.85×: five months of prices are
/// too few to choose from).
pub(super) const LEVEL_KEPT: f64 = 0.25;
/// A TGP reading may be this many days older than the day it stands for. Why 3: a weekend
/// and a public holiday publish nothing new (Friday's price stands for Monday); an older one
/// says nothing of this week.
const STALE_DAYS: i64 = 3;

/// The newest TGP at or before `day`, when it is at most [`STALE_DAYS`] older.
fn reading(tgp: &Daily, day: Date) -> Option<f64> {
    let on = tgp.last_on_or_before(day)?;
    ((day - on).get_days() as i64 <= STALE_DAYS).then(|| tgp.get(on)).flatten()
}

/// The TGP's change over the week to `basis` (c/L), from readings of days up to `basis` only:
/// `None` without one at both ends.
pub(super) fn week_change(tgp: &Daily, basis: Date) -> Option<f64> {
    let week_ago = basis.checked_sub(days(WEEK as i64)).ok()?;
    Some(reading(tgp, basis)? - reading(tgp, week_ago)?)
}

/// Per day after the basis, the share of `change` ([`LEVEL_KEPT`]) the level takes up by
/// then: a seventh more each day, all of it from day +7 on.
pub(super) fn level_path(change: f64, steps: usize) -> Vec<f64> {
    (1..=steps).map(|k| LEVEL_KEPT * change * k.min(WEEK) as f64 / WEEK as f64).collect()
}
