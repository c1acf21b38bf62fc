//! `If-None-Match`: a comma list of entity tags, `W/` prefixes ignored (weak comparison),
//! `*` matching any current representation.

/// Whether the header matches the representation's ETag (a quoted strong tag).
pub fn if_none_match_matches(header: &str, etag: &str) -> bool {
    let want = etag.trim_start_matches("W/");
    header.split(',').map(str::trim).any(|tag| tag == "*" || tag.strip_prefix("W/").unwrap_or(tag) == want)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vectors() {
        let etag = "\"abc\"";
        assert!(if_none_match_matches("\"abc\"", etag));
        assert!(if_none_match_matches("W/\"abc\"", etag));
        assert!(if_none_match_matches("\"x\", \"abc\"", etag));
        assert!(if_none_match_matches("*", etag));
        assert!(!if_none_match_matches("\"abd\"", etag));
        assert!(!if_none_match_matches("abc", etag));
        assert!(!if_none_match_matches("", etag));
    }
}
