package cli

import (
	"fmt"
	"runtime/debug"
)

// version is what `rewind --version` prints: the module version and the
// VCS revision the binary was built from, as the Go toolchain stamped them.
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown (built without module information)"
	}
	return describeBuild(bi)
}

func describeBuild(bi *debug.BuildInfo) string {
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	var rev, at string
	var dirty bool
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			at = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		// go run, and builds with -buildvcs=false, carry no revision.
		return v + ", revision unknown (built without VCS stamping)"
	}
	s := fmt.Sprintf("%s, revision %.12s", v, rev)
	if at != "" {
		s += " of " + at
	}
	if dirty {
		s += ", with uncommitted changes"
	}
	return s
}
