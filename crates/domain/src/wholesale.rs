//! Wholesale (terminal gate) prices: what each fuel terminal charges retailers, GST included,
//! as FuelWatch publishes them. Pure: the six terminal centres, which products have a
//! wholesale price, the bounds a price must keep, which of a live answer's three prices is
//! which day's, and a centre's figures for a day.

use jiff::civil::{Date, Time};

use crate::codes::ProductCode;

/// A terminal centre: the towns FuelWatch groups its terminals under. A station's centre is
/// the one nearest to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Centre {
    Perth,
    Albany,
    Broome,
    Esperance,
    Geraldton,
    PortHedland,
}

impl Centre {
    /// Every centre, Perth first (statewide figures use Perth's).
    pub const ALL: [Centre; 6] = [
        Centre::Perth,
        Centre::Albany,
        Centre::Broome,
        Centre::Esperance,
        Centre::Geraldton,
        Centre::PortHedland,
    ];

    /// The name the API takes and writes (`centre=port-hedland`).
    pub fn slug(self) -> &'static str {
        match self {
            Centre::Perth => "perth",
            Centre::Albany => "albany",
            Centre::Broome => "broome",
            Centre::Esperance => "esperance",
            Centre::Geraldton => "geraldton",
            Centre::PortHedland => "port-hedland",
        }
    }

    /// FuelWatch's `description` of the centre.
    pub fn name(self) -> &'static str {
        match self {
            Centre::Perth => "Perth",
            Centre::Albany => "Albany",
            Centre::Broome => "Broome",
            Centre::Esperance => "Esperance",
            Centre::Geraldton => "Geraldton",
            Centre::PortHedland => "Port Hedland",
        }
    }

    /// FuelWatch's id of the centre (`/api/terminalgate/prices/{id}`).
    pub fn fuelwatch_id(self) -> u32 {
        match self {
            Centre::Perth => 6,
            Centre::Albany => 5,
            Centre::Broome => 1,
            Centre::Esperance => 2,
            Centre::Geraldton => 3,
            Centre::PortHedland => 4,
        }
    }

    /// Where its terminals are (Perth's at Kwinana and Kewdale: Kwinana's point), to find the
    /// centre nearest to a station.
    pub fn point(self) -> (f64, f64) {
        match self {
            Centre::Perth => (-32.05, 115.85),
            Centre::Albany => (-35.03, 117.88),
            Centre::Broome => (-17.96, 122.24),
            Centre::Esperance => (-33.86, 121.89),
            Centre::Geraldton => (-28.78, 114.61),
            Centre::PortHedland => (-20.31, 118.58),
        }
    }

    pub fn from_slug(text: &str) -> Option<Centre> {
        Centre::ALL.into_iter().find(|c| c.slug().eq_ignore_ascii_case(text))
    }

    /// The centre FuelWatch describes so (case and spacing aside).
    pub fn from_name(text: &str) -> Option<Centre> {
        let text = text.trim();
        Centre::ALL.into_iter().find(|c| c.name().eq_ignore_ascii_case(text))
    }

    /// The centre nearest to a point.
    pub fn nearest(lat: f64, lon: f64) -> Centre {
        let far = |c: &Centre| crate::geo::distance_m((lat, lon), c.point());
        Centre::ALL.into_iter().min_by(|a, b| far(a).total_cmp(&far(b))).unwrap_or(Centre::Perth)
    }
}

/// The centre of a region's town: its wider region's (Metro, Peel, the South-West and the
/// Wheatbelt are Perth's; the Great Southern Albany's; Goldfields-Esperance Esperance's; the
/// Kimberley Broome's; the Pilbara Port Hedland's; the Mid-West and Gascoyne Geraldton's), but
/// Exmouth, nearer Port Hedland. For a station the history knows without a point.
pub fn region_centre(code: u8) -> Option<Centre> {
    if code == 40 {
        return Some(Centre::PortHedland);
    }
    Some(match crate::codes::region(code)?.wider {
        "Great Southern" => Centre::Albany,
        "Goldfields-Esperance" => Centre::Esperance,
        "Kimberley" => Centre::Broome,
        "Pilbara" => Centre::PortHedland,
        "Mid-West" | "Gascoyne" => Centre::Geraldton,
        _ => Centre::Perth,
    })
}

