//! Where `demo --now` (`WAFUEL_NOW`) starts the demo's clock: the forms it takes and the span
//! of days it may name.

/// Where `demo --now` starts its clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StartAt {
    /// An instant (RFC 3339).
    Instant(jiff::Timestamp),
    /// A Perth wall-clock time on the machine's Perth day plus `days`.
    Perth { days: i8, time: jiff::civil::Time },
    /// A Perth date and time.
    Civil(jiff::civil::DateTime),
}

impl StartAt {
    /// The instant this names, read against `now` (the machine's time).
    pub fn resolve(self, now: jiff::Timestamp) -> jiff::Timestamp {
        match self {
            StartAt::Instant(at) => at,
            StartAt::Perth { days, time } => {
                let day = wafuel_domain::time::perth_now(now).date();
                let day = day.checked_add(jiff::Span::new().days(days)).unwrap_or(day);
                wafuel_domain::time::perth_instant(day.to_datetime(time))
            }
            StartAt::Civil(at) => wafuel_domain::time::perth_instant(at),
        }
    }
}

/// Every form `--now` takes, as `--help` lists them: each refusal names them all.
const START_FORMS: &str = "give `today HH:MM`, `tomorrow HH:MM`, `yesterday HH:MM`, `HH:MM`, \
                           `YYYY-MM-DDTHH:MM` (Perth time) or an RFC 3339 time such as \
                           2026-12-07T14:29:00+08:00, from 2001-01-01 to 2099-12-31";

/// The span of Perth days `--now` may start in: the prices' whole era, nothing the
/// simulated origin's dates cannot say.
const START_SPAN: (jiff::civil::Date, jiff::civil::Date) =
    (jiff::civil::Date::constant(2001, 1, 1), jiff::civil::Date::constant(2099, 12, 31));

/// `--now` as given: refused unless it names a real instant of the span, in one of the forms.
pub fn parse_start(text: &str) -> Result<StartAt, String> {
    let text = text.trim();
    let refuse = |why: &str| format!("{text:?} {why}; {START_FORMS}");
    let in_span = |day: jiff::civil::Date| (START_SPAN.0..=START_SPAN.1).contains(&day);
    let clock = |t: &str| jiff::civil::Time::strptime("%H:%M", t.trim()).map_err(|_| refuse("is not a time"));
    // Anything with a date in it is a date-time, said wrong or not: never read as HH:MM.
    if text.len() >= 10 && text.as_bytes().get(4) == Some(&b'-') {
        if let Ok(at) = jiff::civil::DateTime::strptime("%Y-%m-%dT%H:%M", text) {
            return if in_span(at.date()) { Ok(StartAt::Civil(at)) } else { Err(refuse("is out of range")) };
        }
        let at = text.parse::<jiff::Timestamp>().map_err(|_| refuse("is not a real date and time"))?;
        // An offset past ±14:00 names no place on Earth (RFC 3339 allows any hour).
        let offset = text.rsplit(['+', '-']).next().and_then(|o| o.split(':').next());
        let z = text.ends_with(['Z', 'z']);
        if !z && offset.and_then(|h| h.parse::<u8>().ok()).is_none_or(|h| h > 14) {
            return Err(refuse("has no valid offset (at most ±14:00)"));
        }
        let day = wafuel_domain::time::perth_now(at).date();
        return if in_span(day) { Ok(StartAt::Instant(at)) } else { Err(refuse("is out of range")) };
    }
    let lower = text.to_ascii_lowercase();
    let (days, time) = match lower.split_once(' ') {
        Some(("today", t)) => (0, t),
        Some(("tomorrow", t)) => (1, t),
        Some(("yesterday", t)) => (-1, t),
        None => (0, lower.as_str()),
        Some(_) => return Err(refuse("is not a start the demo knows")),
    };
    clock(time).map(|time| StartAt::Perth { days, time })
}
