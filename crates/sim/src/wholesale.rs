//! The simulated terminal gate prices: FuelWatch's 19 terminals in its six centres, priced
//! coherently with the simulated retail market (its drift leads the retail drift by a week,
//! and the cycle's low sits a few c/L above Perth's price), served as FuelWatch's live API
//! (token, centres, each centre's terminals with yesterday's, today's and tomorrow's price,
//! the 08:30 and 14:30 rules) and as its yearly files with their list.

use jiff::Timestamp;
use jiff::civil::{Date, Weekday};
use serde::Serialize;

use super::dataset::{drift_tenths, mix};
use crate::listing::ListedFile;
use wafuel_domain::wholesale::Centre;

/// FuelWatch's terminal gate clock, from its `/api/configuration/parameter`
/// (`"TerminalGatePriceChangeTime": "08:30"`, `"WholesaleChangeOverTime": "14:30"`): at 08:30
/// `priceCurrent` becomes today's; from 14:30 `priceNext` is tomorrow's. Written here, not taken
/// from the service's reading of it, so a timing mistake there is not copied.
const CHANGE_OVER: jiff::civil::Time = jiff::civil::Time::constant(8, 30, 0, 0);
const PUBLISHED: jiff::civil::Time = jiff::civil::Time::constant(14, 30, 0, 0);

/// Faults of the simulated terminal gate API (`PUT /_sim/wholesale-faults`), applied to the
/// token, centres and prices routes.
#[derive(Debug, Clone, Default, PartialEq, serde::Deserialize, Serialize)]
#[serde(default)]
pub struct WholesaleFaults {
    /// Answer every route with this status.
    pub status: Option<u16>,
    /// Wait this long before answering.
    pub delay_ms: Option<u64>,
    /// Refuse the token: 403 on `/api/token`.
    pub refuse_token: bool,
    /// Answer the prices with a body that is not FuelWatch's JSON.
    pub malformed: bool,
    /// Put this number as Perth's first terminal's `priceCurrent` (0, 1200: out of bounds).
    pub price: Option<f64>,
    /// List Perth twice among the centres.
    pub centre_twice: bool,
    /// List each centre's first terminal twice, the repeat at another price.
    pub terminal_twice: bool,
    /// Give each centre's first terminal's first fuel twice.
    pub product_twice: bool,
}

/// The token the simulated `/api/token` gives, and the only one its other routes take.
pub const TOKEN: &str = "sim-terminal-gate-token";

const ULP: &str = "ULP";
const PULP: &str = "PULP";
const DIESEL: &str = "Diesel";
const ALL: &[&str] = &[ULP, PULP, DIESEL];

/// FuelWatch's terminals: its id, name, centre and the fuels it prices (as listed on 22
/// April 2026).
pub const TERMINALS: [(u32, &str, Centre, &[&str]); 19] = [
    (31, "Ampol Kwinana", Centre::Perth, ALL),
    (4, "BP Kewdale", Centre::Perth, ALL),
    (5, "BP Kwinana", Centre::Perth, ALL),
    (32, "Caltex Kwinana", Centre::Perth, ALL),
    (17, "Mobil Kwinana", Centre::Perth, ALL),
    (10, "Viva Energy Kwinana", Centre::Perth, ALL),
    (27, "Ampol Albany", Centre::Albany, ALL),
    (28, "Ampol Broome", Centre::Broome, ALL),
    (6, "BP Broome", Centre::Broome, ALL),
    (12, "Viva Energy Broome", Centre::Broome, ALL),
    (29, "Ampol Esperance", Centre::Esperance, &[DIESEL]),
    (7, "BP Esperance", Centre::Esperance, ALL),
    (13, "Viva Energy Esperance", Centre::Esperance, &[DIESEL]),
    (30, "Ampol Geraldton", Centre::Geraldton, &[ULP, DIESEL]),
    (8, "BP Geraldton", Centre::Geraldton, &[DIESEL]),
    (26, "Ampol Port Hedland", Centre::PortHedland, &[ULP, DIESEL]),
    (9, "BP Port Hedland", Centre::PortHedland, &[ULP, DIESEL]),
    (33, "Caltex Port Hedland", Centre::PortHedland, &[DIESEL]),
    (16, "Viva Energy Port Hedland", Centre::PortHedland, &[DIESEL]),
];

