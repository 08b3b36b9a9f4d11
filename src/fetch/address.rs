//! The address policy: a blog on the public internet must not steer the crawler into the
//! machine it runs on or its private network (SSRF). Every request and every redirect hop is
//! checked against the address it actually connects to, after DNS resolution (a custom resolver
//! filters what it returns), so neither a redirect nor DNS rebinding gets around it.
//!
//! Refused unless allowed: loopback, private (RFC 1918, fc00::/7), shared (100.64/10),
//! link-local (169.254/16 with cloud metadata, fe80::/10), multicast, unspecified, broadcast,
//! documentation, benchmarking and reserved ranges, and IPv6 forms that embed one of these
//! (IPv4-mapped, NAT64, 6to4). Allowed: the blog's own host when it was added by such an
//! address (`http://127.0.0.1:8000/`, `http://localhost/`: that host on any port, its comment
//! server may live on another), and the networks `[fetch] allow_private` lists.

use ipnet::IpNet;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;

/// A request refused by the address policy.
#[derive(Debug, Clone, thiserror::Error)]
#[error("refused: {host} is {addrs}, not a public address; everblog reaches private networks only for a blog added on one, or networks listed in [fetch] allow_private")]
pub struct Refused {
    /// The host asked for.
    pub host: String,
    /// What it resolved to.
    pub addrs: String,
}

/// Special-purpose IPv4 ranges that are not publicly routable (IANA registry).
const NOT_PUBLIC_V4: &[(u8, u8, u8, u8, u8)] = &[
    (0, 0, 0, 0, 8),       // "this network", unspecified
    (10, 0, 0, 0, 8),      // private
    (100, 64, 0, 0, 10),   // shared address space (carrier-grade NAT)
    (127, 0, 0, 0, 8),     // loopback
    (169, 254, 0, 0, 16),  // link-local, cloud metadata
    (172, 16, 0, 0, 12),   // private
    (192, 0, 0, 0, 24),    // IETF protocol assignments
    (192, 0, 2, 0, 24),    // documentation
    (192, 88, 99, 0, 24),  // 6to4 relay anycast (deprecated)
    (192, 168, 0, 0, 16),  // private
    (198, 18, 0, 0, 15),   // benchmarking
    (198, 51, 100, 0, 24), // documentation
    (203, 0, 113, 0, 24),  // documentation
    (224, 0, 0, 0, 4),     // multicast
    (240, 0, 0, 0, 4),     // reserved, broadcast
];

/// True for addresses routable on the public internet.
pub fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_public_v4(v4),
        IpAddr::V6(v6) => is_public_v6(v6),
    }
}

fn is_public_v4(ip: Ipv4Addr) -> bool {
    let a = u32::from(ip);
    !NOT_PUBLIC_V4.iter().any(|&(w, x, y, z, bits)| {
        let net = u32::from(Ipv4Addr::new(w, x, y, z));
        let mask = u32::MAX << (32 - bits);
        a & mask == net
    })
}

fn is_public_v6(ip: Ipv6Addr) -> bool {
    let s = ip.segments();
    if let Some(v4) = ip.to_ipv4_mapped() {
        return is_public_v4(v4);
    }
    // NAT64 (64:ff9b::/96) and 6to4 (2002::/16) carry an IPv4 address.
    if s[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        return is_public_v4(Ipv4Addr::new(
            (s[6] >> 8) as u8,
            s[6] as u8,
            (s[7] >> 8) as u8,
            s[7] as u8,
        ));
    }
    if s[0] == 0x2002 {
        return is_public_v4(Ipv4Addr::new(
            (s[1] >> 8) as u8,
            s[1] as u8,
            (s[2] >> 8) as u8,
            s[2] as u8,
        ));
    }
    !(ip.is_unspecified()
        || ip.is_loopback()
        || ip.is_multicast()
        || (s[0] & 0xfe00) == 0xfc00 // unique local fc00::/7
        || (s[0] & 0xffc0) == 0xfe80 // link-local fe80::/10
        || (s[0] & 0xffc0) == 0xfec0 // site-local (deprecated) fec0::/10
        || (s[0] == 0x2001 && s[1] == 0x0db8) // documentation
        || (s[0] == 0x2001 && s[1] < 0x0200) // IETF protocol assignments 2001::/23
        || s[0] == 0x0100 && s[1..4] == [0, 0, 0] // discard-only 100::/64
        || ip.segments()[..5] == [0, 0, 0, 0, 0]) // IPv4-compatible and other ::/80
}

/// Which non-public addresses one fetcher may reach.
#[derive(Debug, Clone, Default)]
pub struct AddressPolicy {
    allowed: Vec<IpNet>,
}

