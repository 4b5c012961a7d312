package statewalk

import (
	"testing"

	"rewind/cli/rewindbin"
)

func TestMain(m *testing.M) { rewindbin.Main(m) }
