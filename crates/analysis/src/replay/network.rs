//! Networks the replay predicts for: presets, user-defined Hockney parameters, message-time
//! tables, and the sets of scaled configurations the classification needs.

use serde::{Deserialize, Serialize};

/// A network in Hockney's model: an `n`-byte message takes `latency_s + n / bandwidth_bytes_per_s`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Network {
    /// Name shown in tables and JSON (`10GbE`, `QDR`, or the user's spec).
    pub name: String,
    /// α: time of a zero-byte message, in seconds.
    pub latency_s: f64,
    /// 1/β: bytes per second once a message is under way.
    pub bandwidth_bytes_per_s: f64,
}

impl Network {
    /// 1 Gb Ethernet: 1 Gb/s and 50 µs, the small-message MPI latency typical of TCP over GbE.
    pub fn ethernet_1g() -> Network {
        Network {
            name: "1GbE".into(),
            latency_s: 50e-6,
            bandwidth_bytes_per_s: 1e9 / 8.0,
        }
    }

    /// 10 Gb Ethernet: 10 Gb/s and 5 µs, the values of Classification poster.
    pub fn ethernet_10g() -> Network {
        Network {
            name: "10GbE".into(),
            latency_s: 5e-6,
            bandwidth_bytes_per_s: 10e9 / 8.0,
        }
    }

    /// InfiniBand QDR (4x): 40 Gb/s signalling with 8b/10b coding leaves 32 Gb/s of data, and
    /// about 1.3 µs MPI latency.
    pub fn infiniband_qdr() -> Network {
        Network {
            name: "QDR".into(),
            latency_s: 1.3e-6,
            bandwidth_bytes_per_s: 32e9 / 8.0,
        }
    }

    /// The built-in presets, in the order tables list them.
    pub fn presets() -> Vec<Network> {
        vec![
            Network::ethernet_1g(),
            Network::ethernet_10g(),
            Network::infiniband_qdr(),
        ]
    }

    /// β, seconds per byte.
    pub fn beta_s_per_byte(&self) -> f64 {
        1.0 / self.bandwidth_bytes_per_s
    }

    /// Parse a network: a preset name (`1GbE`, `10GbE`, `QDR`, case-insensitive, `-`/`_`
    /// ignored) or a user definition `alpha=5us,beta=0.8ns` / `latency=5us,bandwidth=10Gb/s`.
    /// Times take `s`, `ms`, `us`/`µs`, `ns`; bandwidths take `B/s`, `KB/s`, `MB/s`, `GB/s` and
    /// bit rates `b/s`, `Kb/s`, `Mb/s`, `Gb/s` (decimal prefixes); bare numbers are seconds and
    /// bytes per second.
    pub fn parse(spec: &str) -> Result<Network, String> {
        let key: String = spec
            .chars()
            .filter(|c| !matches!(c, '-' | '_' | ' '))
            .collect::<String>()
            .to_ascii_lowercase();
        match key.as_str() {
            "1gbe" | "1g" | "gbe" | "ethernet1g" | "enet1g" => return Ok(Network::ethernet_1g()),
            "10gbe" | "10g" | "ethernet10g" | "enet10g" => return Ok(Network::ethernet_10g()),
            "qdr" | "ibqdr" | "infinibandqdr" => return Ok(Network::infiniband_qdr()),
            _ => {}
        }
        if !spec.contains('=') {
            return Err(format!(
                "unknown network `{spec}`: use 1GbE, 10GbE, QDR, `alpha=..,beta=..` or `latency=..,bandwidth=..`"
            ));
        }
        let mut latency = None;
        let mut bandwidth = None;
        for part in spec.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (name, value) = part
                .split_once('=')
                .ok_or_else(|| format!("network `{spec}`: `{part}` is not `name=value`"))?;
            match name.trim().to_ascii_lowercase().as_str() {
                "alpha" | "latency" | "l" => latency = Some(parse_seconds(value.trim())?),
                "beta" => {
                    let beta = parse_seconds(value.trim())?;
                    if beta <= 0.0 {
                        return Err(format!("network `{spec}`: beta must be positive"));
                    }
                    bandwidth = Some(1.0 / beta);
                }
                "bandwidth" | "bw" => bandwidth = Some(parse_bandwidth(value.trim())?),
                other => {
                    return Err(format!(
                        "network `{spec}`: unknown parameter `{other}` (alpha, beta, latency, bandwidth)"
                    ))
                }
            }
        }
        let latency_s = latency.ok_or_else(|| format!("network `{spec}`: no alpha/latency given"))?;
        let bandwidth_bytes_per_s = bandwidth.ok_or_else(|| format!("network `{spec}`: no beta/bandwidth given"))?;
        if !(latency_s.is_finite() && latency_s >= 0.0) {
            return Err(format!("network `{spec}`: latency must be a finite time ≥ 0"));
        }
        if !(bandwidth_bytes_per_s.is_finite() && bandwidth_bytes_per_s > 0.0) {
            return Err(format!("network `{spec}`: bandwidth must be finite and positive"));
        }
        Ok(Network {
            name: spec.trim().to_owned(),
            latency_s,
            bandwidth_bytes_per_s,
        })
    }
}