/// Perth's typical terminal price by fuel (hundredths of a cent): 3–7 c/L under the
/// simulated Perth median's cycle low for petrol, about 15 under diesel's median.
fn base(fuel: &str) -> i64 {
    match fuel {
        ULP => 19_750,
        PULP => 21_100,
        _ => 20_000,
    }
}

/// What freight adds away from Kwinana (hundredths of a cent).
fn freight(centre: Centre) -> i64 {
    match centre {
        Centre::Perth => 0,
        Centre::Albany | Centre::Geraldton => 300,
        Centre::Esperance => 500,
        Centre::PortHedland => 700,
        Centre::Broome => 800,
    }
}

/// The weekday whose price a day carries: terminals change their price on weekdays, so a
/// Saturday and Sunday keep Friday's.
fn priced_day(date: Date) -> Date {
    let back = match date.weekday() {
        Weekday::Saturday => 1,
        Weekday::Sunday => 2,
        _ => 0,
    };
    date.checked_sub(jiff::Span::new().days(back)).unwrap_or(date)
}

/// A terminal's price of a fuel on a day (hundredths of a cent): Perth's base, the shared
/// drift a week ahead of retail's, the centre's freight, the terminal's own offset (±1 c) and
/// a day's noise (±0.5 c).
pub fn price(terminal: &str, centre: Centre, fuel: &str, date: Date) -> i64 {
    let day = priced_day(date);
    let ahead = day.checked_add(jiff::Span::new().days(7)).unwrap_or(day);
    let own = (mix(&[terminal.as_bytes(), fuel.as_bytes()]) % 200) as i64 - 100;
    let noise = (mix(&[terminal.as_bytes(), fuel.as_bytes(), day.to_string().as_bytes()]) % 100) as i64 - 50;
    base(fuel) + drift_tenths(ahead) * 10 + freight(centre) + own + noise
}

#[derive(Serialize)]
struct CentreJson {
    id: u32,
    description: &'static str,
}

/// `GET /api/terminalgate/centres`, in FuelWatch's order (by name).
pub fn centres_json() -> serde_json::Value {
    let mut centres: Vec<CentreJson> =
        Centre::ALL.iter().map(|c| CentreJson { id: c.fuelwatch_id(), description: c.name() }).collect();
    centres.sort_by_key(|c| c.description);
    serde_json::to_value(centres).unwrap_or_default()
}

fn two(hundredths: i64) -> f64 {
    hundredths as f64 / 100.0
}

/// `GET /api/terminalgate/prices/{centreId}` at `now`: `None` for an unknown centre. Before
/// 08:30 `priceCurrent` is still yesterday's and `priceNext` today's; from 08:30 `priceNext`
/// repeats `priceCurrent` until 14:30, when it becomes tomorrow's.
pub fn prices_json(centre_id: u32, now: Timestamp) -> Option<serde_json::Value> {
    let centre = Centre::ALL.into_iter().find(|c| c.fuelwatch_id() == centre_id)?;
    let perth = wafuel_domain::time::perth_now(now);
    let today = perth.date();
    let shift = |d: Date, n: i64| d.checked_add(jiff::Span::new().days(n)).unwrap_or(d);
    let current = if perth.time() < CHANGE_OVER { shift(today, -1) } else { today };
    let next = if perth.time() < CHANGE_OVER {
        today
    } else if perth.time() >= PUBLISHED {
        shift(today, 1)
    } else {
        current
    };
    let terminals: Vec<serde_json::Value> = TERMINALS
        .iter()
        .filter(|t| t.2 == centre)
        .map(|(id, name, centre, fuels)| {
            let models: Vec<serde_json::Value> = fuels
                .iter()
                .map(|fuel| {
                    serde_json::json!({
                        "fuelType": fuel,
                        "priceCurrent": two(price(name, *centre, fuel, current)),
                        "priceNext": two(price(name, *centre, fuel, next)),
                        "pricePrevious": two(price(name, *centre, fuel, shift(current, -1))),
                    })
                })
                .collect();
            serde_json::json!({
                "id": id,
                "description": name,
                "defaultTerminalGatePriceChangeTime": "8:30am",
                "terminalGatePriceChangeTime": "8:30am",
                "hasTwoWholesalePrices": true,
                "terminalGateProductModels": models,
            })
        })
        .collect();
    Some(serde_json::Value::Array(terminals))
}

