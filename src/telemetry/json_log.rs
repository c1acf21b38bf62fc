//! The JSON log line, written directly. Same shape as tracing-subscriber's JSON format with
//! flattened event fields and the current span (`timestamp`, `level`, the event's fields,
//! `target`, `span`, `spans`), but a span's fields are written once, as JSON text, when the
//! span is made, and copied into each line as they are; the stock formatter parses them
//! back into a JSON value for every line, which cost more than serving a cached answer.

use std::fmt::{self, Write as _};

use tracing::field::{Field, Visit};
use tracing::{Event, Subscriber};
use tracing_subscriber::field::RecordFields;
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields, FormattedFields};
use tracing_subscriber::registry::LookupSpan;

/// Span fields as the text of a JSON object (`{"request_id":"…","path":"/v1"}`).
#[derive(Debug, Default, Clone, Copy)]
pub struct JsonFields;

/// One JSON object per event, on one line.
#[derive(Debug, Default, Clone, Copy)]
pub struct JsonLine;

/// Escapes what passes through it as the inside of a JSON string.
struct Escaped<'a, W: fmt::Write>(&'a mut W);

impl<W: fmt::Write> fmt::Write for Escaped<'_, W> {
    fn write_str(&mut self, text: &str) -> fmt::Result {
        // Ids, methods, paths and messages almost never need escaping: one pass the compiler
        // can vectorise (no early exit) decides, and such text is written whole.
        if text.bytes().fold(true, |plain, b| plain & (b >= 0x20 && b != b'"' && b != b'\\')) {
            return self.0.write_str(text);
        }
        let mut start = 0;
        for (i, b) in text.bytes().enumerate() {
            let escape = match b {
                b'"' => "\\\"",
                b'\\' => "\\\\",
                b'\n' => "\\n",
                b'\r' => "\\r",
                b'\t' => "\\t",
                0..=0x1f => "",
                _ => continue,
            };
            self.0.write_str(&text[start..i])?;
            if escape.is_empty() {
                write!(self.0, "\\u{b:04x}")?;
            } else {
                self.0.write_str(escape)?;
            }
            start = i + 1;
        }
        self.0.write_str(&text[start..])
    }
}

/// Write `text` as a JSON string (quoted, escaped).
fn write_str(w: &mut impl fmt::Write, text: &str) -> fmt::Result {
    w.write_char('"')?;
    Escaped(w).write_str(text)?;
    w.write_char('"')
}

/// Writes fields as `"name":value` pairs, each preceded by a comma unless it is the first.
struct Pairs<'a, W: fmt::Write> {
    out: &'a mut W,
    first: bool,
    result: fmt::Result,
}

impl<W: fmt::Write> Pairs<'_, W> {
    fn pair(&mut self, field: &Field, value: impl FnOnce(&mut W) -> fmt::Result) {
        if self.result.is_err() {
            return;
        }
        let separator = if self.first { "" } else { "," };
        self.first = false;
        self.result = self
            .out
            .write_str(separator)
            .and_then(|()| write_str(self.out, field.name()))
            .and_then(|()| self.out.write_char(':'))
            .and_then(|()| value(self.out));
    }
}

impl<W: fmt::Write> Visit for Pairs<'_, W> {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.pair(field, |w| write_str(w, value));
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        // Display-recorded values (`%x`) and messages arrive here too; escaped as they are
        // written, never copied first.
        self.pair(field, |w| {
            w.write_char('"')?;
            write!(Escaped(w), "{value:?}")?;
            w.write_char('"')
        });
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        self.pair(field, |w| write!(w, "{value}"));
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        self.pair(field, |w| write!(w, "{value}"));
    }

    fn record_bool(&mut self, field: &Field, value: bool) {
        self.pair(field, |w| write!(w, "{value}"));
    }

    fn record_f64(&mut self, field: &Field, value: f64) {
        if value.is_finite() {
            self.pair(field, |w| write!(w, "{value}"));
        } else {
            self.pair(field, |w| write_str(w, &value.to_string()));
        }
    }

    fn record_error(&mut self, field: &Field, value: &(dyn std::error::Error + 'static)) {
        self.pair(field, |w| write_str(w, &value.to_string()));
    }
}

impl<'writer> FormatFields<'writer> for JsonFields {
    fn format_fields<R: RecordFields>(&self, mut writer: Writer<'writer>, fields: R) -> fmt::Result {
        writer.write_char('{')?;
        let mut pairs = Pairs { out: &mut writer, first: true, result: Ok(()) };
        fields.record(&mut pairs);
        pairs.result?;
        writer.write_char('}')
    }