fn split_number(text: &str) -> Result<(f64, &str), String> {
    let end = text
        .char_indices()
        .find(|&(i, c)| {
            !(c.is_ascii_digit()
                || c == '.'
                || ((c == 'e' || c == 'E')
                    && text[i + 1..].starts_with(|d: char| d.is_ascii_digit() || d == '-' || d == '+'))
                || ((c == '-' || c == '+') && (i == 0 || text[..i].ends_with(['e', 'E']))))
        })
        .map(|(i, _)| i)
        .unwrap_or(text.len());
    let value: f64 = text[..end]
        .parse()
        .map_err(|_| format!("`{text}` does not start with a number"))?;
    Ok((value, text[end..].trim()))
}

/// Parse a duration in seconds: `5us`, `1.3µs`, `2ms`, `0.8ns`, `1e-6` (bare = seconds).
pub fn parse_seconds(text: &str) -> Result<f64, String> {
    let (value, unit) = split_number(text)?;
    let scale = match unit {
        "" | "s" => 1.0,
        "ms" => 1e-3,
        "us" | "µs" | "μs" => 1e-6,
        "ns" => 1e-9,
        "ps" => 1e-12,
        _ => return Err(format!("`{text}`: unknown time unit `{unit}` (s, ms, us, ns)")),
    };
    let v = value * scale;
    if !v.is_finite() || v < 0.0 {
        return Err(format!("`{text}` is not a time ≥ 0"));
    }
    Ok(v)
}

/// Parse a bandwidth in bytes per second: `10Gb/s` (bits), `1.25GB/s` (bytes), `1e9` (bytes/s).
pub fn parse_bandwidth(text: &str) -> Result<f64, String> {
    let (value, unit) = split_number(text)?;
    let scale = match unit {
        "" | "B/s" => 1.0,
        "KB/s" | "kB/s" => 1e3,
        "MB/s" => 1e6,
        "GB/s" => 1e9,
        "TB/s" => 1e12,
        "b/s" | "bps" => 1.0 / 8.0,
        "Kb/s" | "kb/s" | "Kbps" | "kbps" => 1e3 / 8.0,
        "Mb/s" | "Mbps" => 1e6 / 8.0,
        "Gb/s" | "Gbps" => 1e9 / 8.0,
        "Tb/s" | "Tbps" => 1e12 / 8.0,
        _ => {
            return Err(format!(
                "`{text}`: unknown bandwidth unit `{unit}` (B/s, MB/s, GB/s, Mb/s, Gb/s)"
            ))
        }
    };
    let v = value * scale;
    if !v.is_finite() || v <= 0.0 {
        return Err(format!("`{text}` is not a positive bandwidth"));
    }
    Ok(v)
}

/// Which family of configurations a configuration belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Sweep {
    /// The network as given (scale 1).
    Base,
    /// Classification poster's scaled set: bandwidth × s and latency ÷ s together.
    Scaled,
    /// Bandwidth × s with the latency held.
    BandwidthOnly,
    /// Latency ÷ s with the bandwidth held.
    LatencyOnly,
}

