package main

import (
	"os/exec"
	"strings"
	"testing"
)

// Every process start pays the package inits the binary links: these
// cost it for a feature that has its own code instead (cpuid's CPUID
// traps to the hypervisor in a VM, ~0.33 ms; it came with zeebo/xxh3,
// now store/langgraph/internal/xxh3; md2man and blackfriday came with
// cobra's man pages, cli/man.go; gRPC, protobuf (whose detrand init reads
// the whole executable), the generated OTLP types, x/net/trace and
// html/template came with the official OTLP exporters, ~1.8 ms:
// engine/telemetry/internal/otlphttp writes OTLP itself).
func TestTheBinaryLinksNoCostlyInit(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", "rewind").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps rewind: %v\n%s", err, out)
	}
	for _, pkg := range strings.Fields(string(out)) {
		for _, costly := range []string{"github.com/klauspost/cpuid", "github.com/zeebo/xxh3", "github.com/cpuguy83/go-md2man", "github.com/russross/blackfriday",
			"google.golang.org/grpc", "google.golang.org/protobuf", "go.opentelemetry.io/proto", "go.opentelemetry.io/otel/exporters",
			"github.com/grpc-ecosystem", "golang.org/x/net/trace", "html/template"} {
			if strings.HasPrefix(pkg, costly) {
				t.Errorf("rewind links %s (go list -deps rewind), whose init every command pays at start", pkg)
			}
		}
	}
}
