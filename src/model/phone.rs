//! Phone numbers to E.164 with the Australian default region (libphonenumber rules).

use phonenumber::{Mode, country};

/// What a source phone text says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Phone {
    /// Nothing was given (`""` or `--EMPTY--`).
    Absent,
    /// One valid number, in E.164.
    Valid(String),
    /// Text that is not exactly one valid number; kept for `sourceNotes.phone`.
    Invalid(String),
}

impl Phone {
    pub fn e164(&self) -> Option<&str> {
        match self {
            Phone::Valid(n) => Some(n),
            _ => None,
        }
    }
}

/// Longest text handed to the phone parser; real numbers are far shorter.
const MAX_PHONE_LEN: usize = 64;

/// Results of the (slow, metadata-driven) libphonenumber parse, by input text. The function
/// is pure and a state holds about a thousand distinct numbers, so remembering them turns
/// the feed's most expensive field into a lookup.
static MEMO: std::sync::LazyLock<crate::sync::Memo<Phone>> =
    std::sync::LazyLock::new(|| crate::sync::Memo::new(20_000));

/// Forget remembered phone results (benchmarks measure a cold start).
pub fn clear_memo() {
    MEMO.clear();
}

/// Normalise a phone text.
pub fn normalize_phone(text: &str) -> Phone {
    let trimmed = text.trim();
    if trimmed.is_empty() || trimmed == "--EMPTY--" {
        return Phone::Absent;
    }
    if let Some(known) = MEMO.get(trimmed) {
        return known;
    }
    let result = match to_e164(trimmed) {
        Some(number) => Phone::Valid(number),
        None => Phone::Invalid(trimmed.to_string()),
    };
    MEMO.insert(trimmed.to_string(), result.clone());
    result
}

fn to_e164(text: &str) -> Option<String> {
    // Only digits and the usual separators may appear: words ("or", "ext") mean several
    // numbers or an extension, which the API cannot represent as one E.164 value.
    let allowed = |c: char| c.is_ascii_digit() || matches!(c, ' ' | '+' | '(' | ')' | '-' | '.');
    if text.len() > MAX_PHONE_LEN || !text.chars().all(allowed) {
        return None;
    }
    if text.chars().skip(1).any(|c| c == '+') {
        return None;
    }
    let owned = text.to_string();
    // The phonenumber crate has panicked on odd inputs in the past; a panic here must
    // become "invalid", never a failed feed.
    let parsed = std::panic::catch_unwind(move || {
        let number = phonenumber::parse(Some(country::Id::AU), &owned).ok()?;
        if number.extension().is_some() || !phonenumber::is_valid(&number) {
            return None;
        }
        Some(number.format().mode(Mode::E164).to_string())
    })
    .ok()
    .flatten()?;
    let digits = parsed.strip_prefix('+')?;
    let shape_ok = (2..=15).contains(&digits.len())
        && digits.bytes().all(|b| b.is_ascii_digit())
        && !digits.starts_with('0');
    shape_ok.then_some(parsed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vectors() {
        let valid = [
            ("(08) 9981 1151", "+61899811151"),
            ("+61 8 9981 1151", "+61899811151"),
            ("0450 238 181", "+61450238181"),
            ("1300 655 055", "+611300655055"),
            ("0894549833", "+61894549833"),
            ("08 9328 6800", "+61893286800"),
            ("(07) 3088 1200", "+61730881200"),
        ];
        for (text, e164) in valid {
            assert_eq!(normalize_phone(text), Phone::Valid(e164.into()), "{text}");
        }
        assert_eq!(normalize_phone("123"), Phone::Invalid("123".into()));
        let two = "call 08 9981 1151 or 04 1234 5678";
        assert_eq!(normalize_phone(two), Phone::Invalid(two.into()));
        assert_eq!(normalize_phone(""), Phone::Absent);
        assert_eq!(normalize_phone("  "), Phone::Absent);
        assert_eq!(normalize_phone("--EMPTY--"), Phone::Absent);
    }
}
