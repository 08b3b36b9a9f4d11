//! Authors as names: a byline's text read as people, one person recognised under several
//! spellings (strsim's Jaro–Winkler), and a post's authors from its feed entry and its page.

/// An author and the page the blog keeps for them (`/author/zoe/`, `/blog/authors/jonas`), as
/// the post page links it: issue 42 asks for each author's page where the blog has one.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct AuthorPage {
    /// The author's name, as the post's record names them.
    pub name: String,
    /// The page's address: as the post page writes it ([`super::bylines::author_pages`]),
    /// absolute once the crawl has resolved it against the post's address.
    pub url: String,
}

/// Words that join two people in a byline ("Jo Bloggs and Ann Smith", "Ana & Tom"), in the
/// languages bylines are written in.
const CONJUNCTIONS: [&str; 8] = [
    " & ", " and ", " und ", " et ", " y ", " with ", " mit ", " avec ",
];

/// The people a byline's or an author string's text names, split only as the blog's evidence
/// allows (issue 42): `known` are the names the blog gives alone (its feed's single authors,
/// each a person).
/// - Role words are dropped: "By", "Posted by", "Written by", "von", "par", "por".
/// - A conjunction (`&`, and, und, et, y, with, mit, avec) joins people: "By Jo Bloggs and
///   Ann Smith" → ["Jo Bloggs", "Ann Smith"], with the commas of a list ("A, B and C"); unless
///   the whole text is a name the blog gives alone ("Simon & Schuster").
/// - Commas, `;`, `|` and `·` alone separate people only when each part is a known name.
///   Otherwise what follows a known name is a job title or a bio ("Ada Quill, Staff writer"
///   → ["Ada Quill"]), and a text naming no known person keeps its first part ("Jo Bloggs,
///   Editor" → ["Jo Bloggs"]), never three authors out of "Name, Job title, hobby".
pub fn names_in(text: &str, known: &[String]) -> Vec<String> {
    let mut t = super::text::collapse_whitespace(text);
    for prefix in [
        "posted by",
        "written by",
        "published by",
        "by",
        "author:",
        "authors:",
        "von",
        "par",
        "por",
    ] {
        if let Some(rest) =
            strip_prefix_ignore_case(&t, prefix).filter(|r| r.starts_with([' ', ':']))
        {
            t = rest.trim_start_matches([' ', ':']).to_string();
            break;
        }
    }
    let is_known = |n: &str| known.iter().any(|k| same_person(k, n));
    let whole = without_copyright(&t);
    let whole_known = known
        .iter()
        .any(|k| k.to_lowercase() == whole.to_lowercase());
    let keep = |s: &str| {
        let s = without_copyright(s.trim());
        (!s.is_empty() && s.chars().any(char::is_alphabetic) && s.chars().count() <= 60)
            .then_some(s)
    };
    let joined = !whole_known && CONJUNCTIONS.iter().any(|c| t.contains(c));
    if joined {
        let mut list = t.clone();
        for word in CONJUNCTIONS {
            list = list.replace(word, ",");
        }
        return list.split([',', ';', '|', '·']).filter_map(keep).collect();
    }
    if whole_known {
        return keep(&t).into_iter().collect();
    }
    let parts: Vec<String> = t.split([',', ';', '|', '·']).filter_map(keep).collect();
    if parts.len() <= 1 {
        return parts;
    }
    let named: Vec<String> = parts.iter().filter(|p| is_known(p)).cloned().collect();
    if named.is_empty() {
        parts.into_iter().take(1).collect()
    } else {
        named
    }
}

/// Each feed entry's authors (`raw`, one list of author strings per entry) read as people
/// ([`names_in`]), with the feed's own evidence: the strings that name one person alone,
/// anywhere in the feed, are the known names. A feed's author field holds a name, not a
/// byline: a string with commas that names no known person is kept whole ("Lima, Ana").
pub fn feed_people(raw: &[Vec<String>]) -> Vec<Vec<String>> {
    let alone: Vec<String> = raw
        .iter()
        .flatten()
        .filter(|s| names_in(s, &[]).len() == 1 && !s.contains([',', ';', '|', '·']))
        .cloned()
        .collect();
    raw.iter()
        .map(|names| {
            let mut out: Vec<String> = Vec::new();
            for n in names.iter().flat_map(|s| feed_names(s, &alone)) {
                if !out.contains(&n) {
                    out.push(n);
                }
            }
            out
        })
        .collect()
}

/// One feed author string's people ([`feed_people`]).
fn feed_names(s: &str, alone: &[String]) -> Vec<String> {
    let names = names_in(s, alone);
    let commas_only =
        s.contains([',', ';', '|', '·']) && !CONJUNCTIONS.iter().any(|c| s.contains(c));
    match names.as_slice() {
        [one] if commas_only && !alone.iter().any(|k| same_person(k, one)) => {
            vec![super::text::collapse_whitespace(s)]
        }
        _ => names,
    }
}

