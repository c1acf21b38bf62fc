//! Phone numbers to E.164 with the Australian default region (libphonenumber rules).

use phonenumber::{Mode, Type, country};

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
    if let Some(number) = usual_australian(text) {
        return Some(number);
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

/// Every kind of number libphonenumber counts as valid (its `number_type` other than
/// `Unknown`). Only whether one matches counts, not which, so the kinds a station's number
/// usually is come first: most numbers then cost one or two pattern matches, not ten.
const VALID_KINDS: [Type; 10] = [
    Type::FixedLine,
    Type::Mobile,
    Type::TollFree,
    Type::SharedCost,
    Type::PremiumRate,
    Type::Voip,
    Type::PersonalNumber,
    Type::Pager,
    Type::Uan,
    Type::Voicemail,
];

/// The E.164 form of an Australian number written the usual ways (`(08) 9981 1151`,
/// `0450 238 181`, `+61 8 9981 1151`: the trunk prefix 0 or "+61 ", then nine digits in
/// groups with single spaces between them) when
/// libphonenumber's Australian metadata says the nine digits are a number; `None` leaves the
/// text to the full parse. Why: parsing costs about 1.6 µs a number and validating 2.6 µs,
/// most of a cold feed build for a state's thousand numbers; this is the same metadata test
/// (`Descriptor::is_match`, as its validator runs it) on digits read directly, once. It can
/// only say "valid"; anything else (other shapes, other regions of +61, invalid numbers)
/// takes the full path, and a test holds the two equal over generated numbers.
fn usual_australian(text: &str) -> Option<String> {
    let mut digits = [0u8; 11];
    let mut count = 0;
    let mut push = |b: u8| -> Option<()> {
        *digits.get_mut(count)? = b;
        count += 1;
        Some(())
    };
    // "+61 " and the national number, or the national number with its trunk prefix.
    let (plus, mut rest) = match text.strip_prefix("+61 ") {
        Some(rest) => {
            push(b'6')?;
            push(b'1')?;
            (true, rest)
        }
        None => (false, text),
    };
    // An area code in brackets, then a space: "(08) ".
    if let Some(bracketed) = rest.strip_prefix('(').filter(|_| !plus) {
        let (area, after) = bracketed.split_once(')')?;
        if area.is_empty() || !area.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        area.bytes().try_for_each(&mut push)?;
        rest = after.strip_prefix(' ').unwrap_or(after);
    }
    // Then groups of digits with one space between them. (Hyphens and dots are left to the
    // full parse: its reading of them has quirks, e.g. "+61709-86-0-2-18" is refused as an
    // invalid country code.)
    let mut after_separator = true;
    for b in rest.bytes() {
        match b {
            b'0'..=b'9' => {
                push(b)?;
                after_separator = false;
            }
            b' ' if !after_separator => after_separator = true,
            _ => return None,
        }
    }
    if after_separator {
        return None;
    }
    let national = match (plus, &digits[..count]) {
        (false, [b'0', rest @ ..]) | (true, [b'6', b'1', rest @ ..]) if rest.len() == 9 => rest,
        _ => return None,
    };
    let national = std::str::from_utf8(national).ok()?;
    let australia = phonenumber::metadata::DATABASE.by_id("AU")?.descriptors();
    let valid = australia.general().is_match(national)
        && VALID_KINDS.iter().any(|kind| australia.get(*kind).is_some_and(|d| d.is_match(national)));
    valid.then(|| format!("+61{national}"))
}

/// The check that the direct reading of the usual shapes agrees with libphonenumber, for the
/// service's test over every number it knows (feature `testing`).
#[cfg(any(test, feature = "testing"))]
pub mod testing {
    use phonenumber::{Mode, country};

    /// The libphonenumber path alone (what `to_e164` did before the usual shapes were read
    /// directly).
    fn full_parse(text: &str) -> Option<String> {
        let number = phonenumber::parse(Some(country::Id::AU), text).ok()?;
        if number.extension().is_some() || !phonenumber::is_valid(&number) {
            return None;
        }
        Some(number.format().mode(Mode::E164).to_string())
    }

    /// Panics unless both paths give the same answer; says whether the direct reading gave it.
    pub fn agree(text: &str) -> bool {
        let full = full_parse(text);
        let fast = super::usual_australian(text);
        if let Some(fast) = &fast {
            assert_eq!(Some(fast), full.as_ref(), "{text:?}: the direct reading agrees with libphonenumber");
        }
        assert_eq!(super::to_e164(text), full, "{text:?}");
        fast.is_some()
    }
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

    /// Both paths give the same answer; whether the direct reading gave it.
    fn assert_same(text: &str) -> bool {
        testing::agree(text)
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(4000))]
        /// Generated numbers of every length near the usual one, every leading digit (all
        /// Australian ranges, Christmas Island's and Cocos' among them), with the usual
        /// prefixes and separators.
        #[test]
        fn the_direct_reading_agrees_with_libphonenumber(
            prefix in proptest::sample::select(vec!["0", "+61", "+61 0", "61", "", "00", "0011 61 ", "+610"]),
            digits in "[0-9]{7,11}",
            separators in proptest::collection::vec(proptest::sample::select(vec!["", "", " ", "-", ".", "(", ")"]), 12),
        ) {
            let mut text = String::from(prefix);
            for (i, d) in digits.chars().enumerate() {
                text.push_str(separators[i]);
                text.push(d);
            }
            assert_same(&text);
        }

        /// Nine digits after the trunk prefix, the shape the direct reading takes, over
        /// every range of +61.
        #[test]
        fn the_direct_reading_agrees_on_every_range(national in "[1-9][0-9]{8}", plus in proptest::bool::ANY) {
            let text = if plus { format!("+61 {national}") } else { format!("(0{}) {}", &national[..1], &national[1..]) };
            assert_same(&text);
        }
    }
}