/// The centre of statistics over some regions: the one most of them are nearest to (Perth on
/// a tie, or without regions: statewide figures use Perth's).
pub fn regions_centre(regions: Option<&[crate::codes::RegionCode]>) -> Centre {
    let Some(regions) = regions else { return Centre::Perth };
    let mut counts = [0usize; 6];
    for r in regions {
        if let Some(c) = region_centre(r.get()) {
            counts[Centre::ALL.iter().position(|x| *x == c).unwrap_or(0)] += 1;
        }
    }
    let best = counts.iter().copied().max().unwrap_or(0);
    Centre::ALL
        .into_iter()
        .zip(counts)
        .find(|(_, n)| *n == best && best > 0)
        .map_or(Centre::Perth, |(c, _)| c)
}

/// The product a wholesale `PRODUCT` or `fuelType` names: `ULP` → 1, `PULP` → 2, `Diesel` → 4.
/// No other product has a terminal gate price.
pub fn product_of(text: &str) -> Option<ProductCode> {
    let code = match text.trim().to_ascii_uppercase().as_str() {
        "ULP" => 1,
        "PULP" => 2,
        "DIESEL" => 4,
        _ => return None,
    };
    ProductCode::parse(code)
}

/// Why a product has no terminal gate price (`/v1/wholesale`'s `meta.note`).
pub const NO_TGP_NOTE: &str = "FuelWatch publishes a terminal gate price for 1 Unleaded, 2 Premium 95 and 4 Diesel only; this fuel has none, so no day is listed.";

/// Whether a product has a terminal gate price (1, 2 and 4 only).
pub fn has_wholesale(product: ProductCode) -> bool {
    matches!(product.get(), 1 | 2 | 4)
}

/// The terminal gate prices a product's forecast reads, in order of preference: its own; for
/// 98 RON (which has none) PULP's; for brand diesel diesel's; for the premium petrols ULP's
/// where theirs is missing. LPG and E85 have none.
pub fn forecast_products(product: ProductCode) -> &'static [u8] {
    match product.get() {
        1 => &[1],
        2 | 6 => &[2, 1],
        4 | 11 => &[4],
        _ => &[],
    }
}

/// A price is refused at or below this (hundredths of a cent): no fuel sells for 10 c/L.
pub const MIN_PRICE: i64 = 10 * 100;
/// A price is refused above this (hundredths of a cent).
pub const MAX_PRICE: i64 = 1_000 * 100;

/// A price in hundredths of a cent, when it is a number within 10 < p ≤ 1,000 c/L (more
/// decimals than two are rounded to the hundredth).
pub fn price_hundredths(value: f64) -> Option<i64> {
    if !value.is_finite() {
        return None;
    }
    // The bound holds for the price as written (1000.001 and 1000.004 are over it), and
    // again once rounded to the hundredth (10.001 would store as 10.00).
    let written = value > MIN_PRICE as f64 / 100.0 && value <= MAX_PRICE as f64 / 100.0;
    let hundredths = (value * 100.0).round();
    if written && hundredths > MIN_PRICE as f64 && hundredths <= MAX_PRICE as f64 {
        Some(hundredths as i64)
    } else {
        None
    }
}

/// A price as text (`173.26`, `158.3`), in hundredths of a cent, within the bounds.
pub fn parse_price(text: &str) -> Option<i64> {
    let text = text.trim();
    if text.is_empty()
        || !text.bytes().all(|b| b.is_ascii_digit() || b == b'.')
        || text.bytes().filter(|b| *b == b'.').count() > 1
    {
        return None;
    }
    price_hundredths(text.parse().ok()?)
}

/// One terminal's price of a product on a day.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct TerminalPrice {
    pub product: ProductCode,
    pub centre: Centre,
    pub date: Date,
    /// The terminal's name as published (`Ampol Kwinana`), or the file's `TERMINAL_GATE`.
    pub terminal: String,
    /// Hundredths of a cent, GST included.
    pub price: i64,
}

