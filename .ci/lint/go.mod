module rewind/ci/lint

go 1.26.8

require (
	github.com/jingyugao/rowserrcheck v1.1.1
	github.com/ryanrolds/sqlclosecheck v0.6.0
	github.com/timakin/bodyclose v0.0.0-20260723120731-857993a2939c
	github.com/uudashr/gocognit v1.3.0
	golang.org/x/tools v0.53.0
)

require (
	github.com/gostaticanalysis/analysisutil v0.7.1 // indirect
	github.com/gostaticanalysis/comment v1.4.2 // indirect
	golang.org/x/mod v0.43.0 // indirect
	golang.org/x/sync v0.25.0 // indirect
	golang.org/x/tools/go/packages/packagestest v0.1.1-deprecated // indirect
)