/// One network configuration of a replay: a scaled variant of a [`Network`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Configuration {
    /// Name of the network it derives from.
    pub network: String,
    /// Readable label in Classification poster's notation, e.g. `(BW/8, 8L)` or `(2BW, L)`.
    pub label: String,
    /// Family of the configuration.
    pub sweep: Sweep,
    /// Speed-up factor `s` applied (bandwidth × s and/or latency ÷ s); 1 for the base.
    pub scale: f64,
    /// α of this configuration, in seconds.
    pub latency_s: f64,
    /// 1/β of this configuration, in bytes per second.
    pub bandwidth_bytes_per_s: f64,
}

impl Configuration {
    /// The network itself, unscaled.
    pub fn base(network: &Network) -> Configuration {
        Configuration {
            network: network.name.clone(),
            label: "(BW, L)".into(),
            sweep: Sweep::Base,
            scale: 1.0,
            latency_s: network.latency_s,
            bandwidth_bytes_per_s: network.bandwidth_bytes_per_s,
        }
    }

    /// `network` made `scale` times faster in the dimensions `sweep` names (a scale below 1
    /// makes it slower). [`Sweep::Base`] ignores the scale.
    pub fn scaled(network: &Network, sweep: Sweep, scale: f64) -> Configuration {
        let (bw, lat) = match sweep {
            Sweep::Base => (1.0, 1.0),
            Sweep::Scaled => (scale, scale),
            Sweep::BandwidthOnly => (scale, 1.0),
            Sweep::LatencyOnly => (1.0, scale),
        };
        if sweep == Sweep::Base {
            return Configuration::base(network);
        }
        Configuration {
            network: network.name.clone(),
            label: format!("({}, {})", factor_label(bw, "BW", true), factor_label(lat, "L", false)),
            sweep,
            scale,
            latency_s: network.latency_s / lat,
            bandwidth_bytes_per_s: network.bandwidth_bytes_per_s * bw,
        }
    }
}

/// `2BW`, `BW/8`, `8L`, `L/2`: a faster network multiplies bandwidth and divides latency.
fn factor_label(speedup: f64, what: &str, multiplies: bool) -> String {
    let num = |x: f64| {
        if (x - x.round()).abs() < 1e-9 {
            format!("{}", x.round() as i64)
        } else {
            format!("{x}")
        }
    };
    if (speedup - 1.0).abs() < 1e-12 {
        return what.to_owned();
    }
    let grows = if multiplies { speedup > 1.0 } else { speedup < 1.0 };
    let factor = if speedup > 1.0 { speedup } else { 1.0 / speedup };
    if grows {
        format!("{}{what}", num(factor))
    } else {
        format!("{what}/{}", num(factor))
    }
}

/// Classification poster's scale factors: from (BW/8, 8L) to (8BW, L/8).
pub const SEED_SCALES: [f64; 7] = [0.125, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0];

/// All configurations the what-if needs for `networks`: per network its base, the scaled set,
/// the bandwidth-only and the latency-only sweeps over `scales` (scale 1 appears once, as the
/// base), in that order.
pub fn configurations(networks: &[Network], scales: &[f64]) -> Vec<Configuration> {
    let mut out = Vec::new();
    for n in networks {
        out.push(Configuration::base(n));
        for sweep in [Sweep::Scaled, Sweep::BandwidthOnly, Sweep::LatencyOnly] {
            for &s in scales {
                if (s - 1.0).abs() > 1e-12 {
                    out.push(Configuration::scaled(n, sweep, s));
                }
            }
        }
    }
    out
}

