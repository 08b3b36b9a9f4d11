//! A private PostgreSQL cluster for the tests: Debian's `postgresql` binaries
//! (`/usr/lib/postgresql/<version>/bin`), a data directory of its own under the temporary
//! directory, its own port on 127.0.0.1, trust authentication for the `postgres` user, no fsync.
//! Started by [`Cluster::start`], stopped and removed when dropped; nothing is left running.
//! Run as root, the server runs as the `postgres` user (`runuser`), which owns the directory.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A running private cluster.
pub struct Cluster {
    bin: PathBuf,
    dir: PathBuf,
    pub port: u16,
    /// Server settings after the defaults (`-c name=value …`).
    settings: String,
}

fn as_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

/// The newest installed PostgreSQL's `bin` directory.
fn bin_dir() -> Option<PathBuf> {
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(|e| {
            let e = e.ok()?;
            let v = e.file_name().to_string_lossy().parse().ok()?;
            let bin = e.path().join("bin");
            bin.join("initdb").exists().then_some((v, bin))
        })
        .collect();
    versions.sort();
    versions.pop().map(|(_, bin)| bin)
}

impl Cluster {
    /// Makes and starts a cluster; `None` (saying why) when PostgreSQL is not installed
    /// (`bash .ci/setup --tests` installs it).
    pub fn start() -> Option<Cluster> {
        Cluster::start_with("")
    }

    /// [`Cluster::start`] with server `settings` (`-c name=value …`) over the defaults (no
    /// fsync), e.g. `-c fsync=on` for a benchmark.
    pub fn start_with(settings: &str) -> Option<Cluster> {
        let Some(bin) = bin_dir() else {
            eprintln!("skipped: PostgreSQL is not installed (bash .ci/setup --tests installs it)");
            return None;
        };
        static N: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "everblog-pg-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let cluster = Cluster {
            bin,
            dir,
            port: super::free_port(),
            settings: settings.to_string(),
        };
        if as_root() {
            let ok = Command::new("chown")
                .args(["-R", "postgres:postgres"])
                .arg(&cluster.dir)
                .status()
                .unwrap();
            assert!(ok.success(), "chown of {}", cluster.dir.display());
        }
        cluster.run(
            "initdb",
            &[
                "-D",
                &cluster.data().to_string_lossy(),
                "-U",
                "postgres",
                "--auth=trust",
                "-E",
                "UTF8",
                "--no-sync",
            ],
        );
        cluster.pg_ctl("start");
        Some(cluster)
    }

    fn data(&self) -> PathBuf {
        self.dir.join("data")
    }

    /// Runs a PostgreSQL program as the cluster's owner; panics with its output on failure.
    fn run(&self, program: &str, args: &[&str]) {
        let exe = self.bin.join(program);
        let mut cmd = if as_root() {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(&exe);
            c
        } else {
            Command::new(&exe)
        };
        let out = cmd.args(args).current_dir(&self.dir).output().unwrap();
        assert!(
            out.status.success(),
            "{program} {args:?}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }

    fn pg_ctl(&self, action: &str) {
        let options = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off {}",
            self.port,
            self.dir.display(),
            self.settings
        );
        let data = self.data().to_string_lossy().to_string();
        let log = self.dir.join("server.log").to_string_lossy().to_string();
        let mut args = vec!["-D", &data, "-l", &log, "-w", "-m", "fast"];
        if action != "stop" {
            args.extend(["-o", &options]);
        }
        args.push(action);
        self.run("pg_ctl", &args);
    }

    /// Restarts the server (every connection is cut).
    pub fn restart(&self) {
        self.pg_ctl("restart");
    }

    /// Stops the server, leaving its data.
    pub fn stop(&self) {
        self.pg_ctl("stop");
    }

    /// Starts a stopped server again.
    pub fn start_again(&self) {
        self.pg_ctl("start");
    }

    /// Creates database `name` and returns its URL.
    pub fn database(&self, name: &str) -> String {
        let mut c = postgres::Client::connect(&self.url("postgres"), postgres::NoTls).unwrap();
        c.batch_execute(&format!("CREATE DATABASE {name}")).unwrap();
        self.url(name)
    }

    /// The URL of database `name`.
    pub fn url(&self, name: &str) -> String {
        format!("postgres://postgres@127.0.0.1:{}/{name}", self.port)
    }

    /// The server's log so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("server.log")).unwrap_or_default()
    }

    /// The cluster's directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let data = self.data().to_string_lossy().to_string();
        let exe = self.bin.join("pg_ctl");
        let args = ["-D", &data, "-w", "-m", "immediate", "stop"];
        let _ = if as_root() {
            Command::new("runuser")
                .args(["-u", "postgres", "--"])
                .arg(&exe)
                .args(args)
                .output()
        } else {
            Command::new(&exe).args(args).output()
        };
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