impl AddressPolicy {
    /// A policy allowing the `allow_private` networks, plus the hosts of `trusted` URLs (a
    /// blog's home and feed) that are written as an IP address or `localhost`.
    pub fn new<'a>(allow_private: &[IpNet], trusted: impl IntoIterator<Item = &'a str>) -> Self {
        let mut allowed = allow_private.to_vec();
        for u in trusted {
            match url::Url::parse(u)
                .ok()
                .and_then(|u| u.host().map(|h| h.to_owned()))
            {
                Some(url::Host::Ipv4(a)) => allowed.push(IpNet::from(IpAddr::V4(a))),
                Some(url::Host::Ipv6(a)) => allowed.push(IpNet::from(IpAddr::V6(a))),
                Some(url::Host::Domain(d)) if is_localhost(&d) => {
                    allowed.push("127.0.0.0/8".parse().expect("static network"));
                    allowed.push("::1/128".parse().expect("static network"));
                }
                _ => {}
            }
        }
        AddressPolicy { allowed }
    }

    /// May a request connect to `ip`?
    pub fn allows(&self, ip: IpAddr) -> bool {
        is_public(ip) || self.allowed.iter().any(|n| n.contains(&ip))
    }

    /// Checks an IP-literal host before anything is sent there.
    ///
    /// # Errors
    /// [`Refused`] when the address is not public and not allowed.
    pub fn check_literal(&self, host: &url::Host<&str>) -> Result<(), Refused> {
        let ip = match host {
            url::Host::Ipv4(a) => IpAddr::V4(*a),
            url::Host::Ipv6(a) => IpAddr::V6(*a),
            url::Host::Domain(_) => return Ok(()),
        };
        if self.allows(ip) {
            Ok(())
        } else {
            Err(Refused {
                host: host.to_string(),
                addrs: ip.to_string(),
            })
        }
    }
}

fn is_localhost(name: &str) -> bool {
    let n = name.trim_end_matches('.').to_ascii_lowercase();
    n == "localhost" || n.ends_with(".localhost")
}

/// The DNS resolver of a policed client: the system's resolution, keeping only the addresses
/// the policy allows; none left is a [`Refused`] error.
pub(super) struct PolicyResolver(pub(super) Arc<AddressPolicy>);

impl reqwest::dns::Resolve for PolicyResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let policy = self.0.clone();
        let host = name.as_str().to_string();
        Box::pin(async move {
            let all: Vec<SocketAddr> = tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            let allowed: Vec<SocketAddr> = all
                .iter()
                .copied()
                .filter(|a| policy.allows(a.ip()))
                .collect();
            if allowed.is_empty() && !all.is_empty() {
                let addrs = all
                    .iter()
                    .map(|a| a.ip().to_string())
                    .collect::<Vec<_>>()
                    .join(", ");
                return Err(Box::new(Refused { host, addrs }) as _);
            }
            Ok(Box::new(allowed.into_iter()) as reqwest::dns::Addrs)
        })
    }
}

/// The [`Refused`] error somewhere in an error's chain of sources, if any.
pub fn refusal<'a>(e: &'a (dyn std::error::Error + 'static)) -> Option<&'a Refused> {
    let mut cur: Option<&'a (dyn std::error::Error + 'static)> = Some(e);
    while let Some(err) = cur {
        if let Some(r) = err.downcast_ref::<Refused>() {
            return Some(r);
        }
        cur = err.source();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn public_and_private_addresses() {
        for private in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "224.0.0.1",
            "255.255.255.255",
            "::1",
            "::",
            "fc00::1",
            "fd12::1",
            "fe80::1",
            "ff02::1",
            "::ffff:127.0.0.1",
            "64:ff9b::a00:1",
            "2002:a00:1::",
            "2001:db8::1",
        ] {
            assert!(!is_public(private.parse().unwrap()), "{private}");
        }
        for public in [
            "8.8.8.8",
            "172.32.0.1",
            "93.184.216.34",
            "2606:4700::1111",
            "::ffff:8.8.8.8",
        ] {
            assert!(is_public(public.parse().unwrap()), "{public}");
        }
    }

    #[test]
    fn a_blog_added_on_a_private_address_reaches_that_host_only() {
        let p = AddressPolicy::new(&[], ["http://127.0.0.2:8000/feed.xml"]);
        assert!(p.allows("127.0.0.2".parse().unwrap()));
        assert!(!p.allows("127.0.0.1".parse().unwrap()));
        let local = AddressPolicy::new(&[], ["http://localhost:8000/"]);
        assert!(local.allows("127.0.0.1".parse().unwrap()) && local.allows("::1".parse().unwrap()));
        assert!(!local.allows("10.0.0.1".parse().unwrap()));
        let net = AddressPolicy::new(&["10.1.0.0/16".parse().unwrap()], ["https://blog.example/"]);
        assert!(
            net.allows("10.1.9.9".parse().unwrap()) && !net.allows("10.2.0.1".parse().unwrap())
        );
        assert!(net
            .check_literal(&url::Host::Ipv4("192.168.0.1".parse().unwrap()))
            .is_err());
    }
}
