//! What a stop on the way costs: the fill plus the fuel burnt reaching the station and back,
//! in exact integer arithmetic (the station search's `sort=cost`).

use crate::price::Tenths;

/// `fill` and `consumption`, in tenths of a litre and of a litre per 100 km (the query's
/// one decimal, held exactly).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct StopCost {
    pub fill_tenths: i64,
    pub consumption_tenths: i64,
}

impl StopCost {
    /// The cents a stop costs at `price` (a litre's) `distance_m` away
    /// (one way): the fill plus the fuel burnt there and back, both at that price, rounded
    /// half away from zero. Exact: integers throughout.
    pub fn cost_cents(self, price: Tenths, distance_m: i64) -> i64 {
        // litres × 10⁶ = fill_tenths × 10⁵ + consumption_tenths × 2 × metres (a tenth of a
        // litre per 100 km is 10⁻⁶ litres a metre); cents × 10⁷ = price (tenths) × litres × 10⁶.
        let litres_e6 = i128::from(self.fill_tenths) * 100_000
            + i128::from(self.consumption_tenths) * 2 * i128::from(distance_m);
        let numerator = i128::from(price.0) * litres_e6;
        let denominator: i128 = 10_000_000;
        let half = denominator / 2;
        let rounded =
            if numerator >= 0 { (numerator + half) / denominator } else { (numerator - half) / denominator };
        i64::try_from(rounded).unwrap_or(i64::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stops_cost_is_exact() {
        let stop = StopCost { fill_tenths: 500, consumption_tenths: 75 };
        // 50 L at 189.9 c/L, 1,234 m away: 50 L + 7.5 L/100 km × 2.468 km = 50.1851 L → 9,530.15 c.
        assert_eq!(stop.cost_cents(Tenths(1_899), 1_234), 9_530);
        // Half a cent rounds away from zero: 10 L at 100.1 c/L is 1,001.0 c; 1.5 L at 100.1 is 150.15 c.
        assert_eq!(StopCost { fill_tenths: 100, consumption_tenths: 10 }.cost_cents(Tenths(1_001), 0), 1_001);
        assert_eq!(StopCost { fill_tenths: 15, consumption_tenths: 10 }.cost_cents(Tenths(1_001), 0), 150);
        assert_eq!(StopCost { fill_tenths: 15, consumption_tenths: 10 }.cost_cents(Tenths(1_003), 0), 150);
        // (litres in tenths, price in tenths of a cent, cents, the exact cost): to the nearest
        // cent, half a cent up.
        for (fill_tenths, price, cents, exact) in [
            (5, 1_001, 50, "50.05"),
            (5, 1_011, 51, "50.55"),
            (1, 1_005, 10, "10.05"),
            (1, 1_015, 10, "10.15"),
            (1, 1_025, 10, "10.25"),
            (2, 1_025, 21, "20.5"),
        ] {
            let stop = StopCost { fill_tenths, consumption_tenths: 10 };
            assert_eq!(stop.cost_cents(Tenths(price), 0), cents, "{exact} → {cents}");
        }
        // A station 20 km off costs the fuel there and back: 40 km at 30 L/100 km = 12 L.
        assert_eq!(
            StopCost { fill_tenths: 10, consumption_tenths: 300 }.cost_cents(Tenths(2_000), 20_000),
            2_600
        );
    }
}
