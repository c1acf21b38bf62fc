//! Prices in the integer units they are held in, each type saying its unit: a retail price in
//! tenths of a cent (the feed has one decimal), a terminal gate price in hundredths (FuelWatch's
//! wholesale files have two). Arithmetic stays in integers; cents (`f64`) are only written out.

/// A retail price in tenths of a cent a litre.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Tenths(pub i64);

/// A terminal gate price in hundredths of a cent a litre.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Hundredths(pub i64);

impl Tenths {
    /// The price as the feed writes it, in cents (one decimal at most).
    pub fn cents(self) -> f64 {
        self.0 as f64 / 10.0
    }
}

impl Hundredths {
    /// The price in cents (two decimals at most).
    pub fn cents(self) -> f64 {
        self.0 as f64 / 100.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_unit_writes_its_own_cents() {
        assert_eq!(Tenths(1_859).cents(), 185.9);
        assert_eq!(Hundredths(17_326).cents(), 173.26);
        assert_eq!(Tenths(-25).cents(), -2.5, "a discount or a change is signed");
    }
}