/// Which of a live answer's prices are which day's, and whether each is kept only where the
/// store has none for its day.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LiveDays {
    /// `pricePrevious`'s day, stored only when missing.
    pub previous: Date,
    /// `priceCurrent`'s day; before 08:30 it is yesterday's, stored only when missing.
    pub current: (Date, bool),
    /// `priceNext`'s day, when it may be read: before 08:30 today's, from 14:30 tomorrow's,
    /// between them a placeholder (`None`).
    pub next: Option<Date>,
}

/// When `priceCurrent` changes over (AWST).
pub const CHANGE_OVER: Time = Time::constant(8, 30, 0, 0);
/// When FuelWatch publishes tomorrow's price (AWST).
pub const PUBLISHED: Time = Time::constant(14, 30, 0, 0);

/// What a live answer read at `perth` (Perth civil time) says of which day. FuelWatch's terminal answers change
/// over at 08:30 Perth time (before it `priceCurrent` is still yesterday's and `priceNext`
/// today's) and carry tomorrow's price in `priceNext` from 14:30; before 14:30 `priceNext`
/// repeats `priceCurrent`, a placeholder never read as tomorrow's.
pub fn live_days(perth: jiff::civil::DateTime) -> LiveDays {
    let (today, time) = (perth.date(), perth.time());
    let yesterday = today.yesterday().unwrap_or(today);
    if time < CHANGE_OVER {
        return LiveDays {
            previous: yesterday.yesterday().unwrap_or(yesterday),
            current: (yesterday, true),
            next: Some(today),
        };
    }
    LiveDays {
        previous: yesterday,
        current: (today, false),
        next: (time >= PUBLISHED).then(|| today.tomorrow().unwrap_or(today)),
    }
}

/// One terminal of a live answer, its prices read and bounded (hundredths of a cent).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveTerminal {
    pub centre: Centre,
    pub name: String,
    pub prices: Vec<LivePrice>,
}

/// One product's three prices at a terminal, as the live answer gives them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LivePrice {
    pub product: ProductCode,
    pub previous: Option<i64>,
    pub current: Option<i64>,
    pub next: Option<i64>,
}

/// What a live answer stores: prices that replace what is stored, prices kept only where
/// none is, and the day whose first prices are news (tomorrow's, once published).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LiveWrite {
    pub prices: Vec<TerminalPrice>,
    pub if_missing: Vec<TerminalPrice>,
    pub news: Option<Date>,
}

/// The prices a live answer read with [`live_days`] stores.
pub fn live_write(terminals: &[LiveTerminal], days: LiveDays) -> LiveWrite {
    let mut out = LiveWrite { news: days.next.filter(|d| *d > days.current.0), ..LiveWrite::default() };
    for t in terminals {
        for p in &t.prices {
            let price = |date: Date, price: i64| TerminalPrice {
                product: p.product,
                centre: t.centre,
                date,
                terminal: t.name.clone(),
                price,
            };
            if let Some(v) = p.previous {
                out.if_missing.push(price(days.previous, v));
            }
            if let Some(v) = p.current {
                let (date, only_if_missing) = days.current;
                if only_if_missing {
                    out.if_missing.push(price(date, v))
                } else {
                    out.prices.push(price(date, v))
                }
            }
            if let (Some(date), Some(v)) = (days.next, p.next) {
                out.prices.push(price(date, v));
            }
        }
    }
    out
}

/// One centre's figures of a product on a day (prices in hundredths of a cent).
#[derive(Debug, Clone, PartialEq)]
pub struct WholesaleDay {
    pub date: Date,
    pub centre: Centre,
    pub product: ProductCode,
    /// The mean over the centre's terminals, rounded to the hundredth.
    pub mean: i64,
    pub min: i64,
    /// Each terminal's price, by name.
    pub terminals: Vec<(String, i64)>,
}

/// One day of `/v1/wholesale`: the centre's figures and the margin over them.
#[derive(Debug, Clone, PartialEq)]
pub struct WholesaleRow {
    pub day: WholesaleDay,
    /// The median retail price of the centre's stations that day less its mean terminal
    /// price (cents, GST included on both sides); `None` when no station was priced.
    pub margin: Option<f64>,
}