/// Parse a list of scale factors: `1/8,1/4,0.5,1,2,4,8`.
pub fn parse_scales(text: &str) -> Result<Vec<f64>, String> {
    let mut out = Vec::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let v = match part.split_once('/') {
            Some((a, b)) => {
                let a: f64 = a
                    .trim()
                    .parse()
                    .map_err(|_| format!("scale `{part}` is not a number"))?;
                let b: f64 = b
                    .trim()
                    .parse()
                    .map_err(|_| format!("scale `{part}` is not a number"))?;
                a / b
            }
            None => part.parse().map_err(|_| format!("scale `{part}` is not a number"))?,
        };
        if !(v.is_finite() && v > 0.0) {
            return Err(format!("scale `{part}` must be a positive finite number"));
        }
        out.push(v);
    }
    if out.is_empty() {
        return Err("no scale factors given".into());
    }
    Ok(out)
}

/// A measured message-time curve (message size → seconds), linear between points, that
/// replaces Hockney's straight line.
///
/// The replay keeps one α and β per configuration and feeds the table through *effective
/// bytes*: a message of `n` bytes costs `α + B(n)·β` with `B(n) = (t(n) − t(0)) / β_t`, where
/// `t(0)` is the table's zero-byte time and `β_t` the slope of its last segment. The table's
/// own configuration ([`MessageTable::network`]: α = t(0), β = β_t) then reproduces `t(n)`
/// exactly, and scaling α and β scales the table's latency and bandwidth parts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MessageTable {
    /// (bytes, seconds), sizes strictly increasing.
    pub points: Vec<(u64, f64)>,
}

impl MessageTable {
    /// Check and build a table: at least two points, sizes strictly increasing, times finite,
    /// non-negative and non-decreasing, and a last segment with a positive slope.
    pub fn new(mut points: Vec<(u64, f64)>) -> Result<MessageTable, String> {
        points.sort_by_key(|p| p.0);
        if points.len() < 2 {
            return Err("a message table needs at least two (bytes, seconds) points".into());
        }
        for w in points.windows(2) {
            if w[0].0 == w[1].0 {
                return Err(format!("message table lists {} bytes twice", w[0].0));
            }
            if w[1].1 < w[0].1 {
                return Err(format!(
                    "message table time decreases from {} bytes to {} bytes",
                    w[0].0, w[1].0
                ));
            }
        }
        if let Some(p) = points.iter().find(|p| !(p.1.is_finite() && p.1 >= 0.0)) {
            return Err(format!("message table time for {} bytes is not a time ≥ 0", p.0));
        }
        let t = MessageTable { points };
        if t.last_slope() <= 0.0 {
            return Err("the message table's last segment must grow with size (it gives the bandwidth)".into());
        }
        Ok(t)
    }

    /// Parse a table: one `bytes seconds` pair per line (comma, tab or spaces between; times may
    /// carry units); `#` starts a comment; a first line that is not numeric is a header. Errors
    /// name the line.
    pub fn parse(text: &str) -> Result<MessageTable, String> {
        let mut points = Vec::new();
        for (i, raw) in text.lines().enumerate() {
            let line = raw.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let fields: Vec<&str> = line
                .split(|c: char| c == ',' || c == ';' || c.is_whitespace())
                .filter(|f| !f.is_empty())
                .collect();
            if fields.len() != 2 {
                return Err(format!("line {}: expected `bytes seconds`, found `{line}`", i + 1));
            }
            let bytes = match fields[0].parse::<u64>() {
                Ok(b) => b,
                Err(_) if points.is_empty() && !fields[0].starts_with(|c: char| c.is_ascii_digit()) => continue,
                Err(_) => return Err(format!("line {}: `{}` is not a byte count", i + 1, fields[0])),
            };
            let secs = parse_seconds(fields[1]).map_err(|e| format!("line {}: {e}", i + 1))?;
            points.push((bytes, secs));
        }
        MessageTable::new(points)
    }

    fn last_slope(&self) -> f64 {
        let n = self.points.len();
        let (a, b) = (self.points[n - 2], self.points[n - 1]);
        (b.1 - a.1) / (b.0 - a.0) as f64
    }

    /// Time of an `n`-byte message: linear between points, extended by the first segment below
    /// the first point (never below 0) and by the last segment above the last point.
    pub fn time_s(&self, bytes: f64) -> f64 {
        let p = &self.points;
        let seg = match p.iter().position(|q| q.0 as f64 >= bytes) {
            Some(0) => 0,
            Some(i) => i - 1,
            None => p.len() - 2,
        };
        let (a, b) = (p[seg], p[seg + 1]);
        let slope = (b.1 - a.1) / (b.0 - a.0) as f64;
        (a.1 + (bytes - a.0 as f64) * slope).max(0.0)
    }

