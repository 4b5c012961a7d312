package otlphttp

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

const (
	contentProto = "application/x-protobuf"
	contentJSON  = "application/json"
	// maxAnswer is the most of an answer read, as the official exporters.
	maxAnswer = 4 << 20
	// maxRequest is the largest body sent, as the official exporters.
	maxRequest = 64 << 20
	// bodyShown is how much of a refusal's body its error quotes.
	bodyShown = 256
)

var errInsecureWithTLS = errors.New("insecure HTTP endpoint cannot use TLS client configuration")

// transport is net/http's default transport's settings (the proxy from
// the environment included), a copy nobody else can change.
var transport = &http.Transport{
	Proxy:                 http.ProxyFromEnvironment,
	DialContext:           (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
	ForceAttemptHTTP2:     true,
	MaxIdleConns:          100,
	IdleConnTimeout:       90 * time.Second,
	TLSHandshakeTimeout:   10 * time.Second,
	ExpectContinueTimeout: 1 * time.Second,
}

type client struct {
	signal string // "traces" or "metrics"
	url    string
	header http.Header
	gzip   bool
	http   *http.Client
}

func newClient(cfg Config, signal string) (*client, error) {
	if cfg.Insecure && cfg.TLS != nil {
		return nil, errInsecureWithTLS
	}
	u := url.URL{Scheme: "https", Host: cfg.Host, Path: cfg.Path}
	if cfg.Insecure {
		u.Scheme = "http"
	}
	c := &client{signal: signal, url: u.String(), header: http.Header{}, gzip: cfg.Gzip,
		http: &http.Client{Transport: transport, Timeout: cfg.Timeout}}
	if cfg.TLS != nil {
		t := transport.Clone()
		t.TLSClientConfig = cfg.TLS
		c.http.Transport = t
	}
	if _, err := http.NewRequest(http.MethodPost, c.url, http.NoBody); err != nil {
		return nil, fmt.Errorf("the %s endpoint %s: %w", signal, c.url, err)
	}
	c.header.Set("User-Agent", cfg.UserAgent)
	for k, v := range cfg.Headers {
		c.header.Set(k, v)
	}
	c.header.Set("Content-Type", contentProto)
	return c, nil
}

// post sends one request; an answer other than 2xx is an error naming its
// status and the start of its body. It gives a 2xx answer's body and type.
func (c *client) post(ctx context.Context, body []byte) ([]byte, string, error) {
	if len(body) > maxRequest {
		return nil, "", fmt.Errorf("request body too large: exceeded %d bytes", maxRequest)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, nil)
	if err != nil {
		return nil, "", err
	}
	req.Header = c.header.Clone()
	if c.gzip {
		var b bytes.Buffer
		gz := gzip.NewWriter(&b)
		if _, err := gz.Write(body); err != nil {
			return nil, "", err
		}
		if err := gz.Close(); err != nil {
			return nil, "", err
		}
		body = b.Bytes()
		req.Header.Set("Content-Encoding", "gzip")
		req.ContentLength = -1 // as the official exporters: chunked
	} else {
		req.ContentLength = int64(len(body))
	}
	req.Body = io.NopCloser(bytes.NewReader(body))
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, "", err
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer+1))
	if err != nil {
		return nil, "", err
	}
	if len(answer) > maxAnswer {
		return nil, "", fmt.Errorf("response body too large: exceeded %d bytes", maxAnswer)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		shown := strings.TrimSpace(string(answer))
		if len(shown) > bodyShown {
			shown = strings.ToValidUTF8(shown[:bodyShown], "") + "…"
		}
		if shown == "" {
			shown = "(empty)"
		}
		// Worded as the official exporters word it.
		sent := "send"
		if c.signal == "metrics" {
			sent = "send metrics"
		}
		return nil, "", fmt.Errorf("failed to %s to %s: %s (body: %s)", sent, c.url, resp.Status, shown)
	}
	return answer, resp.Header.Get("Content-Type"), nil
}

// partialSuccess is the error a 2xx answer's partial_success names, as
// the official exporters read it: protobuf, and JSON too for traces.
func partialSuccess(answer []byte, kind, what string, jsonToo bool) error {
	if len(answer) == 0 {
		return nil
	}
	var rejected int64
	var msg string
	var err error
	switch {
	case kind == contentProto:
		rejected, msg, err = protoPartialSuccess(answer)
	case kind == contentJSON && jsonToo:
		rejected, msg, err = jsonPartialSuccess(answer)
	}
	if err != nil || (rejected == 0 && msg == "") {
		return err
	}
	if msg == "" {
		msg = "empty message"
	}
	return fmt.Errorf("OTLP partial success: %s (%d %s rejected)", msg, rejected, what)
}

// protoPartialSuccess reads an Export{Trace,Metrics}ServiceResponse: its
// field 1, a partial success of rejected count (1) and message (2).
func protoPartialSuccess(answer []byte) (rejected int64, msg string, err error) {
	top, ok := fields(answer)
	if !ok {
		return 0, "", errors.New("the collector's answer is not protobuf")
	}
	for _, f := range top {
		if f.num != 1 || f.typ != wireBytes {
			continue
		}
		inner, ok := fields(f.p)
		if !ok {
			return 0, "", errors.New("the collector's answer is not protobuf")
		}
		for _, g := range inner {
			switch {
			case g.num == 1 && g.typ == wireVarint:
				rejected = int64(g.v)
			case g.num == 2 && g.typ == wireBytes:
				msg = string(g.p)
			}
		}
	}
	return rejected, msg, nil
}

// jsonPartialSuccess reads an ExportTraceServiceResponse in protobuf's
// JSON (an int64 as a string or a number, either name of a field).
func jsonPartialSuccess(answer []byte) (rejected int64, msg string, err error) {
	var r map[string]map[string]json.RawMessage
	if err := json.Unmarshal(answer, &r); err != nil {
		return 0, "", fmt.Errorf("the collector's answer: %w", err)
	}
	ps := r["partialSuccess"]
	if ps == nil {
		ps = r["partial_success"]
	}
	for k, v := range ps {
		switch k {
		case "rejectedSpans", "rejected_spans":
			if rejected, err = strconv.ParseInt(strings.Trim(string(v), `"`), 10, 64); err != nil {
				return 0, "", fmt.Errorf("the collector's answer: %s: %w", k, err)
			}
		case "errorMessage", "error_message":
			if err := json.Unmarshal(v, &msg); err != nil {
				return 0, "", fmt.Errorf("the collector's answer: %s: %w", k, err)
			}
		}
	}
	return rejected, msg, nil
}