/// The model of a `/v1/wholesale` document.
#[derive(Debug, Clone, PartialEq)]
pub struct WholesaleDoc {
    pub product: ProductCode,
    pub centre: Centre,
    pub from: Date,
    pub to: Date,
    pub rows: Vec<WholesaleRow>,
}

/// Each (centre, day)'s figures of one product's terminal prices, ascending by day then
/// centre; terminals by name.
pub fn days(prices: &[TerminalPrice]) -> Vec<WholesaleDay> {
    let mut sorted: Vec<&TerminalPrice> = prices.iter().collect();
    sorted.sort_by(|a, b| {
        (a.date, a.centre, a.product, &a.terminal).cmp(&(b.date, b.centre, b.product, &b.terminal))
    });
    let mut out: Vec<WholesaleDay> = Vec::new();
    for p in sorted {
        match out.last_mut() {
            Some(day) if day.date == p.date && day.centre == p.centre && day.product == p.product => {
                day.terminals.push((p.terminal.clone(), p.price));
            }
            _ => out.push(WholesaleDay {
                date: p.date,
                centre: p.centre,
                product: p.product,
                mean: 0,
                min: 0,
                terminals: vec![(p.terminal.clone(), p.price)],
            }),
        }
    }
    for day in &mut out {
        let sum: i64 = day.terminals.iter().map(|(_, p)| p).sum();
        day.mean = (sum as f64 / day.terminals.len() as f64).round() as i64;
        day.min = day.terminals.iter().map(|(_, p)| *p).min().unwrap_or(0);
    }
    out
}

