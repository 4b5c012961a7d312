package otlphttp_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"io"
	"log"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	colmetricspb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"

	"rewind/engine/telemetry/internal/otlphttp"
)

// Each environment sends both signals where the official exporters send
// them: the same paths, headers and compression.
func TestTheEnvironmentIsReadAsTheOfficialExportersReadIt(t *testing.T) {
	col := newRecorder(t, nil)
	u := col.srv.URL
	for name, env := range map[string]map[string]string{
		"shared endpoint":                 {"OTEL_EXPORTER_OTLP_ENDPOINT": u},
		"shared endpoint with a path":     {"OTEL_EXPORTER_OTLP_ENDPOINT": u + "/base/"},
		"signal endpoints used as is":     {"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": u + "/my/traces", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": u},
		"signal endpoint over shared":     {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": u + "/t", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": u + "/m?q=dropped"},
		"blank around the endpoint":       {"OTEL_EXPORTER_OTLP_ENDPOINT": "  " + u + "  "},
		"relative signal path":            {"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": u + "/.", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": u + "/x/../v1/metrics"},
		"headers, url-decoded":            {"OTEL_EXPORTER_OTLP_ENDPOINT": u, "OTEL_EXPORTER_OTLP_HEADERS": "api-key=s%20e%2Ccret, x-tenant = acme ,bad key=1,novalue,x-pct=%zz"},
		"signal headers replace shared":   {"OTEL_EXPORTER_OTLP_ENDPOINT": u, "OTEL_EXPORTER_OTLP_HEADERS": "a=1,b=2", "OTEL_EXPORTER_OTLP_TRACES_HEADERS": "b=3", "OTEL_EXPORTER_OTLP_METRICS_HEADERS": "c=4"},
		"headers cannot change the type":  {"OTEL_EXPORTER_OTLP_ENDPOINT": u, "OTEL_EXPORTER_OTLP_HEADERS": "Content-Type=text/plain,User-Agent=mine"},
		"gzip":                            {"OTEL_EXPORTER_OTLP_ENDPOINT": u, "OTEL_EXPORTER_OTLP_COMPRESSION": "gzip"},
		"signal compression over shared":  {"OTEL_EXPORTER_OTLP_ENDPOINT": u, "OTEL_EXPORTER_OTLP_COMPRESSION": "gzip", "OTEL_EXPORTER_OTLP_TRACES_COMPRESSION": "none"},
		"unknown compression is none":     {"OTEL_EXPORTER_OTLP_ENDPOINT": u, "OTEL_EXPORTER_OTLP_COMPRESSION": "GZIP"},
		"insecure=false over http: https": {"OTEL_EXPORTER_OTLP_ENDPOINT": u, "OTEL_EXPORTER_OTLP_TRACES_INSECURE": "false"},
		"insecure over a scheme-less URL": {"OTEL_EXPORTER_OTLP_ENDPOINT": "//" + strings.TrimPrefix(u, "http://"), "OTEL_EXPORTER_OTLP_INSECURE": "TRUE"},
	} {
		t.Run(name, func(t *testing.T) {
			setEnv(t, env)
			ss := spans(t)
			rm := collect(t, sdkmetric.CumulativeTemporalitySelector)
			errs := []error{exportSpans(t, officialTraces(t), ss), exportSpans(t, ourTraces(t), ss),
				exportMetrics(t, officialMetrics(t), rm), exportMetrics(t, ourMetrics(t), rm)}
			sameOutcome(t, errs, col.take())
		})
	}
}

// sameOutcome checks the official traces exporter's, ours, the official
// metrics exporter's and ours (errs, in that order) failed alike, and
// that those that did not sent the same request (got, in order).
func sameOutcome(t *testing.T, errs []error, got []request) {
	t.Helper()
	for i := 0; i < 4; i += 2 {
		if (errs[i] == nil) != (errs[i+1] == nil) {
			t.Fatalf("ours: %v, the official exporter's: %v", errs[i+1], errs[i])
		}
	}
	kinds := []func() proto.Message{
		func() proto.Message { return &coltracepb.ExportTraceServiceRequest{} },
		func() proto.Message { return &colmetricspb.ExportMetricsServiceRequest{} },
	}
	for i := 0; i < 4; i += 2 {
		if errs[i] != nil {
			continue
		}
		if len(got) < 2 {
			t.Fatalf("%d requests left, want one from each exporter", len(got))
		}
		sameRequest(t, got[0], got[1], kinds[i/2])
		got = got[2:]
	}
	if len(got) != 0 {
		t.Errorf("%d requests more than the exports that succeeded", len(got))
	}
}

// writePEM writes a block to a new file in dir and gives its path.
func writePEM(t *testing.T, dir, name, typ string, der []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// clientCert is a self-signed client certificate and its key, as files.
func clientCert(t *testing.T, dir string) (certFile, keyFile string, cert *x509.Certificate) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "rewind"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, KeyUsage: x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err = x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return writePEM(t, dir, "client.pem", "CERTIFICATE", der), writePEM(t, dir, "client-key.pem", "EC PRIVATE KEY", kder), cert
}

// Over https the collector's CA comes from _CERTIFICATE and the client's
// certificate from _CLIENT_CERTIFICATE and _CLIENT_KEY; without them the
// export fails, with them it succeeds, for both exporters alike; and a
// certificate on a plain http endpoint is refused as the official
// exporters refuse it.
func TestCertificatesAreReadFromTheEnvironment(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile, cert := clientCert(t, dir)
	col := &recorder{}
	col.srv = httptest.NewUnstartedServer(http.HandlerFunc(col.serve))
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	col.srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the handshakes refused
	col.srv.TLS = &tls.Config{ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: pool}
	col.srv.StartTLS()
	defer col.srv.Close()
	ca := writePEM(t, dir, "ca.pem", "CERTIFICATE", col.srv.Certificate().Raw)

	for _, c := range []struct {
		name string
		env  map[string]string
		ok   bool
	}{
		{"no CA", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": col.srv.URL}, false},
		{"CA but no client certificate", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": col.srv.URL, "OTEL_EXPORTER_OTLP_CERTIFICATE": ca}, false},
		{"CA and client certificate", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": col.srv.URL, "OTEL_EXPORTER_OTLP_CERTIFICATE": ca,
			"OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE": certFile, "OTEL_EXPORTER_OTLP_CLIENT_KEY": keyFile}, true},
		{"signal's own", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": col.srv.URL, "OTEL_EXPORTER_OTLP_CERTIFICATE": keyFile,
			"OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE": ca, "OTEL_EXPORTER_OTLP_METRICS_CERTIFICATE": ca,
			"OTEL_EXPORTER_OTLP_TRACES_CLIENT_CERTIFICATE": certFile, "OTEL_EXPORTER_OTLP_TRACES_CLIENT_KEY": keyFile,
			"OTEL_EXPORTER_OTLP_METRICS_CLIENT_CERTIFICATE": certFile, "OTEL_EXPORTER_OTLP_METRICS_CLIENT_KEY": keyFile}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			setEnv(t, c.env)
			ss := spans(t)
			rm := collect(t, sdkmetric.CumulativeTemporalitySelector)
			errs := []error{exportSpans(t, officialTraces(t), ss), exportSpans(t, ourTraces(t), ss),
				exportMetrics(t, officialMetrics(t), rm), exportMetrics(t, ourMetrics(t), rm)}
			for i, err := range errs {
				if (err == nil) != c.ok {
					t.Errorf("export %d (official traces, ours, official metrics, ours): %v, want success %v", i, err, c.ok)
				}
			}
			sameOutcome(t, errs, col.take())
		})
	}
	t.Run("certificate on http", func(t *testing.T) {
		setEnv(t, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1", "OTEL_EXPORTER_OTLP_CERTIFICATE": ca})
		for _, signal := range []string{"TRACES", "METRICS"} {
			cfg, _ := otlphttp.FromEnv(signal, os.Getenv, os.ReadFile)
			var err error
			if signal == "TRACES" {
				_, err = otlphttp.NewTraceExporter(cfg)
			} else {
				_, err = otlphttp.NewMetricExporter(cfg)
			}
			if err == nil || !strings.Contains(err.Error(), "insecure HTTP endpoint cannot use TLS") {
				t.Errorf("%s: %v, want the official exporters' refusal", signal, err)
			}
		}
		if _, err := otlptracehttp.New(context.Background()); err == nil {
			t.Errorf("the official exporter took it: this test's premise is wrong")
		}
	})
}

// A refusal is an error naming the status and the body's start, worded
// as the official exporters word it; a partial success is an error too,
// in protobuf (either signal) or JSON (traces).
func TestAnswersBecomeTheOfficialExportersErrors(t *testing.T) {
	long := strings.Repeat("x", 1000)
	for name, answer := range map[string]func(w http.ResponseWriter){
		"500":       func(w http.ResponseWriter) { http.Error(w, "the collector is down", http.StatusInternalServerError) },
		"400 empty": func(w http.ResponseWriter) { w.WriteHeader(http.StatusBadRequest) },
		"413 long":  func(w http.ResponseWriter) { http.Error(w, long, http.StatusRequestEntityTooLarge) },
		"partial success": func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/x-protobuf")
			// ExportTraceServiceResponse and ExportMetricsServiceResponse
			// have the same shape.
			b, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{PartialSuccess: &coltracepb.ExportTracePartialSuccess{RejectedSpans: 3, ErrorMessage: "too old"}})
			_, _ = w.Write(b)
		},
		"partial success, no message": func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/x-protobuf")
			b, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{PartialSuccess: &coltracepb.ExportTracePartialSuccess{RejectedSpans: 1}})
			_, _ = w.Write(b)
		},
		"empty partial success": func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/x-protobuf")
			b, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{PartialSuccess: &coltracepb.ExportTracePartialSuccess{}})
			_, _ = w.Write(b)
		},
		"partial success in JSON": func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"partialSuccess":{"rejectedSpans":"2","errorMessage":"bad"}}`))
		},
		"not protobuf": func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/x-protobuf")
			_, _ = w.Write([]byte{0xff})
		},
		"text": func(w http.ResponseWriter) { _, _ = w.Write([]byte("ok")) },
	} {
		t.Run(name, func(t *testing.T) {
			col := newRecorder(t, answer)
			setEnv(t, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": col.srv.URL})
			ss := spans(t)
			rm := collect(t, sdkmetric.CumulativeTemporalitySelector)
			for _, pair := range [][2]error{
				{exportSpans(t, officialTraces(t), ss), exportSpans(t, ourTraces(t), ss)},
				{exportMetrics(t, officialMetrics(t), rm), exportMetrics(t, ourMetrics(t), rm)},
			} {
				official, ours := pair[0], pair[1]
				if name == "413 long" && ours != nil {
					// Ours quotes the body's start only.
					if !strings.Contains(ours.Error(), "413 Request Entity Too Large (body: "+long[:256]+"…)") {
						t.Errorf("ours: %v", ours)
					}
					continue
				}
				if name == "not protobuf" {
					if (official == nil) != (ours == nil) {
						t.Errorf("ours %v, the official exporter's %v", ours, official)
					}
					continue
				}
				if errString(official) != errString(ours) {
					t.Errorf("ours:\n%s\nthe official exporter's:\n%s", errString(ours), errString(official))
				}
			}
		})
	}
}

func errString(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

// _TIMEOUT bounds an export to a collector that never answers (the test
// would hang otherwise).
func TestTheTimeoutBoundsAnExport(t *testing.T) {
	stuck := make(chan struct{})
	hang := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { <-stuck }))
	defer hang.Close()
	defer close(stuck)
	setEnv(t, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": hang.URL, "OTEL_EXPORTER_OTLP_TIMEOUT": "50000", "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT": "100", "OTEL_EXPORTER_OTLP_METRICS_TIMEOUT": "100"})
	if err := exportSpans(t, ourTraces(t), spans(t)); err == nil || !strings.Contains(err.Error(), "Timeout") {
		t.Errorf("traces: %v, want a timeout", err)
	}
	if err := exportMetrics(t, ourMetrics(t), collect(t, sdkmetric.CumulativeTemporalitySelector)); err == nil || !strings.Contains(err.Error(), "Timeout") {
		t.Errorf("metrics: %v, want a timeout", err)
	}
}

// The temporality and histogram preferences give what the official
// exporter gives for every instrument kind; values it does not know are
// ignored, and named.
func TestMetricPreferencesAreTheOfficialExportersChoices(t *testing.T) {
	kinds := []sdkmetric.InstrumentKind{sdkmetric.InstrumentKindCounter, sdkmetric.InstrumentKindUpDownCounter, sdkmetric.InstrumentKindHistogram,
		sdkmetric.InstrumentKindGauge, sdkmetric.InstrumentKindObservableCounter, sdkmetric.InstrumentKindObservableUpDownCounter, sdkmetric.InstrumentKindObservableGauge}
	for _, c := range []struct {
		temporality, aggregation string
		problems                 int
	}{
		{"", "", 0}, {"cumulative", "explicit_bucket_histogram", 0}, {"Delta", "BASE2_EXPONENTIAL_BUCKET_HISTOGRAM", 0},
		{"lowmemory", "", 0}, {"sometimes", "round", 2},
	} {
		setEnv(t, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1",
			"OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE": c.temporality, "OTEL_EXPORTER_OTLP_METRICS_DEFAULT_HISTOGRAM_AGGREGATION": c.aggregation})
		official := officialMetrics(t)
		cfg, problems := otlphttp.FromEnv("METRICS", os.Getenv, os.ReadFile)
		if len(problems) != c.problems {
			t.Errorf("%+v: problems %v", c, problems)
		}
		ours, err := otlphttp.NewMetricExporter(cfg)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range kinds {
			if a, b := official.Temporality(k), ours.Temporality(k); a != b {
				t.Errorf("%+v: %v temporality %v, the official exporter's %v", c, k, b, a)
			}
			if a, b := official.Aggregation(k), ours.Aggregation(k); !reflect.DeepEqual(a, b) {
				t.Errorf("%+v: %v aggregation %#v, the official exporter's %#v", c, k, b, a)
			}
		}
	}
}

// Every variable FromEnv cannot follow is named, so rewind can warn.
func TestWhatCannotBeFollowedIsNamed(t *testing.T) {
	env := map[string]string{
		"OTEL_EXPORTER_OTLP_ENDPOINT":           "http://[::1",
		"OTEL_EXPORTER_OTLP_HEADERS":            "novalue",
		"OTEL_EXPORTER_OTLP_COMPRESSION":        "zstd",
		"OTEL_EXPORTER_OTLP_TIMEOUT":            "3s",
		"OTEL_EXPORTER_OTLP_CERTIFICATE":        "/nonexistent/ca.pem",
		"OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE": "/nonexistent/client.pem",
	}
	cfg, problems := otlphttp.FromEnv("TRACES", func(k string) string { return env[k] }, os.ReadFile)
	var named []string
	for _, p := range problems {
		name, _, _ := strings.Cut(p.Error(), ":")
		named = append(named, name)
	}
	want := []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_CERTIFICATE", "OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE",
		"OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_COMPRESSION", "OTEL_EXPORTER_OTLP_TIMEOUT"}
	if !reflect.DeepEqual(named, want) {
		t.Errorf("named %q, want %q", named, want)
	}
	// Each is ignored: the defaults stand.
	if cfg.Host != "localhost:4318" || cfg.Path != "/v1/traces" || cfg.Insecure || cfg.Gzip || cfg.Timeout != otlphttp.DefaultTimeout || cfg.TLS != nil || len(cfg.Headers) != 0 {
		t.Errorf("config %+v", cfg)
	}
	if _, problems := otlphttp.FromEnv("TRACES", func(string) string { return "" }, os.ReadFile); len(problems) != 0 {
		t.Errorf("no variables, problems %v", problems)
	}
}

// After Shutdown an export fails and sends nothing.
func TestAShutDownExporterSendsNothing(t *testing.T) {
	col := newRecorder(t, nil)
	setEnv(t, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": col.srv.URL})
	ctx := context.Background()
	var exps = []interface{ Shutdown(context.Context) error }{ourTraces(t), ourMetrics(t)}
	for _, e := range exps {
		if err := e.Shutdown(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if err := exps[0].(sdktrace.SpanExporter).ExportSpans(ctx, spans(t)); err == nil {
		t.Error("traces exported after shutdown")
	}
	if err := exps[1].(sdkmetric.Exporter).Export(ctx, collect(t, sdkmetric.CumulativeTemporalitySelector)); !errors.Is(err, otlphttp.ErrShutdown) {
		t.Errorf("metrics after shutdown: %v", err)
	}
	if got := col.take(); len(got) != 0 {
		t.Errorf("%d requests after shutdown", len(got))
	}
}