/// The first day the yearly files have prices (2001's file is the header alone).
pub const FIRST_DAY: Date = Date::constant(2002, 12, 19);
/// The first year FuelWatch lists a file for.
pub const FIRST_YEAR: i16 = 2001;

/// The yearly file's header (the columns FuelWatch's file is known to have), CRLF.
const HEADER: &str = "PUBLISH_DATE,TERMINAL_GATE,ADDRESS,POSTCODE,PRODUCT,PRODUCT_PRICE\r\n";

/// Where each terminal is, as the file's `ADDRESS` and `POSTCODE` (the fuel terminals' streets).
fn address(centre: Centre) -> (&'static str, &'static str) {
    match centre {
        Centre::Perth => ("Kwinana Beach Rd", "6167"),
        Centre::Albany => ("Princess Royal Dr", "6330"),
        Centre::Broome => ("Port Dr", "6725"),
        Centre::Esperance => ("The Esplanade", "6450"),
        Centre::Geraldton => ("Marine Tce", "6530"),
        Centre::PortHedland => ("Wilson St", "6721"),
    }
}

/// One day's rows of the yearly file, every terminal and fuel, prices with two decimals.
fn day_block(date: Date, out: &mut String) {
    let day = date.strftime("%d/%m/%Y").to_string();
    for (_, name, centre, fuels) in &TERMINALS {
        let (street, postcode) = address(*centre);
        for fuel in *fuels {
            let p = price(name, *centre, fuel, date);
            out.push_str(&format!("{day},{name},{street},{postcode},{fuel},{}.{:02}\r\n", p / 100, p % 100));
        }
    }
}

/// The last day a year's file has at `today` (the current year grows by a day's block each
/// day), or `None` for a year without a file.
fn through(year: i16, today: Date) -> Option<Date> {
    if year < FIRST_YEAR || year > today.year() {
        return None;
    }
    Some(if year == today.year() { today } else { Date::new(year, 12, 31).ok()? })
}

/// `FuelWatchWholesale-YYYY.csv` at `today`, or `None` for a year without a file.
pub fn year_file(year: i16, today: Date) -> Option<String> {
    let last = through(year, today)?;
    let mut out = String::from(HEADER);
    let mut day = Date::new(year, 1, 1).ok()?.max(FIRST_DAY);
    while day <= last {
        day_block(day, &mut out);
        day = day.tomorrow().ok()?;
    }
    Some(out)
}