/// A copyright line's name: "© 2011–2026 Jo Bloggs. Powered by Hexo" → "Jo Bloggs" (a
/// footer is a single-author blog's only byline); other text unchanged.
fn without_copyright(s: &str) -> String {
    let Some(rest) = ["©", "(c)", "copyright"]
        .iter()
        .find_map(|mark| strip_prefix_ignore_case(s, mark))
    else {
        return s.to_string();
    };
    let rest = rest
        .trim_start_matches(|c: char| c.is_ascii_digit() || " -–—©.".contains(c))
        .trim_start();
    let end = rest
        .char_indices()
        .map(|(i, _)| i)
        .find(|&i| {
            [
                "powered by",
                "all rights reserved",
                "built with",
                "theme by",
            ]
            .iter()
            .any(|w| strip_prefix_ignore_case(&rest[i..], w).is_some())
        })
        .unwrap_or(rest.len());
    rest[..end]
        .trim()
        .trim_end_matches(['.', '-', '–', '|'])
        .trim()
        .to_string()
}

/// `s` after `prefix`, compared ignoring ASCII case; `None` when `s` does not start with it.
fn strip_prefix_ignore_case<'a>(s: &'a str, prefix: &str) -> Option<&'a str> {
    s.get(..prefix.len())
        .filter(|head| head.eq_ignore_ascii_case(prefix))
        .map(|_| &s[prefix.len()..])
}

/// Whether two author names are one person: equal once case, quotes and spacing are folded
/// and a role in parentheses is dropped ("bram okafor" and "Bram Okafor (editor)"), an initial
/// for the first name ("A. Quill" and "Ada Quill"), or a Jaro–Winkler similarity ≥ 0.93
/// (strsim) for spelling variants ("Jonas Oberg" and "Jonas Öberg").
pub fn same_person(a: &str, b: &str) -> bool {
    let fold = |s: &str| -> Vec<String> {
        let s = s.split('(').next().unwrap_or(s);
        s.replace(['\u{2019}', '\u{2018}', '\u{02bc}'], "'")
            .to_lowercase()
            .split(|c: char| c.is_whitespace() || c == '.')
            .filter(|w| !w.is_empty())
            .map(str::to_string)
            .collect()
    };
    let (x, y) = (fold(a), fold(b));
    if x.is_empty() || y.is_empty() {
        return false;
    }
    if x == y {
        return true;
    }
    let initial = |short: &[String], long: &[String]| {
        short.len() == long.len()
            && short.len() >= 2
            && short.last() == long.last()
            && short
                .iter()
                .zip(long)
                .all(|(s, l)| s == l || (s.chars().count() == 1 && l.starts_with(s.as_str())))
    };
    initial(&x, &y) || initial(&y, &x) || strsim::jaro_winkler(&x.join(" "), &y.join(" ")) >= 0.93
}

/// A page's byline names (`byline`, from the blog's author rule) checked against the authors
/// its metadata declares (`declared`), on a blog where that metadata was found to name the
/// feed's authors ([`super::extract::AuthorMetadata::Confirms`], issue 42 part 1): `(names,
/// replaced)`. When the byline names none of the declared people, the rule missed on this page
/// (an absolute path that lands on another element, a "Guest post" label): the declared names,
/// `replaced` true. Otherwise the byline's names, then the declared people it lacks (co-authors
/// the rule's element leaves out). No declared names: the byline as it is.
pub fn confirm_byline(byline: Vec<String>, declared: &[String]) -> (Vec<String>, bool) {
    if declared.is_empty() {
        return (byline, false);
    }
    if !byline
        .iter()
        .any(|b| declared.iter().any(|d| same_person(b, d)))
    {
        return (declared.to_vec(), true);
    }
    let mut names = byline;
    for d in declared {
        if !names.iter().any(|n| same_person(n, d)) {
            names.push(d.clone());
        }
    }
    (names, false)
}

