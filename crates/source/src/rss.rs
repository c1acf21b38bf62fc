//! A strict, streaming reader of the FuelWatch RSS: it accepts the real feed's quirks and
//! rejects anything unsafe or out of shape, whole. Pure: text in, records out.

use std::borrow::Cow;

use quick_xml::Reader;
use quick_xml::escape::resolve_predefined_entity;
use quick_xml::events::{BytesStart, Event};

use super::error::SourceError;
use wafuel_domain::record::SourceRecord;

/// Elements may nest at most this deep (the feed needs 4).
pub const MAX_DEPTH: usize = 32;
/// A single response may carry at most this many items.
pub const MAX_ITEMS: usize = 5_000;

/// The items of one feed, in source order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Feed<'a> {
    pub items: Vec<SourceRecord<'a>>,
}

/// Where the reader stands.
#[derive(Debug)]
enum Place {
    /// Before the root element.
    Prolog,
    /// Inside `<rss>` (depth 1), `<channel>` (2) or elsewhere; see `depth`.
    Body,
    /// After `</rss>`: only whitespace and comments may follow.
    Epilog,
}

struct Parser<'a> {
    depth: usize,
    place: Place,
    channels: usize,
    in_channel: bool,
    item: Option<ItemState<'a>>,
    items: Vec<SourceRecord<'a>>,
}

/// The item being read.
#[derive(Default)]
struct ItemState<'a> {
    record: SourceRecord<'a>,
    /// Known fields seen so far, as bits of their index (each may appear once).
    seen_known: u32,
    /// Unknown child elements seen so far (rare; each may appear once too).
    seen_other: Vec<String>,
    /// The known field being read (its index), and its text so far.
    field: Option<(usize, Option<Cow<'a, str>>)>,
    /// Depth of an unknown child element being skipped.
    skipping: Option<usize>,
}

fn bad(reason: impl Into<String>) -> SourceError {
    SourceError::invalid_feed(reason)
}

fn name_of<'a>(start: &'a BytesStart<'_>) -> &'a str {
    start.name().into_inner()
}

/// Parse a whole feed document.
pub fn parse(text: &str) -> Result<Feed<'_>, SourceError> {
    let mut reader = Reader::from_str(text);
    let config = reader.config_mut();
    config.trim_text(false);
    config.check_end_names = true;
    config.expand_empty_elements = false;
    config.check_comments = true;
    let mut p = Parser {
        depth: 0,
        place: Place::Prolog,
        channels: 0,
        in_channel: false,
        item: None,
        items: Vec::new(),
    };
    loop {
        let event = reader
            .read_event()
            .map_err(|e| bad(format!("not well-formed XML at byte {}: {e}", reader.error_position())))?;
        match event {
            Event::Eof => break,
            Event::DocType(_) => return Err(bad("DOCTYPE declarations are not accepted")),
            Event::Decl(decl) => p.declaration(&decl)?,
            Event::PI(_) => return Err(bad("processing instructions are not accepted")),
            Event::Comment(_) => {}
            Event::Start(start) => p.open(&start, false)?,
            Event::Empty(start) => {
                p.open(&start, true)?;
                p.close()?;
            }
            Event::End(_) => p.close()?,
            Event::Text(t) => p.text(t.xml10_content())?,
            Event::CData(c) => p.text(c.into_inner())?,
            Event::GeneralRef(r) => {
                let resolved: Cow<'_, str> =
                    match r.resolve_char_ref().map_err(|e| bad(format!("bad character reference: {e}")))? {
                        Some(c) => Cow::Owned(c.to_string()),
                        None => {
                            let name = r.xml10_content();
                            Cow::Borrowed(
                                resolve_predefined_entity(&name)
                                    .ok_or_else(|| bad(format!("undeclared entity &{name};")))?,
                            )
                        }
                    };
                p.text(resolved)?;
            }
        }
    }
    match p.place {
        Place::Epilog => Ok(Feed { items: p.items }),
        Place::Prolog => Err(bad("no root element")),
        Place::Body => Err(bad("document ends inside an element")),
    }
}