    /// Fields recorded on a span after it was made join its object.
    fn add_fields(
        &self,
        current: &'writer mut FormattedFields<Self>,
        fields: &tracing::span::Record<'_>,
    ) -> fmt::Result {
        let mut added = String::new();
        let mut pairs = Pairs { out: &mut added, first: true, result: Ok(()) };
        fields.record(&mut pairs);
        pairs.result?;
        if added.is_empty() {
            return Ok(());
        }
        let text = &mut current.fields;
        match text.pop() {
            Some('}') => {
                if text.len() > 1 {
                    text.push(',');
                }
            }
            _ => {
                text.clear();
                text.push('{');
            }
        }
        text.push_str(&added);
        text.push('}');
        Ok(())
    }
}

/// A span's object: its fields' text with its name added.
fn write_span<S>(w: &mut Writer<'_>, span: &tracing_subscriber::registry::SpanRef<'_, S>) -> fmt::Result
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    let extensions = span.extensions();
    let fields = extensions.get::<FormattedFields<JsonFields>>().map_or("{}", |f| f.fields.as_str());
    let inner = fields.strip_prefix('{').and_then(|f| f.strip_suffix('}')).unwrap_or("");
    w.write_char('{')?;
    w.write_str(inner)?;
    w.write_str(if inner.is_empty() { "\"name\":" } else { ",\"name\":" })?;
    write_str(w, span.name())?;
    w.write_char('}')
}

impl<S> FormatEvent<S, JsonFields> for JsonLine
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    fn format_event(
        &self,
        ctx: &FmtContext<'_, S, JsonFields>,
        mut writer: Writer<'_>,
        event: &Event<'_>,
    ) -> fmt::Result {
        let meta = event.metadata();
        writer.write_str("{\"timestamp\":\"")?;
        write_timestamp(&mut writer, jiff::Timestamp::now())?;
        write!(writer, "\",\"level\":\"{}\"", meta.level())?;
        let mut pairs = Pairs { out: &mut writer, first: false, result: Ok(()) };
        event.record(&mut pairs);
        pairs.result?;
        writer.write_str(",\"target\":")?;
        write_str(&mut writer, meta.target())?;
        if let Some(current) = ctx.event_scope().and_then(|mut scope| scope.next()) {
            writer.write_str(",\"span\":")?;
            write_span(&mut writer, &current)?;
        }
        if let Some(scope) = ctx.event_scope() {
            writer.write_str(",\"spans\":[")?;
            for (i, span) in scope.from_root().enumerate() {
                if i > 0 {
                    writer.write_char(',')?;
                }
                write_span(&mut writer, &span)?;
            }
            writer.write_char(']')?;
        }
        writer.write_str("}\n")
    }
}

/// `at` as RFC 3339 in UTC with microseconds (`2026-11-23T14:35:40.123456Z`, as jiff writes
/// it with precision 6). The date and time of day are formatted once per second per thread
/// (every line needs them, and working them out was a fifth of writing a request's line);
/// only the microseconds are written each time, digit by digit (the formatting machinery
/// costs more than the digits).
fn write_timestamp(w: &mut impl fmt::Write, at: jiff::Timestamp) -> fmt::Result {
    thread_local! {
        /// The last second formatted on this thread, without its trailing `Z`.
        static SECOND: std::cell::RefCell<(i64, String)> = const { std::cell::RefCell::new((i64::MIN, String::new())) };
    }
    let (second, micros) = (at.as_second(), at.subsec_microsecond());
    let (Ok(mut micros), false) = (u32::try_from(micros), second < 0) else {
        // Before 1970 the parts count differently; never on a running clock.
        return write!(w, "{at:.6}");
    };
    let mut fraction = *b".000000Z";
    for digit in fraction[1..7].iter_mut().rev() {
        *digit = b'0' + (micros % 10) as u8;
        micros /= 10;
    }
    SECOND.with_borrow_mut(|(formatted, prefix)| {
        if *formatted != second {
            prefix.clear();
            let whole = jiff::Timestamp::from_second(second).map_err(|_| fmt::Error)?;
            write!(prefix, "{whole:.0}")?;
            prefix.pop();
            *formatted = second;
        }
        w.write_str(prefix)?;
        // Only ASCII digits, a dot and a `Z` were written into `fraction`.
        w.write_str(std::str::from_utf8(&fraction).map_err(|_| fmt::Error)?)
    })
}

/// What the line of an answered request says (see `telemetry::observe`).
#[derive(Debug, Clone, Copy)]
pub struct RequestLine<'a> {
    pub request_id: &'a str,
    pub method: &'a str,
    pub path: &'a str,
    pub status: u16,
    pub latency_ms: u128,
}