    /// The table's own network: α = t(0), β = slope of the last segment.
    pub fn network(&self) -> Network {
        Network {
            name: "table".into(),
            latency_s: self.time_s(0.0),
            bandwidth_bytes_per_s: 1.0 / self.last_slope(),
        }
    }

    /// Effective bytes `B(n) = (t(n) − t(0)) / β_t` (see the type's documentation).
    pub fn effective_bytes(&self, bytes: f64) -> f64 {
        ((self.time_s(bytes) - self.time_s(0.0)) / self.last_slope()).max(0.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_presets_and_user_networks() {
        assert_eq!(Network::parse("10gbe").unwrap(), Network::ethernet_10g());
        assert_eq!(Network::parse("IB-QDR").unwrap(), Network::infiniband_qdr());
        let n = Network::parse("latency=2us,bandwidth=10Gb/s").unwrap();
        assert!((n.latency_s - 2e-6).abs() < 1e-15);
        assert!((n.bandwidth_bytes_per_s - 1.25e9).abs() < 1.0);
        let m = Network::parse("alpha=1e-6,beta=1ns").unwrap();
        assert!((m.bandwidth_bytes_per_s - 1e9).abs() < 1e-3);
        assert!(Network::parse("myrinet").is_err());
        assert!(Network::parse("alpha=1us").unwrap_err().contains("bandwidth"));
        assert!(Network::parse("alpha=1us,beta=0").is_err());
        assert!(Network::parse("alpha=-1us,bandwidth=1GB/s").is_err());
        assert!(Network::parse("alpha=1parsec,bandwidth=1GB/s")
            .unwrap_err()
            .contains("unit"));
    }

    #[test]
    fn scaled_set_labels_follow_the_seed() {
        let n = Network::ethernet_10g();
        let c = configurations(std::slice::from_ref(&n), &SEED_SCALES);
        assert_eq!(c.len(), 1 + 3 * 6);
        let labels: Vec<&str> = c
            .iter()
            .filter(|c| c.sweep == Sweep::Scaled)
            .map(|c| c.label.as_str())
            .collect();
        assert_eq!(
            labels,
            [
                "(BW/8, 8L)",
                "(BW/4, 4L)",
                "(BW/2, 2L)",
                "(2BW, L/2)",
                "(4BW, L/4)",
                "(8BW, L/8)"
            ]
        );
        let slow = &c[1];
        assert!((slow.latency_s - 8.0 * n.latency_s).abs() < 1e-15);
        assert!((slow.bandwidth_bytes_per_s - n.bandwidth_bytes_per_s / 8.0).abs() < 1e-3);
        assert_eq!(parse_scales("1/8, 2").unwrap(), vec![0.125, 2.0]);
        assert!(parse_scales("0").is_err());
    }

    #[test]
    fn message_table_interpolates_and_keeps_its_own_network_exact() {
        let t = MessageTable::parse("bytes,seconds\n0 2us\n1024 3us\n4096 6us # last\n").unwrap();
        assert!((t.time_s(512.0) - 2.5e-6).abs() < 1e-15);
        let net = t.network();
        assert!((net.latency_s - 2e-6).abs() < 1e-15);
        for n in [0.0, 100.0, 1024.0, 3000.0, 10000.0] {
            let via_effective = net.latency_s + t.effective_bytes(n) / net.bandwidth_bytes_per_s;
            assert!((via_effective - t.time_s(n)).abs() < 1e-15, "n = {n}");
        }
        assert!(MessageTable::parse("0 1us\n").is_err());
        assert!(MessageTable::parse("0 2us\n10 1us\n")
            .unwrap_err()
            .contains("decreases"));
        assert!(MessageTable::parse("0 1us\nten 2us\n").unwrap_err().contains("line 2"));
    }
}
