//! The `site-features` grammar: facilities, then opening hours from the first whole word
//! `Open`; hours are written as docs/api.md "`/v1`: the price document" says (`openHours`).

use super::codes::{FEATURE_OPEN_24_HOURS, FEATURES};

/// English weekday names in the order the API writes them.
pub const WEEKDAYS: [&str; 7] =
    ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"];

/// Opening hours per weekday (Monday first); `None` is an unknown day.
pub type WeekHours = [Option<String>; 7];

/// The value of a weekday that is closed.
pub const CLOSED: &str = "Closed";
const WHOLE_DAY: &str = "00:00-24:00";

/// What the hours part of `site-features` says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Hours {
    /// Nothing was said.
    Unknown,
    /// Open continuously, every day.
    TwentyFourSeven,
    /// Known days; `limited` is true when some known day is not a whole day.
    Schedule { days: Box<WeekHours>, limited: bool },
    /// Text that did not follow the grammar; kept verbatim for `sourceNotes.openHours`.
    Unparsed(String),
}

impl Hours {
    /// `is24Hours`: true, false or unknown.
    pub fn is_24_hours(&self) -> Option<bool> {
        match self {
            Hours::TwentyFourSeven => Some(true),
            Hours::Schedule { limited: true, .. } => Some(false),
            _ => None,
        }
    }
}

/// Facilities and hours read from one `site-features` text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SiteFeatures {
    /// Feature codes, ascending, without duplicates.
    pub features: Vec<u8>,
    /// Facility text that matched no known label, in source order, without duplicates.
    pub unclassified: Vec<String>,
    pub hours: Hours,
}

/// Read a `site-features` text.
pub fn parse_site_features(text: &str) -> SiteFeatures {
    let (facilities, hours_text) = match find_open(text) {
        Some(at) => (&text[..at], Some(&text[at..])),
        None => (text, None),
    };
    let mut features = Vec::new();
    let mut unclassified = Vec::new();
    for piece in facilities.split([',', ';']) {
        classify_piece(piece, &mut features, &mut unclassified);
    }
    let hours = match hours_text {
        Some(h) => remembered_hours(h),
        None => Hours::Unknown,
    };
    if hours == Hours::TwentyFourSeven {
        features.push(FEATURE_OPEN_24_HOURS);
    }
    features.sort_unstable();
    features.dedup();
    SiteFeatures { features, unclassified, hours }
}

/// Hours texts already read. Stations share a handful of schedules ("Open 24 hours", a
/// chain's standard week), so a cold build parses each distinct text once.
static HOURS: std::sync::LazyLock<crate::sync::Memo<Hours>> =
    std::sync::LazyLock::new(|| crate::sync::Memo::new(4_096));

fn remembered_hours(text: &str) -> Hours {
    if let Some(known) = HOURS.get(text) {
        return known;
    }
    let hours = parse_hours(text);
    HOURS.insert(text.to_string(), hours.clone());
    hours
}

/// Forget the hours texts read (benchmarks measure a cold build).
pub fn clear_memo() {
    HOURS.clear();
}

/// Byte offset of the first whole word `Open`.
fn find_open(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    text.match_indices("Open").map(|(i, _)| i).find(|&i| {
        let before = i == 0 || !bytes[i - 1].is_ascii_alphanumeric();
        let after = bytes.get(i + 4).is_none_or(|b| !b.is_ascii_alphanumeric());
        before && after
    })
}

/// Known labels as word lists, longest first so the longest label wins.
static LABELS: std::sync::LazyLock<Vec<(Vec<&'static str>, u8)>> = std::sync::LazyLock::new(|| {
    let mut labels: Vec<(Vec<&'static str>, u8)> =
        FEATURES.iter().map(|f| (f.name.split_whitespace().collect(), f.code)).collect();
    labels.sort_by_key(|l| std::cmp::Reverse(l.0.len()));
    labels
});

