//! Rendering: document models (`model::documents`, market figures) to bytes, and bytes to
//! their served representations. Pure: reaches nothing but `model/` and the Perth calendar.

pub(crate) mod asset;
pub mod brands;
pub mod errors;
pub mod events;
pub mod forecast;
pub mod jsonapi;
pub(crate) mod legacy;
pub(crate) mod logos;
pub mod market;
pub mod representation;
pub mod stations;
pub mod status;
pub mod wholesale;

/// A document that could not be written. Writing into memory fails only on a bug (a value
/// serde cannot represent, a CSV writer in a bad state), never on input, but the cause is kept
/// and answered as an internal error rather than hidden as an empty body.
#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    #[error("JSON: {0}")]
    Json(#[from] serde_json::Error),
    #[error("CSV: {0}")]
    Csv(#[from] csv::Error),
    #[error("CSV flush: {0}")]
    CsvFlush(String),
}

/// A cell a spreadsheet opens as text, never as a formula: text that starts with `=`, `+`,
/// `-`, `@`, a tab or a carriage return gets a leading `'`, as OWASP advises against CSV
/// injection (a station or terminal name comes from an upstream we do not control). A number
/// (`-1.5`, `+2`) stays a number.
pub fn spreadsheet_safe(cell: &str) -> std::borrow::Cow<'_, str> {
    let risky = cell.starts_with(['=', '+', '-', '@', '\t', '\r']);
    if risky && cell.parse::<f64>().is_err() {
        std::borrow::Cow::Owned(format!("'{cell}"))
    } else {
        std::borrow::Cow::Borrowed(cell)
    }
}

/// Write one CSV record, every cell [`spreadsheet_safe`]: every CSV route's rows go through it.
pub fn safe_record<T: AsRef<str>>(
    w: &mut csv::Writer<Vec<u8>>,
    cells: impl IntoIterator<Item = T>,
) -> Result<(), csv::Error> {
    let cells: Vec<T> = cells.into_iter().collect();
    w.write_record(cells.iter().map(|c| spreadsheet_safe(c.as_ref()).into_owned()))
}

/// The bytes a CSV writer over a `Vec` wrote.
pub fn csv_bytes(w: csv::Writer<Vec<u8>>) -> Result<Vec<u8>, RenderError> {
    w.into_inner().map_err(|e| RenderError::CsvFlush(e.error().to_string()))
}

#[cfg(test)]
mod csv_tests {
    use super::*;

    #[test]
    fn formulas_are_neutralised_and_numbers_kept() {
        for (cell, safe) in [
            ("=HYPERLINK(\"http://x\")", "'=HYPERLINK(\"http://x\")"),
            ("+61 8 9311", "'+61 8 9311"),
            ("-cmd", "'-cmd"),
            ("@SUM(A1)", "'@SUM(A1)"),
            ("\tx", "'\tx"),
            ("\rx", "'\rx"),
            ("-1.5", "-1.5"),
            ("+2", "+2"),
            ("Ampol Kwinana", "Ampol Kwinana"),
            ("", ""),
        ] {
            assert_eq!(spreadsheet_safe(cell), safe, "{cell:?}");
        }
    }
}