/// A post's authors from its feed entry (`feed`) and its page (`page`): the feed's, unless
/// the page names each of them and more (Pelican's RSS keeps only the first of several
/// authors in `dc:creator`; the byline shows all), then the page's, in its order.
pub fn merge_authors(feed: &[String], page: &[String]) -> Vec<String> {
    let covered = feed.iter().all(|f| page.iter().any(|p| same_person(f, p)));
    if feed.is_empty() || (covered && page.len() > feed.len()) {
        page.to_vec()
    } else {
        feed.to_vec()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bylines() {
        assert_eq!(
            names_in("By Jo Bloggs and Ann Smith", &[]),
            vec!["Jo Bloggs", "Ann Smith"]
        );
        assert_eq!(
            names_in("Posted by: Margarethe Kühn", &[]),
            vec!["Margarethe Kühn"]
        );
        assert_eq!(names_in("Bob", &[]), vec!["Bob"]);
        // A footer, a single-author blog's only byline.
        assert_eq!(
            names_in("© 2026 Priya Raman Powered by Hexo", &[]),
            vec!["Priya Raman"]
        );
        assert_eq!(
            names_in("Copyright 2011–2026 Jo Bloggs. All rights reserved.", &[]),
            vec!["Jo Bloggs"]
        );
        assert_eq!(
            names_in("© İlkay Öz Powered by Hugo", &[]),
            vec!["İlkay Öz"]
        );
        assert_eq!(names_in("Inês Carvalho", &[]), vec!["Inês Carvalho"]);
        assert_eq!(names_in("Jonas Weiß", &[]), vec!["Jonas Weiß"]);
        let known = ["Ada Quill".to_string(), "Bram Okafor".to_string()];
        // Commas alone: people only when each is known; else a name and its job title.
        assert_eq!(
            names_in("Ada Quill, Bram Okafor", &known),
            ["Ada Quill", "Bram Okafor"]
        );
        assert_eq!(
            names_in("Ada Quill, Staff writer, birder", &known),
            ["Ada Quill"]
        );
        assert_eq!(names_in("Jo Bloggs, Editor", &known), ["Jo Bloggs"]);
        assert_eq!(names_in("Name, Job title, hobby", &[]), ["Name"]);
        // A conjunction joins people, with a list's commas.
        assert_eq!(
            names_in("Ana Lima, Tom Weiss and Li Wei", &[]),
            ["Ana Lima", "Tom Weiss", "Li Wei"]
        );
        assert_eq!(
            names_in("Ana Lima & Tom Weiss", &known),
            ["Ana Lima", "Tom Weiss"]
        );
        // Unless the blog gives the whole text alone as one name.
        let firm = ["Simon & Schuster".to_string()];
        assert_eq!(names_in("Simon & Schuster", &firm), ["Simon & Schuster"]);
    }

    #[test]
    fn feed_strings_split_by_the_feeds_own_names() {
        let raw = |s: &[&[&str]]| -> Vec<Vec<String>> {
            s.iter()
                .map(|e| e.iter().map(|n| n.to_string()).collect())
                .collect()
        };
        assert_eq!(
            feed_people(&raw(&[
                &["Tom Weiss"],
                &["Ana Lima, Tom Weiss"],
                &["Ana Lima"]
            ])),
            raw(&[&["Tom Weiss"], &["Ana Lima", "Tom Weiss"], &["Ana Lima"]])
        );
        // "Surname, Given" names nobody alone: one person, kept whole.
        assert_eq!(feed_people(&raw(&[&["Lima, Ana"]])), raw(&[&["Lima, Ana"]]));
    }

    #[test]
    fn one_person_under_several_spellings() {
        assert!(same_person("bram okafor", "Bram Okafor (editor)"));
        assert!(same_person("A. Quill", "Ada Quill"));
        assert!(same_person("Jonas Oberg", "Jonas Öberg"));
        assert!(same_person("Dan O’Connor", "dan o'connor"));
        assert!(!same_person("Ada Quill", "Bram Okafor"));
        assert!(!same_person("A. Quill", "B. Quill"));
        assert!(!same_person("Priya Raman", "Priya Ramanathan Iyer"));
        let v = |names: &[&str]| names.iter().map(|n| n.to_string()).collect::<Vec<_>>();
        // The page names the feed's author and a co-author: the page's list.
        assert_eq!(
            merge_authors(
                &v(&["Margarethe Kühn"]),
                &v(&["Margarethe Kühn", "Owen Pritchard"])
            ),
            v(&["Margarethe Kühn", "Owen Pritchard"])
        );
        // The page names someone else (a footer's owner): the feed's.
        assert_eq!(
            merge_authors(&v(&["Jonas Öberg"]), &v(&["Priya Raman", "Chidi Okafor"])),
            v(&["Jonas Öberg"])
        );
        assert_eq!(merge_authors(&[], &v(&["Ann"])), v(&["Ann"]));
    }

    #[test]
    fn a_byline_is_confirmed_completed_or_replaced_by_the_declared_authors() {
        let v = |names: &[&str]| names.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            confirm_byline(v(&["Ann Smith"]), &[]),
            (v(&["Ann Smith"]), false)
        );
        assert_eq!(
            confirm_byline(v(&["Ann Smith"]), &v(&["ann smith", "Li Wei"])),
            (v(&["Ann Smith", "Li Wei"]), false)
        );
        assert_eq!(
            confirm_byline(v(&["Guest Post"]), &v(&["Li Wei"])),
            (v(&["Li Wei"]), true)
        );
    }
}
