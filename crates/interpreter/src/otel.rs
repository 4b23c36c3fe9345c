//! OpenTelemetry export of a session's spans (`interpreter_core::agent::SPAN_TARGET`), when
//! config.toml's `[otel]` asks for it: OTLP over HTTP (protobuf or JSON) or gRPC, batched on
//! a thread of its own so a slow or absent collector never holds a turn. Every string
//! attribute is redacted once more on its way out. Off by default; then nothing here runs.

use interpreter_core::config::{OtelExporter, OtelSettings, OtlpProtocol};
use opentelemetry::KeyValue;
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{WithExportConfig, WithHttpConfig, WithTonicConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::trace::{BatchSpanProcessor, SdkTracerProvider, SpanData, SpanProcessor};
use std::time::Duration;

/// One export may take this long; then that batch is dropped. Exports are not retried: a
/// collector that is down would otherwise hold the process's exit for its backoff.
const EXPORT_TIMEOUT: Duration = Duration::from_secs(3);
/// At exit, pending spans get this long to leave.
const FLUSH_TIMEOUT: Duration = Duration::from_secs(5);

/// The running export: flushed and stopped by [`Otel::shutdown`].
pub(crate) struct Otel {
    provider: SdkTracerProvider,
    /// gRPC's channel lives on a runtime of its own (the batch thread is not a runtime).
    _grpc_runtime: Option<tokio::runtime::Runtime>,
}

/// The `tracing` layer that turns the session's spans into OpenTelemetry ones, and what to
/// flush at exit.
pub(crate) type Layer = tracing_opentelemetry::OpenTelemetryLayer<
    tracing_subscriber::Registry,
    opentelemetry_sdk::trace::SdkTracer,
>;

/// Starts the exporter `settings` names.
pub(crate) fn start(settings: &OtelSettings) -> Result<(Layer, Otel), String> {
    // reqwest 0.13 and tonic share the binary's ring-based rustls.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let mut grpc_runtime = None;
    let exporter = match &settings.exporter {
        OtelExporter::OtlpHttp {
            endpoint,
            protocol,
            headers,
        } => opentelemetry_otlp::SpanExporter::builder()
            .with_http()
            .with_http_client(http_client(endpoint)?)
            .with_endpoint(endpoint.as_str())
            .with_protocol(match protocol {
                OtlpProtocol::Binary => opentelemetry_otlp::Protocol::HttpBinary,
                OtlpProtocol::Json => opentelemetry_otlp::Protocol::HttpJson,
            })
            .with_headers(headers.clone().into_iter().collect())
            .with_timeout(EXPORT_TIMEOUT)
            .with_retry_policy(opentelemetry_otlp::RetryPolicy::disabled())
            .build()
            .map_err(|e| e.to_string())?,
        OtelExporter::OtlpGrpc { endpoint, headers } => {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(1)
                .thread_name("otel-grpc")
                .enable_all()
                .build()
                .map_err(|e| e.to_string())?;
            let _entered = rt.enter();
            let mut metadata = tonic::metadata::MetadataMap::new();
            for (k, v) in headers {
                let key = tonic::metadata::MetadataKey::from_bytes(k.as_bytes())
                    .map_err(|e| format!("otel header `{k}`: {e}"))?;
                let value = v.parse().map_err(|e| format!("otel header `{k}`: {e}"))?;
                metadata.insert(key, value);
            }
            let mut builder = opentelemetry_otlp::SpanExporter::builder()
                .with_tonic()
                .with_endpoint(endpoint.as_str())
                .with_metadata(metadata)
                .with_timeout(EXPORT_TIMEOUT)
                .with_retry_policy(opentelemetry_otlp::RetryPolicy::disabled());
            if endpoint.starts_with("https://") {
                builder = builder
                    .with_tls_config(tonic::transport::ClientTlsConfig::new().with_webpki_roots());
            }
            let exporter = builder.build().map_err(|e| e.to_string())?;
            drop(_entered);
            grpc_runtime = Some(rt);
            exporter
        }
    };
    let resource = Resource::builder()
        .with_service_name("interpreter")
        .with_attributes([
            KeyValue::new("service.version", env!("CARGO_PKG_VERSION")),
            KeyValue::new("deployment.environment", settings.environment.clone()),
        ])
        .build();
    let provider = SdkTracerProvider::builder()
        .with_span_processor(Redacting(BatchSpanProcessor::builder(exporter).build()))
        .with_resource(resource)
        .build();
    // The spans' own fields are the attributes; where in our source they were made is not.
    let layer = tracing_opentelemetry::layer()
        .with_tracer(provider.tracer("interpreter"))
        .with_location(false)
        .with_threads(false);
    Ok((
        layer,
        Otel {
            provider,
            _grpc_runtime: grpc_runtime,
        },
    ))
}

/// The exporter's HTTP client. A plain http:// collector (a local agent, say) gets one
/// without TLS roots: loading the system's certificates is most of the exporter's start-up.
fn http_client(endpoint: &str) -> Result<reqwest_otlp::blocking::Client, String> {
    let mut builder = reqwest_otlp::blocking::Client::builder().timeout(EXPORT_TIMEOUT);
    if endpoint.starts_with("http://") {
        builder = builder.tls_certs_only([]);
    }
    builder.build().map_err(|e| e.to_string())
}

impl Otel {
    /// Sends what is pending, within [`FLUSH_TIMEOUT`]; an unreachable collector costs that
    /// at most.
    pub(crate) fn shutdown(self) {
        if let Err(e) = self.provider.shutdown_with_timeout(FLUSH_TIMEOUT) {
            tracing::debug!("otel: {e}");
        }
    }
}

/// Redacts every string attribute (and event attribute) of a span before it is batched: the
/// spans carry no arguments or outputs, but a prompt (`log_user_prompt`) or an error text may
/// hold a key.
#[derive(Debug)]
struct Redacting<P>(P);

impl<P: SpanProcessor> SpanProcessor for Redacting<P> {
    fn on_start(&self, span: &mut opentelemetry_sdk::trace::Span, cx: &opentelemetry::Context) {
        self.0.on_start(span, cx);
    }

    fn on_end(&self, mut span: SpanData) {
        redact(&mut span.attributes);
        for event in span.events.events.iter_mut() {
            redact(&mut event.attributes);
        }
        self.0.on_end(span);
    }

    fn force_flush(&self) -> opentelemetry_sdk::error::OTelSdkResult {
        self.0.force_flush()
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> opentelemetry_sdk::error::OTelSdkResult {
        self.0.shutdown_with_timeout(timeout)
    }

    fn set_resource(&mut self, resource: &Resource) {
        self.0.set_resource(resource);
    }
}

fn redact(attributes: &mut [KeyValue]) {
    for kv in attributes {
        if let opentelemetry::Value::String(s) = &kv.value {
            let clean = interpreter_core::secrets::redact(s.as_str());
            if clean != s.as_str() {
                kv.value = opentelemetry::Value::String(clean.into_owned().into());
            }
        }
    }
}
