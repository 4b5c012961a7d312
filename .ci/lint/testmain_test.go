package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A package with tests but no TestMain, or one that ends through
// os.Exit, is named; one that ends through rewindbin, a folder without
// tests, testdata and another module are not.
func TestTestMain(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module x\n")
	write("a/a_test.go", "package a\nfunc TestMain(m *testing.M) { rewindbin.Main(m) }\n")
	write("a/b_test.go", "package a\nfunc TestB(t *testing.T) {}\n")
	write("b/b_test.go", "package b\nfunc TestMain(m *testing.M) {\n\tcode := pgtest.Run(m)\n\trewindbin.Exit(code)\n}\n")
	write("c/c_test.go", "package c\nfunc TestC(t *testing.T) {}\n")
	write("d/d_test.go", "package d\nfunc TestMain(m *testing.M) { os.Exit(m.Run()) }\n")
	write("e/e.go", "package e\n")
	write("a/testdata/x_test.go", "package x\n")
	write("other/go.mod", "module other\n")
	write("other/o_test.go", "package o\n")
	var out, errb bytes.Buffer
	if code := testMain([]string{dir}, &out, &errb); code != 1 || strings.Count(errb.String(), "\n") != 1 || !strings.Contains(errb.String(), "testmain: c, d: no TestMain") {
		t.Fatalf("exit %d, %q %q; want 1 naming c and d on one line", code, out.String(), errb.String())
	}
	write("c/main_test.go", "package c\nfunc TestMain(m *testing.M) { rewindbin.Main(m) }\n")
	write("d/d_test.go", "package d\nfunc TestMain(m *testing.M) { rewindbin.Exit(m.Run()) }\n")
	errb.Reset()
	if code := testMain([]string{dir}, &out, &errb); code != 0 || !strings.Contains(out.String(), "4 packages with tests") {
		t.Fatalf("exit %d, %q %q; want 0 counting 4", code, out.String(), errb.String())
	}
}
