//! Talking to systemd when it runs the daemon (`systemd/everblog.service`, `Type=notify`): state
//! notifications ([`sd_notify`]: READY, WATCHDOG, STOPPING, STATUS) and the watchdog interval
//! it asks for ([`watchdog_interval`]). Without systemd both are no-ops.

use std::time::Duration;

/// Tells systemd (when it started us with `Type=notify`) about our state: `READY=1`,
/// `WATCHDOG=1`, `STOPPING=1`, `STATUS=…`. A datagram to `$NOTIFY_SOCKET` (a path, or an abstract
/// name starting with `@`); nothing when the variable is unset. Errors are ignored: the daemon
/// works the same without systemd.
pub fn sd_notify(state: &str) {
    let Some(path) = std::env::var_os("NOTIFY_SOCKET") else {
        return;
    };
    let Ok(sock) = std::os::unix::net::UnixDatagram::unbound() else {
        return;
    };
    let path = path.to_string_lossy().into_owned();
    let _ = match path.strip_prefix('@') {
        Some(name) => {
            use std::os::linux::net::SocketAddrExt;
            std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes())
                .and_then(|a| sock.send_to_addr(state.as_bytes(), &a))
        }
        None => sock.send_to(state.as_bytes(), &path),
    };
}

/// The watchdog interval systemd asks for (`$WATCHDOG_USEC`), halved as sd_watchdog_enabled
/// recommends.
pub(super) fn watchdog_interval() -> Option<Duration> {
    let usec: u64 = std::env::var("WATCHDOG_USEC").ok()?.parse().ok()?;
    (usec > 0).then(|| Duration::from_micros(usec / 2))
}