/// A margin: a retail price in cents less a wholesale one in hundredths of a cent, in cents
/// to the tenth (both GST included, so the difference is GST-inclusive too).
pub fn margin(retail_cents: f64, wholesale_hundredths: i64) -> f64 {
    ((retail_cents * 100.0 - wholesale_hundredths as f64) / 10.0).round() / 10.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use jiff::civil::date;

    fn at(text: &str) -> jiff::civil::DateTime {
        text.parse().expect("a Perth civil time")
    }

    #[test]
    fn the_three_live_prices_belong_to_their_days_by_the_perth_clock() {
        // 22 April 2026, 16:15 AWST: tomorrow's price is out.
        let after = live_days(at("2026-04-22T16:15:00"));
        assert_eq!(after.current, (date(2026, 4, 22), false));
        assert_eq!(after.next, Some(date(2026, 4, 23)));
        assert_eq!(after.previous, date(2026, 4, 21));
        // 14:29: priceNext is a placeholder.
        let before = live_days(at("2026-04-22T14:29:59"));
        assert_eq!(before.current, (date(2026, 4, 22), false));
        assert_eq!(before.next, None);
        assert_eq!(live_days(at("2026-04-22T14:30:00")).next, Some(date(2026, 4, 23)));
        // 07:00: priceCurrent is still yesterday's, priceNext today's.
        let early = live_days(at("2026-04-22T07:00:00"));
        assert_eq!(early.current, (date(2026, 4, 21), true));
        assert_eq!(early.next, Some(date(2026, 4, 22)));
        assert_eq!(early.previous, date(2026, 4, 20));
        assert_eq!(live_days(at("2026-04-22T08:30:00")).current, (date(2026, 4, 22), false));
    }

    #[test]
    fn prices_keep_their_bounds_and_hundredths() {
        assert_eq!(parse_price("173.26"), Some(17_326));
        assert_eq!(parse_price(" 158.3 "), Some(15_830));
        assert_eq!(parse_price("173.260"), Some(17_326));
        assert_eq!(parse_price("1000"), Some(100_000));
        assert_eq!(parse_price("1000.01"), None, "over 1,000 c/L");
        assert_eq!(parse_price("10"), None, "10 c/L is not a fuel price");
        assert_eq!(parse_price("0"), None);
        assert_eq!(parse_price("-182.4"), None);
        assert_eq!(parse_price("1.8e2"), None, "not how a price is written");
        assert_eq!(parse_price("NaN"), None);
        assert_eq!(parse_price(""), None);
        assert_eq!(price_hundredths(f64::INFINITY), None);
        assert_eq!(price_hundredths(211.38), Some(21_138));
        // The bound on the price as written, not once rounded: 1000.001 and 1000.004 are over.
        assert_eq!(parse_price("1000.001"), None);
        assert_eq!(price_hundredths(1000.004), None);
        assert_eq!(parse_price("10.001"), None, "stored as 10.00, not over 10");
        assert_eq!(parse_price("150.5.1"), None);
        assert_eq!(parse_price("1000.000"), Some(100_000));
    }

    #[test]
    fn products_and_centres_read_as_fuelwatch_writes_them() {
        assert_eq!(product_of("ULP").map(ProductCode::get), Some(1));
        assert_eq!(product_of("PULP").map(ProductCode::get), Some(2));
        assert_eq!(product_of("Diesel").map(ProductCode::get), Some(4));
        assert_eq!(product_of("LPG"), None);
        assert_eq!(product_of("98 RON"), None);
        for code in [5, 6, 10, 11] {
            assert!(!has_wholesale(ProductCode::parse(code).expect("product")));
        }
        assert_eq!(Centre::from_name("Port Hedland"), Some(Centre::PortHedland));
        assert_eq!(Centre::from_slug("port-hedland"), Some(Centre::PortHedland));
        assert_eq!(Centre::from_slug("kwinana"), None);
        assert_eq!(Centre::PortHedland.fuelwatch_id(), 4);
        // Perth CBD, Kalgoorlie, Karratha, Bunbury.
        assert_eq!(Centre::nearest(-31.95, 115.86), Centre::Perth);
        assert_eq!(Centre::nearest(-30.75, 121.47), Centre::Esperance);
        assert_eq!(Centre::nearest(-20.74, 116.85), Centre::PortHedland);
        assert_eq!(Centre::nearest(-33.33, 115.64), Centre::Perth);
        // Regions without a point: Kalgoorlie, Broome, Exmouth, Karratha, Metro, Albany.
        let centre = |code| region_centre(code).expect("a region");
        assert_eq!(centre(8), Centre::Esperance);
        assert_eq!(centre(2), Centre::Broome);
        assert_eq!(centre(40), Centre::PortHedland);
        assert_eq!(centre(9), Centre::PortHedland);
        assert_eq!(centre(25), Centre::Perth);
        assert_eq!(centre(15), Centre::Albany);
        assert_eq!(region_centre(52), None);
        let codes = |list: &[u8]| -> Vec<crate::codes::RegionCode> {
            list.iter().filter_map(|c| crate::codes::RegionCode::parse(*c)).collect()
        };
        assert_eq!(regions_centre(None), Centre::Perth);
        assert_eq!(regions_centre(Some(&codes(&[8, 1, 25]))), Centre::Esperance);
        assert_eq!(regions_centre(Some(&codes(&[8, 25]))), Centre::Perth, "a tie is Perth's");
    }

    #[test]
    fn a_centres_day_is_the_mean_and_minimum_of_its_terminals() {
        let p = |terminal: &str, price: i64, day: i8| TerminalPrice {
            product: ProductCode::UNLEADED,
            centre: Centre::Perth,
            date: date(2026, 4, day),
            terminal: terminal.into(),
            price,
        };
        let days = days(&[
            p("BP Kwinana", 17_318, 23),
            p("Ampol Kwinana", 17_218, 23),
            p("Ampol Kwinana", 17_326, 22),
        ]);
        assert_eq!(days.len(), 2);
        assert_eq!(days[0].date, date(2026, 4, 22));
        assert_eq!((days[0].mean, days[0].min), (17_326, 17_326));
        assert_eq!((days[1].mean, days[1].min), (17_268, 17_218));
        assert_eq!(days[1].terminals[0].0, "Ampol Kwinana");
        // A median of 189.5 over a mean TGP of 172.68: 16.8 c/L.
        assert_eq!(margin(189.5, 17_268), 16.8);
        assert_eq!(margin(172.8, 17_326), -0.5);
    }
}
