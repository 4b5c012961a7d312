// Command lint is the lint gate of .ci/run (see lint.sh), the checks go
// vet and staticcheck lack. With no subcommand it runs the analyzers:
// rows.Err checked (rowserrcheck, less rows pgx checks: exclude.go), sql rows and statements closed with
// defer (sqlclosecheck, less the statement caches: exclude.go), HTTP bodies
// closed (bodyclose). `lint cognit` checks cognitive complexity against a
// baseline (cognit.go); `lint enginesize` checks that engine/'s non-test
// files total at most 6,000 lines (enginesize.go); `lint testmain` that
// every package with tests ends through rewindbin (testmain.go).
package main

import (
	"os"

	"github.com/timakin/bodyclose/passes/bodyclose"
	"golang.org/x/tools/go/analysis/multichecker"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "cognit" {
		os.Exit(cognit(os.Args[2:], os.Stdout, os.Stderr))
	}
	if len(os.Args) > 1 && os.Args[1] == "enginesize" {
		os.Exit(engineSize(os.Args[2:], os.Stdout, os.Stderr))
	}
	if len(os.Args) > 1 && os.Args[1] == "testmain" {
		os.Exit(testMain(os.Args[2:], os.Stdout, os.Stderr))
	}
	multichecker.Main(
		rowsErr,
		sqlclose,
		bodyclose.Analyzer,
	)
}
