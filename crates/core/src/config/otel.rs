//! The `[otel]` section, in Codex's shape: where spans go, and whether a span may carry the
//! user's prompt. Pure parsing; the exporter lives with the binary's logging
//! (`crates/interpreter/src/otel.rs`), the spans in the session (`agent/`).
//!
//! ```toml
//! [otel]
//! environment = "staging"              # default "dev"
//! log_user_prompt = false              # default: prompts are never in a span
//! exporter = { otlp-http = { endpoint = "https://otel.example/v1/traces", protocol = "binary", headers = { "x-team" = "core" } } }
//! trace_exporter = { otlp-grpc = { endpoint = "https://otel.example:4317", headers = {} } }
//! ```
//!
//! Spans go to `trace_exporter`, else `exporter`; `"none"` (the default) exports nothing.

use anyhow::{Result, bail};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;

/// The `[otel]` table as written.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) struct OtelToml {
    pub(crate) environment: Option<String>,
    pub(crate) exporter: Option<ExporterToml>,
    pub(crate) trace_exporter: Option<ExporterToml>,
    pub(crate) log_user_prompt: Option<bool>,
}

/// `"none"`, `{ otlp-http = {…} }` or `{ otlp-grpc = {…} }`.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub(crate) enum ExporterToml {
    Name(String),
    Table(BTreeMap<String, EndpointToml>),
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct EndpointToml {
    endpoint: String,
    protocol: Option<String>,
    #[serde(default)]
    headers: BTreeMap<String, String>,
}

/// How OTLP is spoken over HTTP.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OtlpProtocol {
    /// Protobuf (`application/x-protobuf`).
    Binary,
    /// JSON (`application/json`).
    Json,
}

/// Where spans are sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OtelExporter {
    /// OTLP over HTTP: `endpoint` is the whole URL (`…/v1/traces`).
    OtlpHttp {
        /// The traces URL.
        endpoint: String,
        /// Protobuf or JSON.
        protocol: OtlpProtocol,
        /// Sent with every export (an API key header, say).
        headers: BTreeMap<String, String>,
    },
    /// OTLP over gRPC.
    OtlpGrpc {
        /// The collector (`http(s)://host:4317`).
        endpoint: String,
        /// Sent as gRPC metadata.
        headers: BTreeMap<String, String>,
    },
}

/// What `[otel]` asks for, once it asks for an export.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OtelSettings {
    /// `deployment.environment` of every span.
    pub environment: String,
    /// Where spans go.
    pub exporter: OtelExporter,
}

impl OtelToml {
    /// The export asked for; None when `[otel]` is absent or exports nothing.
    pub(crate) fn settings(&self) -> Result<Option<OtelSettings>> {
        let chosen = self.trace_exporter.as_ref().or(self.exporter.as_ref());
        let Some(exporter) = chosen.map(exporter).transpose()?.flatten() else {
            return Ok(None);
        };
        Ok(Some(OtelSettings {
            environment: self.environment.clone().unwrap_or_else(|| "dev".into()),
            exporter,
        }))
    }
}

fn exporter(e: &ExporterToml) -> Result<Option<OtelExporter>> {
    let table = match e {
        ExporterToml::Name(n) if n == "none" => return Ok(None),
        ExporterToml::Name(n) => {
            bail!(
                "otel exporter `{n}`: expected \"none\", {{ otlp-http = {{…}} }} or {{ otlp-grpc = {{…}} }}"
            )
        }
        ExporterToml::Table(t) => t,
    };
    let mut entries = table.iter();
    let (Some((kind, ep)), None) = (entries.next(), entries.next()) else {
        bail!("otel exporter: give exactly one of otlp-http and otlp-grpc");
    };
    if !(ep.endpoint.starts_with("http://") || ep.endpoint.starts_with("https://")) {
        bail!(
            "otel {kind}.endpoint `{}` is not an http(s) URL",
            ep.endpoint
        );
    }
    Ok(Some(match kind.as_str() {
        "otlp-http" => OtelExporter::OtlpHttp {
            endpoint: ep.endpoint.clone(),
            protocol: match ep.protocol.as_deref() {
                None | Some("binary") => OtlpProtocol::Binary,
                Some("json") => OtlpProtocol::Json,
                Some(p) => bail!("otel otlp-http.protocol `{p}`: expected \"binary\" or \"json\""),
            },
            headers: ep.headers.clone(),
        },
        "otlp-grpc" => OtelExporter::OtlpGrpc {
            endpoint: ep.endpoint.clone(),
            headers: ep.headers.clone(),
        },
        other => bail!("otel exporter `{other}`: expected otlp-http or otlp-grpc"),
    }))
}

/// The `[otel]` export of the user's config.toml, read alone (before anything else loads, so
/// the first span is caught). None: no file, no section, or nothing exported.
pub fn otel_settings(home: &Path) -> Result<Option<OtelSettings>> {
    #[derive(Deserialize)]
    struct File {
        otel: Option<OtelToml>,
    }
    let path = home.join("config.toml");
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => bail!("reading {}: {e}", path.display()),
    };
    let file: File = toml::from_str(&text)
        .map_err(|e| anyhow::anyhow!("invalid config {}: {e}", path.display()))?;
    match file.otel {
        Some(o) => o.settings(),
        None => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Option<OtelSettings>> {
        #[derive(Deserialize)]
        struct File {
            otel: OtelToml,
        }
        toml::from_str::<File>(text)?.otel.settings()
    }

    #[test]
    fn codexs_shapes_are_read() {
        assert_eq!(parse("[otel]\nexporter = \"none\"\n").unwrap(), None);
        let s = parse(
            "[otel]\nenvironment = \"ci\"\nexporter = { otlp-http = { endpoint = \"http://h/v1/traces\", protocol = \"json\", headers = { k = \"v\" } } }\n",
        )
        .unwrap()
        .unwrap();
        assert_eq!(s.environment, "ci");
        assert_eq!(
            s.exporter,
            OtelExporter::OtlpHttp {
                endpoint: "http://h/v1/traces".into(),
                protocol: OtlpProtocol::Json,
                headers: BTreeMap::from([("k".into(), "v".into())]),
            }
        );
        let s = parse(
            "[otel]\nexporter = \"none\"\ntrace_exporter = { otlp-grpc = { endpoint = \"https://h:4317\" } }\n",
        )
        .unwrap()
        .unwrap();
        assert!(matches!(s.exporter, OtelExporter::OtlpGrpc { .. }));
        assert_eq!(s.environment, "dev");
    }

    #[test]
    fn mistakes_are_named() {
        let e = parse("[otel]\nexporter = \"statsd\"\n").unwrap_err();
        assert!(e.to_string().contains("statsd"), "{e}");
        let e =
            parse("[otel]\nexporter = { otlp-http = { endpoint = \"ftp://h\" } }\n").unwrap_err();
        assert!(e.to_string().contains("not an http(s) URL"), "{e}");
        let e = parse(
            "[otel]\nexporter = { otlp-http = { endpoint = \"http://h\", protocol = \"xml\" } }\n",
        )
        .unwrap_err();
        assert!(e.to_string().contains("xml"), "{e}");
    }
}