impl<'a> Parser<'a> {
    fn declaration(&self, decl: &quick_xml::events::BytesDecl<'_>) -> Result<(), SourceError> {
        if !matches!(self.place, Place::Prolog) {
            return Err(bad("XML declaration after the prolog"));
        }
        if let Some(Ok(encoding)) = decl.encoding() {
            let encoding = encoding.to_ascii_lowercase();
            if encoding != "utf-8" && encoding != "utf8" {
                return Err(bad(format!("declared encoding {encoding} is not UTF-8")));
            }
        }
        Ok(())
    }

    fn open(&mut self, start: &BytesStart<'_>, empty: bool) -> Result<(), SourceError> {
        self.depth += 1;
        if self.depth >= MAX_DEPTH {
            return Err(bad(format!("elements nest {} deep", self.depth)));
        }
        let name = name_of(start);
        match self.place {
            Place::Prolog => {
                if name != "rss" {
                    return Err(bad(format!("root element is <{name}>, not <rss>")));
                }
                self.place = Place::Body;
                return Ok(());
            }
            Place::Epilog => return Err(bad("content after the root element")),
            Place::Body => {}
        }
        if let Some(item) = &mut self.item {
            return item.open(name, self.depth);
        }
        match (self.depth, name) {
            (2, "channel") => {
                self.channels += 1;
                if self.channels > 1 {
                    return Err(bad("more than one <channel>"));
                }
                self.in_channel = !empty;
            }
            (3, "item") if self.in_channel => {
                if self.items.len() >= MAX_ITEMS {
                    return Err(SourceError::too_large(format!(
                        "more than {MAX_ITEMS} items in one response"
                    )));
                }
                self.item = Some(ItemState::default());
            }
            // Channel metadata (title, ttl, image, …) and unknown elements are not needed.
            _ => {}
        }
        Ok(())
    }

    fn close(&mut self) -> Result<(), SourceError> {
        let depth = self.depth;
        self.depth = self.depth.saturating_sub(1);
        if let Some(item) = &mut self.item {
            if depth == 3 {
                // `</item>`
                let done = self.item.take().map(|i| i.record).unwrap_or_default();
                self.items.push(done);
            } else {
                item.close(depth);
            }
            return Ok(());
        }
        match depth {
            1 => {
                if self.channels != 1 {
                    return Err(bad("<rss> must hold exactly one <channel>"));
                }
                self.place = Place::Epilog;
            }
            2 => self.in_channel = false,
            _ => {}
        }
        Ok(())
    }

    fn text(&mut self, text: Cow<'a, str>) -> Result<(), SourceError> {
        match self.place {
            Place::Prolog | Place::Epilog if text.trim().is_empty() => Ok(()),
            Place::Prolog => Err(bad("text before the root element")),
            Place::Epilog => Err(bad("content after the root element")),
            Place::Body => {
                if let Some(item) = &mut self.item {
                    item.text(text);
                }
                Ok(())
            }
        }
    }
}

impl<'a> ItemState<'a> {
    fn open(&mut self, name: &str, depth: usize) -> Result<(), SourceError> {
        if self.skipping.is_some() {
            return Ok(());
        }
        if self.field.is_some() {
            return Err(bad(format!("element <{name}> inside an item field")));
        }
        if depth != 4 {
            return Ok(());
        }
        let twice = || bad(format!("<{name}> appears twice in one item"));
        match SourceRecord::field_index(name) {
            Some(index) => {
                if self.seen_known & (1 << index) != 0 {
                    return Err(twice());
                }
                self.seen_known |= 1 << index;
                self.field = Some((index, None));
            }
            None => {
                if self.seen_other.iter().any(|n| n == name) {
                    return Err(twice());
                }
                self.seen_other.push(name.to_string());
                self.skipping = Some(depth);
            }
        }
        Ok(())
    }

    fn close(&mut self, depth: usize) {
        if let Some(skip_depth) = self.skipping {
            if depth == skip_depth {
                self.skipping = None;
            }
            return;
        }
        if let Some((index, value)) = self.field.take()
            && let Some(slot) = self.record.slot(index)
        {
            *slot = Some(value.unwrap_or(Cow::Borrowed("")));
        }
    }