/// The line `telemetry::observe` logs for an answered request (an INFO event with its
/// `request` span), written without the span and event: the same fields in the same order
/// as [`JsonLine`] gives them, for an answer that needs no span. It is written on every
/// cached answer, so numbers are written with `itoa` and the span's object, which the line
/// carries twice (`span` and `spans`), is written once and copied.
pub fn request_line(line: &mut String, target: &str, fields: &RequestLine<'_>) -> fmt::Result {
    let mut number = itoa::Buffer::new();
    line.push_str("{\"timestamp\":\"");
    write_timestamp(line, jiff::Timestamp::now())?;
    line.push_str("\",\"level\":\"INFO\",\"message\":\"finished processing request\",\"latency\":\"");
    line.push_str(number.format(fields.latency_ms));
    line.push_str(" ms\",\"status\":");
    line.push_str(number.format(fields.status));
    line.push_str(",\"target\":");
    write_str(line, target)?;
    line.push_str(",\"span\":");
    let span = line.len();
    write_request_span(line, fields)?;
    let span = span..line.len();
    line.push_str(",\"spans\":[");
    line.extend_from_within(span);
    line.push_str("]}\n");
    Ok(())
}

/// The `request` span's object, as [`write_span`] writes it for `telemetry`'s span.
fn write_request_span(w: &mut String, line: &RequestLine<'_>) -> fmt::Result {
    w.push_str("{\"request_id\":");
    write_str(w, line.request_id)?;
    w.push_str(",\"method\":");
    write_str(w, line.method)?;
    w.push_str(",\"path\":");
    write_str(w, line.path)?;
    w.push_str(",\"name\":\"request\"}");
    Ok(())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::telemetry::log_sink::Captured;

    /// What `run` logs through this format, as text.
    pub(crate) fn logged(run: impl FnOnce()) -> String {
        let out = Captured::default();
        let sink = out.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_writer(move || sink.clone())
            .fmt_fields(JsonFields)
            .event_format(JsonLine)
            .finish();
        tracing::subscriber::with_default(subscriber, run);
        out.text()
    }

    fn lines(run: impl FnOnce()) -> Vec<serde_json::Value> {
        logged(run).lines().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"))).collect()
    }

    #[test]
    fn lines_are_json_with_fields_span_and_escapes() {
        let got = lines(|| {
            let span = tracing::info_span!("request", request_id = "ab-1", path = "/v1");
            span.in_scope(|| {
                tracing::info!(status = 200u16, ok = true, ratio = 0.5, note = %"a \"quote\"\n", "done \u{1}");
            });
            tracing::warn!(count = -3i64, "outside");
        });
        assert_eq!(got.len(), 2);
        let first = &got[0];
        assert_eq!(first["level"], "INFO");
        assert_eq!(first["message"], "done \u{1}");
        assert_eq!(first["status"], 200);
        assert_eq!(first["ok"], true);
        assert_eq!(first["ratio"], 0.5);
        assert_eq!(first["note"], "a \"quote\"\n");
        assert_eq!(first["target"], module_path!());
        assert_eq!(
            first["span"],
            serde_json::json!({"request_id": "ab-1", "path": "/v1", "name": "request"})
        );
        assert_eq!(first["spans"][0], first["span"]);
        let stamp: jiff::Timestamp = first["timestamp"].as_str().expect("text").parse().expect("RFC 3339");
        assert!(stamp > jiff::Timestamp::UNIX_EPOCH);
        assert_eq!(got[1]["count"], -3);
        assert!(got[1].get("span").is_none());
    }

    #[test]
    fn timestamps_are_written_as_jiff_writes_them() {
        for (second, nanos) in [
            (1_795_000_000, 0),
            (1_795_000_000, 123_456_789),
            (1_795_000_000, 999_999_999),
            (1_795_000_001, 5_000),
            (1_795_000_000, 1_000),
            (0, 0),
            (-1, 500_000_000),
        ] {
            let at = jiff::Timestamp::new(second, nanos).expect("timestamp");
            let mut written = String::new();
            write_timestamp(&mut written, at).expect("written");
            assert_eq!(written, format!("{at:.6}"), "{second} {nanos}");
        }
    }

    #[test]
    fn fields_recorded_later_join_the_span() {
        let got = lines(|| {
            let span = tracing::info_span!("job", kind = "warm", outcome = tracing::field::Empty);
            span.record("outcome", "published");
            span.in_scope(|| {
                let inner = tracing::info_span!("inner", later = tracing::field::Empty);
                inner.record("later", 7u64);
                inner.in_scope(|| tracing::info!("inside"));
            });
        });
        assert_eq!(
            got[0]["spans"][0],
            serde_json::json!({"kind": "warm", "outcome": "published", "name": "job"})
        );
        assert_eq!(got[0]["span"], serde_json::json!({"later": 7, "name": "inner"}));
        assert_eq!(got[0]["spans"][1], got[0]["span"]);
    }
}
