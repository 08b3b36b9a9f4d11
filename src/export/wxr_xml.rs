//! How WXR writes its values, shared by the item writers (`export::wxr`, `export::wxr_media`):
//! text and CDATA elements as WordPress writes them, post meta, WordPress's dates (local,
//! GMT, `pubDate`, the zero date), and the items' IDs ([`ItemIds`]).

use super::feeds::xml_chars;
use chrono::{DateTime, FixedOffset, Utc};
use quick_xml::events::{BytesCData, BytesEnd, BytesStart, BytesText, Event};
use quick_xml::Writer;
use std::collections::HashSet;
use std::io::Write;

/// One `wp:postmeta`.
pub(super) fn meta<W: Write>(w: &mut Writer<W>, key: &str, value: &str) -> std::io::Result<()> {
    w.create_element("wp:postmeta").write_inner_content(|w| {
        cdata(w, "wp:meta_key", key)?;
        cdata(w, "wp:meta_value", value)
    })?;
    Ok(())
}

/// `YYYY-MM-DD HH:MM:SS` in the date's own offset, or WordPress's zero date.
pub(super) fn local(d: Option<DateTime<FixedOffset>>) -> String {
    d.map_or(NO_DATE.into(), |d| {
        d.format("%Y-%m-%d %H:%M:%S").to_string()
    })
}

/// An item's `pubDate` (RFC 2822): its publication time, else when the archive fetched it.
/// WordPress gives every item one, and readers of the format expect it (PyPI `wpparser`
/// fails on an item without).
pub(super) fn pub_date(
    published: Option<DateTime<FixedOffset>>,
    archived: DateTime<Utc>,
) -> String {
    published.map_or_else(|| archived.to_rfc2822(), |p| p.to_rfc2822())
}

/// `YYYY-MM-DD HH:MM:SS` in UTC, or WordPress's zero date.
pub(super) fn gmt(d: Option<DateTime<FixedOffset>>) -> String {
    d.map_or(NO_DATE.into(), |d| {
        d.with_timezone(&Utc)
            .format("%Y-%m-%d %H:%M:%S")
            .to_string()
    })
}

pub(super) fn text<W: Write>(w: &mut Writer<W>, name: &str, value: &str) -> std::io::Result<()> {
    w.create_element(name)
        .write_text_content(BytesText::new(&xml_chars(value)))?;
    Ok(())
}

/// `<name><![CDATA[value]]></name>`, as WordPress writes text.
pub(super) fn cdata<W: Write>(w: &mut Writer<W>, name: &str, value: &str) -> std::io::Result<()> {
    w.write_event(Event::Start(BytesStart::new(name)))?;
    cdata_events(w, value)?;
    w.write_event(Event::End(BytesEnd::new(name)))
}

pub(super) fn cdata_events<W: Write>(w: &mut Writer<W>, value: &str) -> std::io::Result<()> {
    let value = xml_chars(value);
    if value.is_empty() {
        return w.write_event(Event::CData(BytesCData::new("")));
    }
    for part in BytesCData::escaped(&value) {
        w.write_event(Event::CData(part))?;
    }
    Ok(())
}

/// WordPress's "no date" (what it writes for drafts), for posts and comments without one.
pub(super) const NO_DATE: &str = "0000-00-00 00:00:00";

/// The `wp:post_id`s of one WXR file, each used once: a post's own WordPress ID where its page
/// shows it (as WordPress's own export gives it: restored, the post keeps its `?p=` address),
/// the other items numbered from 4 up in the order asked, past the IDs WordPress gives at
/// install (1 the sample post, 2 the sample page, 3 the privacy policy page: a restored post
/// holding ID 3 becomes the privacy policy every footer links) and past the posts' own IDs.
#[derive(Debug)]
pub(super) struct ItemIds {
    /// The posts' own IDs: no other item takes one.
    own: HashSet<u64>,
    used: HashSet<u64>,
    next: u64,
}

impl ItemIds {
    /// IDs for a file whose posts' own IDs are `own`.
    pub fn new(own: impl IntoIterator<Item = u64>) -> ItemIds {
        ItemIds {
            own: own.into_iter().collect(),
            used: HashSet::new(),
            next: 4,
        }
    }

    /// `own` when given and not yet used, else the next free number.
    pub fn take(&mut self, own: Option<u64>) -> u64 {
        if let Some(id) = own.filter(|id| self.used.insert(*id)) {
            return id;
        }
        loop {
            let id = self.next;
            self.next += 1;
            if !self.own.contains(&id) && self.used.insert(id) {
                return id;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_ids_kept_the_others_numbered_around_them() {
        let mut ids = ItemIds::new([5, 49]);
        assert_eq!(ids.take(Some(49)), 49);
        assert_eq!(ids.take(None), 4, "past WordPress's install-time IDs");
        assert_eq!(ids.take(None), 6, "the posts' own IDs skipped");
        assert_eq!(ids.take(Some(49)), 7, "an ID once");
        assert_eq!(ids.take(Some(5)), 5);
    }
}