    /// Most fields are one borrowed piece of text; entities split a field into pieces, which
    /// are joined into an owned string.
    fn text(&mut self, text: Cow<'a, str>) {
        if let Some((_, value)) = &mut self.field {
            match value {
                None => *value = Some(text),
                Some(existing) => existing.to_mut().push_str(&text),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wafuel_domain::error_code::ErrorCode;

    const ONE: &str = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\r\n<rss version=\"2.0\"><channel><title>t</title><item><title>179: A &amp; B</title><brand>BP</brand><date>2022-12-05</date><price>179</price><trading-name>A &amp; B</trading-name><location>X</location><address>1  Main St</address><phone /><latitude>-32</latitude><longitude>115.1</longitude><site-features>, </site-features><extra><deep>ignored</deep></extra></item></channel></rss>\r\n";

    #[test]
    fn reads_quirks() {
        let feed = parse(ONE).expect("parses");
        assert_eq!(feed.items.len(), 1);
        let item = &feed.items[0];
        assert_eq!(item.trading_name.as_deref(), Some("A & B"));
        assert_eq!(item.price.as_deref(), Some("179"));
        assert_eq!(item.phone.as_deref(), Some(""));
        assert_eq!(item.restrictions, None);
        assert_eq!(item.latitude.as_deref(), Some("-32"));
    }

    fn rejects(text: &str) -> SourceError {
        parse(text).expect_err("must be rejected")
    }

    #[test]
    fn rejects_unsafe_and_misshapen_documents() {
        let cases = [
            "<!DOCTYPE rss [<!ENTITY x \"y\">]><rss><channel></channel></rss>",
            "<rss><channel><item><title>&x;</title></item></channel></rss>",
            "<feed><channel></channel></feed>",
            "<rss></rss>",
            "<rss><channel></channel><channel></channel></rss>",
            "<rss><channel></channel></rss>junk",
            "<rss><channel></channel></rss><rss/>",
            "<rss><channel><item><price>1</price><price>1</price></item></channel></rss>",
            "<rss><channel><item><x/><x/></item></channel></rss>",
            "<rss><channel><item><price>1<b>2</b></price></item></channel></rss>",
            "<rss><channel><item><title>a & b</title></item></channel></rss>",
            "<rss><channel>",
            "",
            "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><rss><channel></channel></rss>",
            "<?php x ?><rss><channel></channel></rss>",
        ];
        for text in cases {
            assert_eq!(rejects(text).code, ErrorCode::InvalidFeed, "{text}");
        }
    }

    #[test]
    fn depth_limit() {
        let mut doc = String::from("<rss><channel>");
        for _ in 0..40 {
            doc.push_str("<a>");
        }
        for _ in 0..40 {
            doc.push_str("</a>");
        }
        doc.push_str("</channel></rss>");
        assert!(rejects(&doc).reason.contains("deep"));
        let mut ok = String::from("<rss><channel>");
        ok.push_str(&"<a>".repeat(28));
        ok.push_str(&"</a>".repeat(28));
        ok.push_str("</channel></rss>");
        assert!(parse(&ok).is_ok());
    }

    #[test]
    fn item_limit() {
        let item = "<item><title>x</title></item>";
        let at_limit = format!("<rss><channel>{}</channel></rss>", item.repeat(MAX_ITEMS));
        assert_eq!(parse(&at_limit).expect("5000 is fine").items.len(), MAX_ITEMS);
        let over = format!("<rss><channel>{}</channel></rss>", item.repeat(MAX_ITEMS + 1));
        assert_eq!(rejects(&over).code, ErrorCode::ResponseTooLarge);
    }

    #[test]
    fn char_references_and_cdata() {
        let feed =
            parse("<rss><channel><item><brand>&#65;&#x42;<![CDATA[<C>]]></brand></item></channel></rss>")
                .expect("parses");
        assert_eq!(feed.items[0].brand.as_deref(), Some("AB<C>"));
    }

    #[test]
    fn empty_channel_is_an_empty_feed() {
        assert_eq!(parse("<rss version=\"2.0\"><channel/></rss>").expect("parses").items.len(), 0);
    }
}