fn classify_piece(piece: &str, features: &mut Vec<u8>, unclassified: &mut Vec<String>) {
    let words: Vec<&str> = piece.split_whitespace().collect();
    if words.is_empty() {
        return;
    }
    let labels = &*LABELS;
    let mut unknown: Vec<&str> = Vec::new();
    let mut i = 0;
    while i < words.len() {
        let hit = labels.iter().find(|(label, _)| {
            words.len() - i >= label.len()
                && label.iter().zip(&words[i..]).all(|(l, w)| l.eq_ignore_ascii_case(w))
        });
        match hit {
            Some((label, code)) => {
                flush_unknown(&mut unknown, unclassified);
                features.push(*code);
                i += label.len();
            }
            None => {
                unknown.push(words[i]);
                i += 1;
            }
        }
    }
    flush_unknown(&mut unknown, unclassified);
}

fn flush_unknown(unknown: &mut Vec<&str>, unclassified: &mut Vec<String>) {
    if unknown.is_empty() {
        return;
    }
    let text = unknown.join(" ");
    unknown.clear();
    if !unclassified.contains(&text) {
        unclassified.push(text);
    }
}

/// Parse the hours text, which starts with `Open`.
pub fn parse_hours(text: &str) -> Hours {
    let trimmed = text.trim().trim_end_matches([',', ';', ' ']).trim();
    match parse_hours_strict(trimmed) {
        Some(hours) => hours,
        None => Hours::Unparsed(trimmed.to_string()),
    }
}

fn parse_hours_strict(text: &str) -> Option<Hours> {
    let rest = text.strip_prefix("Open")?;
    if !rest.starts_with(char::is_whitespace) {
        return None;
    }
    let rest = rest.trim();
    if rest.eq_ignore_ascii_case("24 hours") {
        return Some(Hours::TwentyFourSeven);
    }
    let mut days: WeekHours = Default::default();
    for chunk in split_day_chunks(rest) {
        let (span, value) = chunk.split_once(':')?;
        let (first, last) = parse_day_span(span)?;
        let value = parse_day_value(value.trim())?;
        let mut day = first;
        loop {
            match &days[day] {
                Some(existing) if *existing != value => return None,
                _ => days[day] = Some(value.clone()),
            }
            if day == last {
                break;
            }
            day = (day + 1) % 7;
        }
    }
    if days.iter().all(Option::is_none) {
        return None;
    }
    if days.iter().all(|d| d.as_deref() == Some(WHOLE_DAY)) {
        return Some(Hours::TwentyFourSeven);
    }
    let limited = days.iter().flatten().any(|d| d != WHOLE_DAY);
    Some(Hours::Schedule { days: Box::new(days), limited })
}

/// Split at commas that are followed by a day token (or range) and a colon.
fn split_day_chunks(text: &str) -> Vec<&str> {
    let mut chunks = Vec::new();
    let mut start = 0;
    for (i, _) in text.match_indices(',') {
        let after = &text[i + 1..];
        if let Some((span, _)) = after.split_once(':')
            && parse_day_span(span).is_some()
        {
            chunks.push(&text[start..i]);
            start = i + 1;
        }
    }
    chunks.push(&text[start..]);
    chunks
}

fn parse_day_span(span: &str) -> Option<(usize, usize)> {
    match span.split_once('-') {
        Some((a, b)) => Some((weekday(a.trim())?, weekday(b.trim())?)),
        None => {
            let d = weekday(span.trim())?;
            Some((d, d))
        }
    }
}

/// Index (Monday = 0) of a full or three-letter English day name.
fn weekday(token: &str) -> Option<usize> {
    WEEKDAYS.iter().position(|full| {
        token.eq_ignore_ascii_case(full) || (token.len() == 3 && token.eq_ignore_ascii_case(&full[..3]))
    })
}

fn parse_day_value(value: &str) -> Option<String> {
    if value == "-" || value.eq_ignore_ascii_case("closed") {
        return Some(CLOSED.to_string());
    }
    let intervals: Option<Vec<String>> = value.split(',').map(|i| parse_interval(i.trim())).collect();
    let intervals = intervals?;
    if intervals.is_empty() {
        return None;
    }
    Some(intervals.join(","))
}

