//! The frontier's priority model (paper §4.3): for every page fetched, a training point
//! (features of its URL, L(u) = number of post links on the page); for a URL not yet fetched,
//! the distance-weighted average of L over its k nearest training points (Dudani 1976), found
//! with a linfa-nn k-d tree.
//!
//! Identical feature vectors are merged into one point holding the mean of their L values (a
//! k-d tree degrades on duplicates, and a site has many pages of one shape). linfa-nn indexes
//! borrow their data and cannot grow, so [`PriorityModel::estimate`] builds one index per batch
//! of URLs: O(n log n) for n distinct points, then O(log n)-ish per query.

use super::url_features::{dudani, features, Features, DIMENSIONS};
use linfa_nn::{distance::L2Dist, CommonNearestNeighbour, NearestNeighbour};
use ndarray::Array2;
use rustc_hash::FxHashMap;
use url::Url;

/// The training set of the kNN estimate.
#[derive(Debug, Clone)]
pub struct PriorityModel {
    k: usize,
    index: FxHashMap<[u64; DIMENSIONS], usize>,
    points: Vec<Features>,
    sums: Vec<f64>,
    counts: Vec<u32>,
    observations: usize,
}

impl PriorityModel {
    /// An empty model using `k` neighbours (the original crawler used 5).
    pub fn new(k: usize) -> PriorityModel {
        PriorityModel {
            k: k.max(1),
            index: FxHashMap::default(),
            points: Vec::new(),
            sums: Vec::new(),
            counts: Vec::new(),
            observations: 0,
        }
    }

    /// Number of observations so far (pages fed to the model).
    pub fn observations(&self) -> usize {
        self.observations
    }

    /// Number of distinct training points.
    pub fn distinct_points(&self) -> usize {
        self.points.len()
    }

    /// Adds a training point: the page at `url` holds `post_links` links to posts.
    pub fn observe(&mut self, url: &Url, post_links: usize) {
        let f = features(url);
        let key = f.map(f64::to_bits);
        self.observations += 1;
        match self.index.get(&key) {
            Some(&i) => {
                self.sums[i] += post_links as f64;
                self.counts[i] += 1;
            }
            None => {
                self.index.insert(key, self.points.len());
                self.points.push(f);
                self.sums.push(post_links as f64);
                self.counts.push(1);
            }
        }
    }

    /// Estimated L for each URL: the Dudani-weighted mean of its k nearest training points.
    /// All zeros while the model is empty.
    pub fn estimate(&self, urls: &[Url]) -> Vec<f64> {
        if self.points.is_empty() || urls.is_empty() {
            return vec![0.0; urls.len()];
        }
        let data =
            Array2::from_shape_fn((self.points.len(), DIMENSIONS), |(i, j)| self.points[i][j]);
        let Ok(nn) = CommonNearestNeighbour::KdTree.from_batch(&data, L2Dist) else {
            return vec![0.0; urls.len()];
        };
        let k = self.k.min(self.points.len());
        urls.iter()
            .map(|u| {
                let f = features(u);
                let q = ndarray::Array1::from(f.to_vec());
                let Ok(found) = nn.k_nearest(q.view(), k) else {
                    return 0.0;
                };
                let mut neighbours: Vec<(f64, f64)> = found
                    .into_iter()
                    .map(|(_, i)| {
                        (
                            super::url_features::distance(&self.points[i], &f),
                            self.sums[i] / self.counts[i] as f64,
                        )
                    })
                    .collect();
                neighbours.sort_by(|a, b| a.0.total_cmp(&b.0));
                dudani(&neighbours)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn learns_which_sections_hold_post_links() {
        let mut m = PriorityModel::new(3);
        let u = |s: &str| Url::parse(s).unwrap();
        for i in 1..5 {
            m.observe(&u(&format!("http://s.org/blog/page/{i}/")), 10);
            m.observe(&u(&format!("http://s.org/docs/func-{i}.html")), 0);
        }
        m.observe(&u("http://s.org/docs/func-1.html"), 0);
        assert_eq!(m.observations(), 9);
        assert_eq!(m.distinct_points(), 8);
        let est = m.estimate(&[
            u("http://s.org/blog/page/9/"),
            u("http://s.org/docs/func-99.html"),
        ]);
        assert!(est[0] > 5.0 && est[1] < 1.0, "{est:?}");
        assert_eq!(
            PriorityModel::new(5).estimate(&[u("http://s.org/")]),
            vec![0.0]
        );
    }
}
