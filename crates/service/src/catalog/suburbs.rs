//! `meta.unknownSuburbs`: the suburbs a station query names that no station of the day is
//! in, each with the known names a user may have meant (a letter dropped or doubled, two
//! swapped). An empty answer to `suburb=elenbrook` then says why, and what to ask instead.

use std::collections::{BTreeSet, HashSet};

use super::SelectionDays;
use wafuel_domain::documents::{StationRow, UnknownSuburb};
use wafuel_domain::key::fold_text;
use wafuel_query::Selection;

/// Close names offered per unknown suburb, at most.
const MAX_SUGGESTIONS: usize = 3;

/// The suburbs of `asked` (upper case, as the query holds them) that none of the answer's
/// own rows is in: the only ones the day's whole catalog must be read for.
pub(super) fn unlisted<'a>(asked: &'a [String], rows: &[StationRow]) -> Vec<&'a String> {
    let listed: HashSet<String> = rows.iter().map(|r| fold_text(&r.row.station.suburb)).collect();
    asked.iter().filter(|s| !listed.contains(&s.to_lowercase())).collect()
}

/// The selection whose stations say which suburb names exist: the day's whole catalog
/// (every brand and region).
pub(super) fn whole_day(selection: &Selection) -> Selection {
    Selection { brands: None, regions: None, suburbs: None, surrounding: None, ..selection.clone() }
}

/// Of `unlisted`, the suburbs no station of the day's whole catalog (`whole`) is in, each
/// with the known names a user may have meant.
pub(super) fn unknown(unlisted: Vec<&String>, whole: &SelectionDays) -> Vec<UnknownSuburb> {
    let known: BTreeSet<String> = whole.data.quotes().map(|q| q.station.suburb.to_uppercase()).collect();
    let folded: HashSet<String> = known.iter().map(|k| k.to_lowercase()).collect();
    unlisted
        .into_iter()
        .filter(|s| !folded.contains(&s.to_lowercase()))
        .map(|s| UnknownSuburb { suburb: s.clone(), did_you_mean: close_names(s, &known) })
        .collect()
}

/// Up to three known names within a few edits of `asked` (about one in four letters), or
/// that begin with it, nearest first.
fn close_names(asked: &str, known: &BTreeSet<String>) -> Vec<String> {
    let asked = asked.to_uppercase();
    let allowed = (asked.chars().count() / 4).max(1);
    let mut close: Vec<(usize, &String)> = known
        .iter()
        .filter_map(|k| {
            let d = strsim::damerau_levenshtein(&asked, k);
            let prefix = asked.chars().count() >= 3 && k.starts_with(&asked);
            (d <= allowed || prefix).then_some((if prefix { d.min(allowed) } else { d }, k))
        })
        .collect();
    close.sort();
    close.into_iter().take(MAX_SUGGESTIONS).map(|(_, k)| k.clone()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn close_names_are_a_few_edits_away_or_begin_with_the_text() {
        let known: BTreeSet<String> =
            ["ELLENBROOK", "ELLENBROOK WEST", "BULLSBROOK", "EDEN HILL", "SOUTH PERTH", "PERTH"]
                .into_iter()
                .map(String::from)
                .collect();
        assert_eq!(close_names("ELENBROOK", &known), ["ELLENBROOK"]);
        assert_eq!(close_names("ELLENBRO", &known), ["ELLENBROOK", "ELLENBROOK WEST"]);
        assert_eq!(close_names("PRETH", &known), ["PERTH"], "two letters swapped");
        assert!(close_names("KALGOORLIE", &known).is_empty());
    }
}