fn parse_interval(text: &str) -> Option<String> {
    let (start, end) = text.split_once('-')?;
    let (sh, sm) = parse_clock(start.trim())?;
    let (eh, em) = parse_clock(end.trim())?;
    if sh == 24 || (eh == 24 && em != 0) {
        return None;
    }
    Some(format!("{sh:02}:{sm:02}-{eh:02}:{em:02}"))
}

/// `H:MM` or `HH:MM`, hour 0–24 (24 only as 24:00, checked by the caller).
fn parse_clock(text: &str) -> Option<(u8, u8)> {
    let (h, m) = text.split_once(':')?;
    if h.is_empty() || h.len() > 2 || m.len() != 2 {
        return None;
    }
    if !h.bytes().chain(m.bytes()).all(|b| b.is_ascii_digit()) {
        return None;
    }
    let hour: u8 = h.parse().ok()?;
    let minute: u8 = m.parse().ok()?;
    (hour <= 24 && minute <= 59).then_some((hour, minute))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A remembered reading is the reading: first time, again, and after the memo is cleared.
    #[test]
    fn remembered_hours_read_as_parsed() {
        for text in [
            "Open 24 hours",
            "Open Mon-Fri: 06:00-19:00, Sat: 07:00-17:00, Sun: -",
            "Open whenever the owner feels like it",
        ] {
            let parsed = parse_hours(text);
            assert_eq!(remembered_hours(text), parsed);
            assert_eq!(remembered_hours(text), parsed);
            clear_memo();
            assert_eq!(remembered_hours(text), parsed);
        }
    }

    fn days(h: &Hours) -> WeekHours {
        match h {
            Hours::Schedule { days, .. } => (**days).clone(),
            other => panic!("not a schedule: {other:?}"),
        }
    }

    #[test]
    fn vector_mystery_facility_24_hours() {
        let sf = parse_site_features(
            "Fuel Cards ATM Toilets Bottled Gas EFTPOS ATM Water Ice Discount Voucher Mystery facility, Open 24 hours",
        );
        assert_eq!(sf.features, vec![3, 4, 5, 6, 8, 13, 14, 15, 16, 21]);
        assert_eq!(sf.hours, Hours::TwentyFourSeven);
        assert_eq!(sf.hours.is_24_hours(), Some(true));
        assert_eq!(sf.unclassified, vec!["Mystery facility".to_string()]);
    }

    #[test]
    fn vector_costco_week() {
        let sf = parse_site_features(
            "EFTPOS, Open Mon: 06:00-21:30, Tue: 06:00-21:30, Wed: 06:00-21:30, Thu: 06:00-21:30, Fri: 06:00-21:30, Sat: 06:00-19:30, Sun: 07:00-19:00",
        );
        assert_eq!(sf.features, vec![8]);
        assert_eq!(sf.hours.is_24_hours(), Some(false));
        let d = days(&sf.hours);
        for weekday in &d[..5] {
            assert_eq!(weekday.as_deref(), Some("06:00-21:30"));
        }
        assert_eq!(d[5].as_deref(), Some("06:00-19:30"));
        assert_eq!(d[6].as_deref(), Some("07:00-19:00"));
        assert!(sf.unclassified.is_empty());
    }

    #[test]
    fn vector_ranges_wrap_and_closed() {
        let sf = parse_site_features("Open Mon-Fri: 06:00-20:30, Sat: 20:00-02:00, Sun: -");
        assert!(sf.features.is_empty());
        let d = days(&sf.hours);
        assert_eq!(d[0].as_deref(), Some("06:00-20:30"));
        assert_eq!(d[4].as_deref(), Some("06:00-20:30"));
        assert_eq!(d[5].as_deref(), Some("20:00-02:00"));
        assert_eq!(d[6].as_deref(), Some(CLOSED));
        assert_eq!(sf.hours.is_24_hours(), Some(false));
    }

    #[test]
    fn vector_bad_hour_is_unparsed() {
        let sf = parse_site_features("Open Mon: 99:00-20:00");
        assert_eq!(sf.hours, Hours::Unparsed("Open Mon: 99:00-20:00".into()));
        assert_eq!(sf.hours.is_24_hours(), None);
    }

    #[test]
    fn vector_empty_pieces() {
        let sf = parse_site_features(", ");
        assert!(sf.features.is_empty());
        assert!(sf.unclassified.is_empty());
        assert_eq!(sf.hours, Hours::Unknown);
    }

    #[test]
    fn vector_leading_space_run_together() {
        let sf = parse_site_features(" ATM Air Bottled Gas EFTPOS Fuel Cards Ice Water, Open 24 hours");
        assert_eq!(sf.features, vec![3, 4, 6, 8, 12, 13, 14, 21]);
        assert!(sf.unclassified.is_empty());
    }

    #[test]
    fn driveway_words_are_kept_as_notes() {
        let sf = parse_site_features(
            "Conditional Driveway Service, ATM Air Bottled AdBlue Pumped AdBlue Truck Friendly, Open 24 hours",
        );
        assert_eq!(sf.features, vec![4, 12, 17, 18, 19, 21]);
        assert_eq!(sf.unclassified, vec!["Conditional Driveway Service".to_string()]);
    }

    #[test]
    fn wrapping_week_range_and_single_digit_hours() {
        let sf = parse_site_features("Open Sat-Mon: 7:00-9:30, Tue-Fri: 06:00-24:00");
        let d = days(&sf.hours);
        assert_eq!(d[5].as_deref(), Some("07:00-09:30"));
        assert_eq!(d[6].as_deref(), Some("07:00-09:30"));
        assert_eq!(d[0].as_deref(), Some("07:00-09:30"));
        assert_eq!(d[1].as_deref(), Some("06:00-24:00"));
    }

    #[test]
    fn all_days_whole_is_24_hours() {
        let sf = parse_site_features("Open Mon-Sun: 00:00-24:00");
        assert_eq!(sf.hours, Hours::TwentyFourSeven);
        assert!(sf.features.contains(&21));
    }

    #[test]
    fn partial_whole_days_are_unknown_not_24() {
        let sf = parse_site_features("Open Mon: 00:00-24:00");
        assert_eq!(sf.hours.is_24_hours(), None);
        assert_eq!(days(&sf.hours)[0].as_deref(), Some(WHOLE_DAY));
    }

    #[test]
    fn conflicting_day_is_unparsed_but_repeat_is_fine() {
        assert!(matches!(parse_hours("Open Mon-Fri: 06:00-20:00, Mon: 07:00-20:00"), Hours::Unparsed(_)));
        assert!(matches!(parse_hours("Open Mon-Fri: 06:00-20:00, Mon: 06:00-20:00"), Hours::Schedule { .. }));
    }

    #[test]
    fn several_intervals_in_one_day() {
        let d = days(&parse_hours("Open Monday: 06:00-12:00, 13:00-18:00, Tue: closed"));
        assert_eq!(d[0].as_deref(), Some("06:00-12:00,13:00-18:00"));
        assert_eq!(d[1].as_deref(), Some(CLOSED));
    }

    #[test]
    fn malformed_chunks_are_unparsed() {
        for text in [
            "Open Mon 06:00-20:00",
            "Open Funday: 06:00-20:00",
            "Open Mon: 24:30-01:00",
            "Open",
            "Open Mon: 06:0-07:00",
        ] {
            assert!(matches!(parse_hours(text), Hours::Unparsed(_)), "{text}");
        }
    }

    #[test]
    fn open_must_be_a_whole_word() {
        let sf = parse_site_features("Opening soon");
        assert_eq!(sf.hours, Hours::Unknown);
        assert_eq!(sf.unclassified, vec!["Opening soon".to_string()]);
    }
}
