//! URL features for the crawl frontier's k-nearest-neighbour estimate (paper §4.3).
//!
//! A URL becomes a fixed-width vector of [`DIMENSIONS`] floats by feature hashing (signed, so
//! collisions cancel rather than add up), then L2 normalisation, so that Euclidean distance ranks
//! like cosine similarity. The tokens are chosen so that URLs of the same *kind* of page are
//! close:
//!
//! - `depth=N`: the number of path segments (capped at 8);
//! - per segment position `i < 6`: its literal value (`seg0=blog`), weighted ×2 for the first
//!   segment (the site section matters most), and its shape (`shape1=year`): `num`, `year`
//!   (4 digits 1990–2099), `small` (1–2 digits: months, days, page numbers), `date`
//!   (`2019-03-04`), `slug` (words joined by `-` or `_`), `word`, `id` (letters and digits
//!   mixed), each with its file extension if any (`slug.html`);
//! - the last segment's shape and extension again (pages of one kind end alike);
//! - every query key (`q=page`) and whether there is a query.
//!
//! So `/blog/page/2/` is near `/blog/page/3/` and `/blog/tag/x/`, far from
//! `/docs/sql-select.html`, which is near `/docs/sql-insert.html`.

use url::Url;

/// Width of the feature vectors.
pub const DIMENSIONS: usize = 64;

/// A URL's feature vector (L2-normalised; all zeros only for an empty URL).
pub type Features = [f64; DIMENSIONS];

fn shape(segment: &str) -> String {
    let (stem, ext) = match segment.rsplit_once('.') {
        Some((s, e))
            if !s.is_empty() && e.len() <= 5 && e.chars().all(|c| c.is_ascii_alphanumeric()) =>
        {
            (s, Some(e.to_ascii_lowercase()))
        }
        _ => (segment, None),
    };
    let digits = stem.chars().all(|c| c.is_ascii_digit());
    let base = if digits && stem.len() == 4 && (stem.starts_with("19") || stem.starts_with("20")) {
        "year"
    } else if digits && stem.len() <= 2 {
        "small"
    } else if digits {
        "num"
    } else if stem.len() == 10
        && stem.as_bytes()[4] == b'-'
        && stem.as_bytes()[7] == b'-'
        && stem.chars().filter(|c| c.is_ascii_digit()).count() == 8
    {
        "date"
    } else if stem.contains(['-', '_']) {
        "slug"
    } else if stem.chars().all(|c| c.is_alphabetic()) {
        "word"
    } else {
        "id"
    };
    match ext {
        Some(e) => format!("{base}.{e}"),
        None => base.to_string(),
    }
}

fn add(v: &mut Features, token: &str, weight: f64) {
    // FNV-1a: stable across runs and platforms (priorities must replay exactly).
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in token.bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    let sign = if h >> 63 == 1 { -1.0 } else { 1.0 };
    v[(h % DIMENSIONS as u64) as usize] += sign * weight;
}

/// The feature vector of a URL (see the module documentation for the tokens).
pub fn features(url: &Url) -> Features {
    let mut v = [0.0; DIMENSIONS];
    let segments: Vec<&str> = url.path().split('/').filter(|s| !s.is_empty()).collect();
    add(&mut v, &format!("depth={}", segments.len().min(8)), 1.0);
    for (i, s) in segments.iter().take(6).enumerate() {
        let lit = s.to_ascii_lowercase();
        add(
            &mut v,
            &format!("seg{i}={lit}"),
            if i == 0 { 2.0 } else { 1.0 },
        );
        add(&mut v, &format!("shape{i}={}", shape(s)), 1.0);
    }
    match segments.last() {
        Some(last) => add(&mut v, &format!("last={}", shape(last)), 1.0),
        None => add(&mut v, "root", 2.0),
    }
    if url.path().ends_with('/') {
        add(&mut v, "slash", 0.5);
    }
    let mut any_query = false;
    for (k, _) in url.query_pairs() {
        any_query = true;
        add(&mut v, &format!("q={}", k.to_ascii_lowercase()), 1.0);
    }
    add(&mut v, if any_query { "query" } else { "noquery" }, 0.5);
    let norm = v.iter().map(|x| x * x).sum::<f64>().sqrt();
    if norm > 0.0 {
        v.iter_mut().for_each(|x| *x /= norm);
    }
    v
}

/// Euclidean distance between two feature vectors.
pub fn distance(a: &Features, b: &Features) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y) * (x - y))
        .sum::<f64>()
        .sqrt()
}

/// Distance-weighted k-nearest-neighbour estimate (Dudani 1976): neighbour `i` at distance
/// `d_i` (sorted ascending, `d_1` nearest, `d_k` farthest) weighs `(d_k − d_i) / (d_k − d_1)`,
/// all 1 when `d_k = d_1`. Returns the weighted mean of the values; 0 with no neighbour.
pub fn dudani(neighbours: &[(f64, f64)]) -> f64 {
    let Some(&(d1, _)) = neighbours.first() else {
        return 0.0;
    };
    let dk = neighbours.last().map_or(d1, |n| n.0);
    if dk - d1 <= f64::EPSILON {
        return neighbours.iter().map(|n| n.1).sum::<f64>() / neighbours.len() as f64;
    }
    let (mut num, mut den) = (0.0, 0.0);
    for &(d, value) in neighbours {
        let w = (dk - d) / (dk - d1);
        num += w * value;
        den += w;
    }
    if den > 0.0 {
        num / den
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(u: &str) -> Features {
        features(&Url::parse(u).unwrap())
    }

    #[test]
    fn similar_urls_are_close() {
        let page2 = f("http://s.org/blog/page/2/");
        let page3 = f("http://s.org/blog/page/3/");
        let tag = f("http://s.org/blog/tag/roses/");
        let doc = f("http://s.org/docs/sql-select.html");
        let doc2 = f("http://s.org/docs/sql-insert.html");
        assert!(distance(&page2, &page3) < distance(&page2, &doc));
        assert!(distance(&page2, &tag) < distance(&page2, &doc));
        assert!(distance(&doc, &doc2) < distance(&doc, &tag));
        assert!((page2.iter().map(|x| x * x).sum::<f64>() - 1.0).abs() < 1e-9);
    }

    #[test]
    fn shapes() {
        assert_eq!(shape("2019"), "year");
        assert_eq!(shape("03"), "small");
        assert_eq!(shape("a-post.html"), "slug.html");
        assert_eq!(shape("2019-03-04"), "date");
        assert_eq!(shape("index"), "word");
        assert_eq!(shape("p123"), "id");
    }

    #[test]
    fn dudani_weights() {
        assert_eq!(dudani(&[]), 0.0);
        assert_eq!(dudani(&[(0.1, 4.0), (0.1, 2.0)]), 3.0);
        // The farthest neighbour weighs 0, the nearest 1.
        assert!(
            (dudani(&[(0.0, 10.0), (0.5, 0.0), (1.0, 100.0)]) - (10.0 * 1.0 + 0.0 * 0.5) / 1.5)
                .abs()
                < 1e-9
        );
    }
}
