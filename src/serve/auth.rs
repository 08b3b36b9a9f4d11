//! HTTP Basic for the reader (`[serve] auth`): users with argon2 hashes, read once from the
//! auth file, checked so that the answer's timing says nothing and a flood of guesses cannot
//! slow readers (issue 32):
//! - an unknown name costs one argon2 verification, as a known one does (against a known
//!   user's hash, the result thrown away), so names cannot be told apart by timing;
//! - verifications run on the blocking pool, at most [`ARGON_AT_ONCE`] at a time, never on
//!   the async threads that answer readers;
//! - failed attempts are counted per user name and client address (issue 45): a name tried
//!   `max_failures` times wrongly from one address within [`FAILURE_WINDOW`] is answered 429
//!   from there until the window passes, without a verification; a reader behind the same
//!   proxy or NAT, under another name, is not;
//! - credentials verified once are remembered (their SHA-256) and let in before any limit is
//!   asked: a browser's every request does not pay argon2 again, and a flood of guesses never
//!   refuses a reader already let in.

use anyhow::{bail, Context, Result};
use argon2::password_hash::{PasswordHash, PasswordVerifier};
use axum::http::HeaderValue;
use std::collections::{HashMap, HashSet};
use std::net::IpAddr;
use std::path::Path;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// argon2 verifications running at once, at most.
pub const ARGON_AT_ONCE: usize = 2;

/// The window failed attempts are counted in, per user name and client.
pub const FAILURE_WINDOW: Duration = Duration::from_secs(60);

/// What a request's credentials get.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Let in.
    Granted,
    /// 401.
    Refused,
    /// 429: too many failures for this name from this client; retry after this long.
    TooMany(Duration),
}

/// Whom failed attempts are counted against: the name sent (its first [`MAX_NAME`] characters)
/// and the client's address.
type Attempted = (String, Option<IpAddr>);

/// Characters of a sent user name kept to count its failures.
const MAX_NAME: usize = 256;

/// The accepted users and what the checks remember.
pub struct Credentials {
    /// Name → argon2 PHC string.
    users: Vec<(String, String)>,
    /// SHA-256 of `name:password` pairs already verified.
    verified: Mutex<HashSet<[u8; 32]>>,
    /// Per user name (as sent, known or not) and client: failures in the current window, and
    /// when it started.
    failures: Mutex<HashMap<Attempted, (u32, Instant)>>,
    /// Failures allowed per name and client per window.
    max_failures: u32,
    argon: tokio::sync::Semaphore,
}

impl Credentials {
    /// Reads an auth file: one `name:PHC` per line (argon2 PHC strings as `argon2 SALT -id -e`
    /// prints them), `#` comments and blank lines ignored; `max_failures` per client per
    /// [`FAILURE_WINDOW`] per user name and client.
    ///
    /// # Errors
    /// One line naming the file (and line) when it cannot be read, a line has no `name:`, a
    /// hash is not an argon2 PHC string, or it holds no user.
    pub fn read(path: &Path, max_failures: u32) -> Result<Credentials> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read the auth file {}", path.display()))?;
        let mut users = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let Some((name, phc)) = line.split_once(':') else {
                bail!(
                    "{} line {}: expected `name:$argon2id$…` (one user per line)",
                    path.display(),
                    i + 1
                );
            };
            let ok =
                PasswordHash::new(phc).is_ok_and(|h| h.algorithm.as_str().starts_with("argon2"));
            if !ok {
                bail!(
                    "{} line {}: the hash of {name:?} is not an argon2 PHC string (make one with `echo -n PASSWORD | argon2 $(openssl rand -hex 8) -id -e`)",
                    path.display(),
                    i + 1
                );
            }
            users.push((name.to_string(), phc.to_string()));
        }
        if users.is_empty() {
            bail!(
                "{} holds no user (lines `name:$argon2id$…`)",
                path.display()
            );
        }
        Ok(Credentials {
            users,
            verified: Mutex::new(HashSet::new()),
            failures: Mutex::new(HashMap::new()),
            max_failures: max_failures.max(1),
            argon: tokio::sync::Semaphore::new(ARGON_AT_ONCE),
        })
    }

    /// Checks a request's `Authorization` header from `client`.
    pub async fn check(
        self: &std::sync::Arc<Self>,
        authorization: Option<&HeaderValue>,
        client: Option<IpAddr>,
    ) -> Verdict {
        use base64::Engine;
        let decoded = authorization
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Basic "))
            .and_then(|b| {
                base64::engine::general_purpose::STANDARD
                    .decode(b.trim())
                    .ok()
            });
        let Some(decoded) = decoded else {
            // No credentials at all: the browser's first request, not a guess.
            return Verdict::Refused;
        };
        let key: [u8; 32] = {
            use sha2::Digest;
            sha2::Sha256::digest(&decoded).into()
        };
        // Credentials let in before are let in, whatever guesses came since.
        if self.verified.lock().expect("lock").contains(&key) {
            return Verdict::Granted;
        }
        let text = String::from_utf8_lossy(&decoded).into_owned();
        let (name, password) = text.split_once(':').unwrap_or((text.as_str(), ""));
        let attempted: Attempted = (name.chars().take(MAX_NAME).collect(), client);
        if let Some(wait) = self.blocked(&attempted) {
            return Verdict::TooMany(wait);
        }
        // An unknown name is checked against a known user's hash: the same work, refused.
        let (known, phc) = match self.users.iter().find(|(n, _)| n == name) {
            Some((_, phc)) => (true, phc.clone()),
            None => (false, self.users[0].1.clone()),
        };
        let password = password.to_string();
        let verified = match self.argon.acquire().await {
            Ok(_permit) => tokio::task::spawn_blocking(move || {
                PasswordHash::new(&phc).is_ok_and(|h| {
                    argon2::Argon2::default()
                        .verify_password(password.as_bytes(), &h)
                        .is_ok()
                })
            })
            .await
            .unwrap_or(false),
            Err(_) => false,
        };
        if known && verified {
            self.verified.lock().expect("lock").insert(key);
            Verdict::Granted
        } else {
            self.failed(attempted);
            Verdict::Refused
        }
    }

    /// How long `attempted` must wait, when it has used up its failures.
    fn blocked(&self, attempted: &Attempted) -> Option<Duration> {
        let failures = self.failures.lock().expect("lock");
        let (n, since) = failures.get(attempted)?;
        let elapsed = since.elapsed();
        (*n >= self.max_failures && elapsed < FAILURE_WINDOW).then(|| FAILURE_WINDOW - elapsed)
    }

    fn failed(&self, attempted: Attempted) {
        let mut failures = self.failures.lock().expect("lock");
        // Forget windows that passed, so the map does not grow with every address ever seen.
        if failures.len() > 10_000 {
            failures.retain(|_, (_, since)| since.elapsed() < FAILURE_WINDOW);
        }
        let entry = failures
            .entry(attempted.clone())
            .or_insert((0, Instant::now()));
        if entry.1.elapsed() >= FAILURE_WINDOW {
            *entry = (0, Instant::now());
        }
        entry.0 += 1;
        if entry.0 == self.max_failures {
            tracing::warn!(name = attempted.0, client = ?attempted.1, "serve: too many failed logins for this name from this client; refusing them for a minute");
        }
    }
}
