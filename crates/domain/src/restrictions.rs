//! The `restrictions` text: `;`-separated names.

use super::codes::RESTRICTIONS;

/// Codes (ascending, unique; `None` when none is known) and unclassified names.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Restrictions {
    pub codes: Option<Vec<u8>>,
    pub unclassified: Vec<String>,
}

pub fn parse_restrictions(text: &str) -> Restrictions {
    let mut codes = Vec::new();
    let mut unclassified: Vec<String> = Vec::new();
    for part in text.split(';').map(str::trim).filter(|p| !p.is_empty()) {
        match RESTRICTIONS.iter().find(|r| r.name.eq_ignore_ascii_case(part)) {
            Some(r) => codes.push(r.code),
            None => {
                if !unclassified.iter().any(|u| u == part) {
                    unclassified.push(part.to_string());
                }
            }
        }
    }
    codes.sort_unstable();
    codes.dedup();
    Restrictions { codes: (!codes.is_empty()).then_some(codes), unclassified }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vectors() {
        assert_eq!(parse_restrictions("Membership Required;").codes, Some(vec![3]));
        assert_eq!(parse_restrictions("Unmanned site (credit card charges may apply);").codes, Some(vec![1]));
        let members = parse_restrictions("Members only;");
        assert_eq!(members.codes, None);
        assert_eq!(members.unclassified, vec!["Members only".to_string()]);
        assert_eq!(parse_restrictions(""), Restrictions::default());
        assert_eq!(
            parse_restrictions("low aromatic fuel; Membership Required;Low Aromatic Fuel").codes,
            Some(vec![3, 4])
        );
    }
}
