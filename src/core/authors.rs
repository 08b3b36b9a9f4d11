//! Authors as names: a byline's text split into people, one person recognised under several
//! spellings (strsim's Jaro–Winkler), and a post's authors from its feed entry and its page.

/// Author names from a byline's text: "By Jo Bloggs and Ann Smith" → ["Jo Bloggs", "Ann Smith"]
/// (role words "By", "Posted by", "Written by", "von", "par", "por" dropped; names separated by
/// `,` `;` `|` `·` `&` and the words and, und, et, y, with, mit, avec).
pub fn split_authors(text: &str) -> Vec<String> {
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
    for word in [
        " & ", " and ", " und ", " et ", " y ", " with ", " mit ", " avec ",
    ] {
        t = t.replace(word, ",");
    }
    t.split([',', ';', '|', '·'])
        .map(|s| without_copyright(s.trim()))
        .filter(|s| !s.is_empty() && s.chars().any(char::is_alphabetic) && s.chars().count() <= 60)
        .collect()
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
            split_authors("By Jo Bloggs and Ann Smith"),
            vec!["Jo Bloggs", "Ann Smith"]
        );
        assert_eq!(
            split_authors("Posted by: Margarethe Kühn"),
            vec!["Margarethe Kühn"]
        );
        assert_eq!(split_authors("Bob"), vec!["Bob"]);
        // A footer, a single-author blog's only byline.
        assert_eq!(
            split_authors("© 2026 Priya Raman Powered by Hexo"),
            vec!["Priya Raman"]
        );
        assert_eq!(
            split_authors("Copyright 2011–2026 Jo Bloggs. All rights reserved."),
            vec!["Jo Bloggs"]
        );
        assert_eq!(
            split_authors("© İlkay Öz Powered by Hugo"),
            vec!["İlkay Öz"]
        );
        assert_eq!(split_authors("Inês Carvalho"), vec!["Inês Carvalho"]);
        assert_eq!(split_authors("Jonas Weiß"), vec!["Jonas Weiß"]);
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
}