/// The list FuelWatch publishes (`GET /api/report/terminal-gate-prices`), newest first, with
/// `url`s under `base`. Every day's block has the same length, so a file's size is its
/// header plus its days times one block, without writing it.
pub fn file_list(base: &str, today: Date) -> Vec<ListedFile> {
    let mut block = String::new();
    day_block(FIRST_DAY, &mut block);
    let mut out = Vec::new();
    for year in (FIRST_YEAR..=today.year()).rev() {
        let Some(last) = through(year, today) else { continue };
        let first = Date::new(year, 1, 1).unwrap_or(FIRST_DAY).max(FIRST_DAY);
        let days = if last < first { 0 } else { (last - first).get_days() as u64 + 1 };
        let name = format!("FuelWatchWholesale-{year}.csv");
        out.push(ListedFile {
            file_date: format!("{last}T23:59:59+08:00"),
            bytes: HEADER.len() as u64 + days * block.len() as u64,
            url: format!("{base}{name}"),
            file_name: name,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use jiff::civil::date;
    use wafuel_domain::wholesale::{live_days, live_write};

    fn at(text: &str) -> Timestamp {
        text.parse().expect("time")
    }

    #[test]
    fn the_live_answer_keeps_fuelwatchs_clock() {
        let read = |now: &str| -> Vec<wafuel_domain::wholesale::LiveTerminal> {
            let body = serde_json::to_vec(&prices_json(6, at(now)).expect("Perth")).expect("json");
            wafuel_source::wholesale::parse_prices(Centre::Perth, &body).expect("reads")
        };
        let late = read("2026-04-22T16:15:00+08:00");
        assert_eq!(late.len(), 6);
        let ampol = late[0].prices[0];
        let (today, tomorrow) = (date(2026, 4, 22), date(2026, 4, 23));
        assert_eq!(ampol.current, Some(price("Ampol Kwinana", Centre::Perth, ULP, today)));
        assert_eq!(ampol.next, Some(price("Ampol Kwinana", Centre::Perth, ULP, tomorrow)));
        // Before 14:30 priceNext repeats priceCurrent: never read as tomorrow's.
        let early = read("2026-04-22T14:00:00+08:00");
        assert_eq!(early[0].prices[0].next, early[0].prices[0].current);
        let write = live_write(
            &early,
            live_days(wafuel_domain::time::perth_now(at("2026-04-22T14:00:00+08:00")).datetime()),
        );
        assert!(write.prices.iter().all(|p| p.date == today), "nothing for tomorrow before 14:30");
    }

    #[test]
    fn wholesale_sits_a_few_cents_under_the_simulated_cycle_low() {
        let data = crate::Dataset::build().expect("dataset");
        // Perth's ULP terminal mean against the median ULP pump price, over eight weeks.
        let mut lows = Vec::new();
        let mut day = date(2026, 3, 2);
        for _ in 0..8 {
            let mut week: Vec<f64> = Vec::new();
            for _ in 0..14 {
                let mut pump: Vec<f64> = data
                    .stations
                    .iter()
                    .filter(|s| s.distance_km(-31.95, 115.86) < 60.0)
                    .filter_map(|s| s.price_text(1, day)?.parse().ok())
                    .collect();
                pump.sort_by(f64::total_cmp);
                let median = pump[pump.len() / 2];
                let tgp: i64 =
                    TERMINALS.iter().take(6).map(|t| price(t.1, Centre::Perth, ULP, day)).sum::<i64>() / 6;
                week.push(median - tgp as f64 / 100.0);
                day = day.tomorrow().expect("day");
            }
            lows.push(week.iter().copied().fold(f64::MAX, f64::min));
        }
        for low in &lows {
            assert!((1.0..=9.0).contains(low), "the cycle's low {low} c/L over the terminal price: {lows:?}");
        }
    }

    #[test]
    fn yearly_files_and_their_list_agree() {
        let today = date(2026, 4, 22);
        let list = file_list("http://x/historical-reports/", today);
        assert_eq!(list.first().map(|f| f.file_name.as_str()), Some("FuelWatchWholesale-2026.csv"));
        assert_eq!(list.last().map(|f| f.file_name.as_str()), Some("FuelWatchWholesale-2001.csv"));
        for year in [2001, 2002, 2026] {
            let text = year_file(year, today).expect("a file");
            let listed = list.iter().find(|f| f.file_name.ends_with(&format!("{year}.csv"))).expect("listed");
            assert_eq!(listed.bytes, text.len() as u64, "{year}");
        }
        assert_eq!(year_file(2001, today).expect("header").lines().count(), 1);
        let read =
            wafuel_archive::wholesale::read_file("f", year_file(2026, today).expect("file").as_bytes())
                .expect("reads");
        assert_eq!(read.bad_rows, 0);
        // 112 days of 44 terminal·fuel pairs.
        assert_eq!(read.len(), 112 * 44);
        assert_eq!(year_file(2027, today), None);
    }
}
