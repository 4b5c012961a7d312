// Package otlphttp exports OpenTelemetry's spans and metrics over
// OTLP/HTTP (protobuf), configured by the OTEL_EXPORTER_OTLP_* variables
// as the official otlptracehttp and otlpmetrichttp exporters read them.
//
// It writes the protobuf messages itself (wire.go) and imports no
// generated OTLP package: those link google.golang.org/protobuf and grpc,
// whose package initialisers every rewind process paid at start, a
// command that exports nothing included.
package otlphttp

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/url"
	"path"
	"strconv"
	"strings"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
)

// Config is how one signal is sent.
type Config struct {
	// Host (host:port) and Path make the URL, https unless Insecure.
	Host, Path string
	Insecure   bool
	TLS        *tls.Config // nil: the system's roots
	Headers    map[string]string
	Gzip       bool
	// Timeout bounds each export, the answer read included (≤ 0: none).
	Timeout   time.Duration
	UserAgent string
	// Temporality and Aggregation are the metrics' (nil: cumulative, the
	// SDK's default aggregation).
	Temporality sdkmetric.TemporalitySelector
	Aggregation sdkmetric.AggregationSelector
}

// DefaultTimeout is the official exporters' timeout of an export.
const DefaultTimeout = 10 * time.Second

// FromEnv is signal's ("TRACES" or "METRICS") configuration from getenv's
// OTEL_EXPORTER_OTLP_* variables, a signal's own variable over the shared
// one, files read with readFile. What it cannot follow is ignored, as the
// official exporters ignore it, and named in problems.
func FromEnv(signal string, getenv func(string) string, readFile func(string) ([]byte, error)) (cfg Config, problems []error) {
	e := &env{signal: signal, getenv: getenv, readFile: readFile}
	cfg = Config{Timeout: DefaultTimeout}
	e.endpoint(&cfg)
	cfg.TLS = e.tls()
	e.request(&cfg)
	if signal == "METRICS" {
		e.metricPreferences(&cfg)
	}
	return cfg, e.problems
}

// env reads one signal's variables, keeping what it cannot follow.
type env struct {
	signal   string
	getenv   func(string) string
	readFile func(string) ([]byte, error)
	problems []error
}

// get is a variable's value, blanks trimmed, and whether it has one.
func (e *env) get(name string) (string, bool) {
	v := strings.TrimSpace(e.getenv("OTEL_EXPORTER_OTLP_" + name))
	return v, v != ""
}

func (e *env) bad(name, format string, args ...any) {
	e.problems = append(e.problems, fmt.Errorf("OTEL_EXPORTER_OTLP_"+name+": "+format, args...))
}

// endpoint sets the host, path and scheme: the shared endpoint gets
// /v1/<signal> after its path, a signal's own is used as it is.
func (e *env) endpoint(cfg *Config) {
	defaultPath := "/v1/" + strings.ToLower(e.signal)
	cfg.Host, cfg.Path = "localhost:4318", defaultPath
	for _, name := range []string{"ENDPOINT", e.signal + "_ENDPOINT"} {
		v, ok := e.get(name)
		if !ok {
			continue
		}
		u, err := url.Parse(v)
		if err != nil {
			e.bad(name, "%v; it is ignored", err)
			continue
		}
		switch strings.ToLower(u.Scheme) {
		case "http", "unix":
			cfg.Insecure = true
		case "unix-abstract": // so the official metrics exporter, not its traces one
			cfg.Insecure = e.signal == "METRICS"
		default:
			cfg.Insecure = false
		}
		cfg.Host = u.Host
		switch {
		case name == "ENDPOINT":
			cfg.Path = path.Join(u.Path, defaultPath)
		case u.Path == "":
			cfg.Path = "/"
		default:
			cfg.Path = u.Path
		}
	}
	cfg.Path = strings.TrimSpace(cfg.Path)
	if cfg.Path == "" || cfg.Path == "." {
		cfg.Path = defaultPath
	} else if !path.IsAbs(cfg.Path) {
		cfg.Path = "/" + cfg.Path
	}
	for _, name := range []string{"INSECURE", e.signal + "_INSECURE"} {
		if v, ok := e.get(name); ok {
			cfg.Insecure = strings.EqualFold(v, "true")
		}
	}
}

// tls is the CA and client certificate the variables name (nil: none).
func (e *env) tls() *tls.Config {
	tc := &tls.Config{}
	for _, name := range []string{"CERTIFICATE", e.signal + "_CERTIFICATE"} {
		v, ok := e.get(name)
		if !ok {
			continue
		}
		pem, err := e.readFile(v)
		if err != nil {
			e.bad(name, "%v; it is ignored", err)
			continue
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			e.bad(name, "%s holds no PEM certificate; it is ignored", v)
			continue
		}
		tc.RootCAs = pool
	}
	for _, prefix := range []string{"", e.signal + "_"} {
		if pair, ok := e.clientCert(prefix+"CLIENT_CERTIFICATE", prefix+"CLIENT_KEY"); ok {
			tc.Certificates = []tls.Certificate{pair}
		}
	}
	if tc.RootCAs == nil && len(tc.Certificates) == 0 {
		return nil
	}
	return tc
}

