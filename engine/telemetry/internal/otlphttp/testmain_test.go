package otlphttp_test

import (
	"testing"

	"rewind/cli/rewindbin"
)

func TestMain(m *testing.M) { rewindbin.Main(m) }