func (e *env) clientCert(certName, keyName string) (tls.Certificate, bool) {
	certFile, okc := e.get(certName)
	keyFile, okk := e.get(keyName)
	switch {
	case okc && !okk:
		e.bad(certName, "needs OTEL_EXPORTER_OTLP_%s too; it is ignored", keyName)
	case okk && !okc:
		e.bad(keyName, "needs OTEL_EXPORTER_OTLP_%s too; it is ignored", certName)
	}
	if !okc || !okk {
		return tls.Certificate{}, false
	}
	cert, err := e.readFile(certFile)
	if err != nil {
		e.bad(certName, "%v; it is ignored", err)
		return tls.Certificate{}, false
	}
	key, err := e.readFile(keyFile)
	if err != nil {
		e.bad(keyName, "%v; it is ignored", err)
		return tls.Certificate{}, false
	}
	pair, err := tls.X509KeyPair(cert, key)
	if err != nil {
		e.bad(certName, "%v; it is ignored", err)
		return tls.Certificate{}, false
	}
	return pair, true
}

// request sets the headers, compression and timeout.
func (e *env) request(cfg *Config) {
	for _, name := range []string{"HEADERS", e.signal + "_HEADERS"} {
		if v, ok := e.get(name); ok {
			// A signal's own list replaces the shared one, as the official
			// exporters do: the two are not merged.
			cfg.Headers = headers(v, func(format string, args ...any) { e.bad(name, format, args...) })
		}
	}
	for _, name := range []string{"COMPRESSION", e.signal + "_COMPRESSION"} {
		if v, ok := e.get(name); ok {
			cfg.Gzip = v == "gzip"
			if v != "gzip" && v != "none" {
				e.bad(name, "%q is neither gzip nor none; nothing is compressed", v)
			}
		}
	}
	for _, name := range []string{"TIMEOUT", e.signal + "_TIMEOUT"} {
		if v, ok := e.get(name); ok {
			ms, err := strconv.Atoi(v)
			if err != nil {
				e.bad(name, "%q is not a number of milliseconds; it is ignored", v)
				continue
			}
			cfg.Timeout = time.Duration(ms) * time.Millisecond
		}
	}
}

// metricPreferences sets the temporality and the histograms' aggregation.
func (e *env) metricPreferences(cfg *Config) {
	if v, ok := e.get("METRICS_TEMPORALITY_PREFERENCE"); ok {
		switch strings.ToLower(v) {
		case "cumulative":
			cfg.Temporality = sdkmetric.CumulativeTemporalitySelector
		case "delta":
			cfg.Temporality = sdkmetric.DeltaTemporalitySelector
		case "lowmemory":
			cfg.Temporality = sdkmetric.LowMemoryTemporalitySelector
		default:
			e.bad("METRICS_TEMPORALITY_PREFERENCE", "%q is none of cumulative, delta, lowmemory; it is ignored", v)
		}
	}
	if v, ok := e.get("METRICS_DEFAULT_HISTOGRAM_AGGREGATION"); ok {
		switch strings.ToLower(v) {
		case "explicit_bucket_histogram":
			cfg.Aggregation = sdkmetric.DefaultAggregationSelector
		case "base2_exponential_bucket_histogram":
			cfg.Aggregation = func(k sdkmetric.InstrumentKind) sdkmetric.Aggregation {
				if k == sdkmetric.InstrumentKindHistogram {
					return sdkmetric.AggregationBase2ExponentialHistogram{MaxSize: 160, MaxScale: 20}
				}
				return sdkmetric.DefaultAggregationSelector(k)
			}
		default:
			e.bad("METRICS_DEFAULT_HISTOGRAM_AGGREGATION", "%q is neither explicit_bucket_histogram nor base2_exponential_bucket_histogram; it is ignored", v)
		}
	}
}

// headers reads a list of key=value pairs, values URL-decoded; a pair it
// cannot read is left out and named.
func headers(list string, bad func(string, ...any)) map[string]string {
	out := map[string]string{}
	for _, pair := range strings.Split(list, ",") {
		k, v, found := strings.Cut(pair, "=")
		if !found {
			bad("%q has no '='; it is left out", pair)
			continue
		}
		k = strings.TrimSpace(k)
		if !validKey(k) {
			bad("%q is not a header name; it is left out", k)
			continue
		}
		v, err := url.PathUnescape(v)
		if err != nil {
			bad("the value of %s: %v; it is left out", k, err)
			continue
		}
		out[k] = strings.TrimSpace(v)
	}
	return out
}

// validKey is an HTTP token (RFC 9110), as the official exporters check.
func validKey(k string) bool {
	if k == "" {
		return false
	}
	for _, c := range k {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.ContainsRune("!#$%&'*+-.^_`|~", c):
		default:
			return false
		}
	}
	return true
}
