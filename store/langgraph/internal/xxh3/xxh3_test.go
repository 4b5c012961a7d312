package xxh3

import (
	"encoding/hex"
	"math/rand/v2"
	"testing"

	zeebo "github.com/zeebo/xxh3"

	"rewind/cli/rewindbin"
)

func TestMain(m *testing.M) { rewindbin.Main(m) }

// A wrong hash names no Python task of a LangGraph database (format 2
// and later): these are XXH3-128 of counting(n), computed once with
// github.com/zeebo/xxh3 v1.1.0 and written here, so the test fails even
// if this package and zeebo's went wrong alike. The empty input's is the
// xxHash documentation's.
func TestKnownAnswers(t *testing.T) {
	for _, c := range []struct {
		n    int
		want string
	}{
		{0, "99aa06d3014798d86001c324468d497f"},
		{1, "a6cd5e9392000f6ac44bdff4074eecdb"},
		{3, "e3b55f57945a17cf5f4299fc161c9cbb"},
		{4, "eb70bf5fc779e9e6a6111d53e80a3db5"},
		{8, "e1e4432a62217fe4cfd50c61c8bb98c1"},
		{9, "16c769d83e4aebce907931979dca3746"},
		{16, "72950631827607e2842812cc870dcae2"},
		{17, "685bc458b37d057fc06e233df7729217"},
		{128, "14792fc3af88dc6c05321a0b64d67b41"},
		{129, "dd5e74ac6b45f54ebc30b63382b09a3b"},
		{240, "65b5be86da5540e7c92b68e16f83bbb6"},
		{241, "1da1cb61bcb8a2a102e8cd95421c6d02"},
		{1024, "d0ac1f7b93bf57b9e5d78bafa45b2aa5"},
		{1025, "2882ebca04ec915ce95c42288f28186e"},
		{2048, "a5141efedfefc1af25339063db861586"},
		{10000, "89dec82a789965e61cb3abee1c2fc1c4"},
	} {
		sum := Sum128(counting(c.n))
		if got := hex.EncodeToString(sum[:]); got != c.want {
			t.Errorf("Sum128(counting(%d)) = %s, want %s", c.n, got, c.want)
		}
	}
	sum := Sum128([]byte("hello"))
	if got, want := hex.EncodeToString(sum[:]), "b5e9c1ad071b3e7fc779cfaa5e523818"; got != want {
		t.Errorf(`Sum128("hello") = %s, want %s`, got, want)
	}
}

// Every length through two long-path blocks and a bit, random bytes,
// against github.com/zeebo/xxh3 (a test dependency only: the binary
// links this package instead, which has no init).
func TestAgreesWithZeebo(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	buf := make([]byte, 100_000)
	for i := range buf {
		buf[i] = byte(r.Uint32())
	}
	check := func(b []byte) {
		t.Helper()
		if got, want := Sum128(b), zeebo.Hash128(b).Bytes(); got != want {
			t.Errorf("length %d: Sum128 %x, zeebo %x", len(b), got, want)
		}
	}
	for n := 0; n <= 2100; n++ {
		check(buf[:n])
		check(buf[len(buf)-n:]) // other bytes, other alignment
	}
	for _, edge := range []int{16, 17, 128, 129, 240, 241, 1024, 1025} {
		for n := edge - 1; n <= edge+1; n++ {
			check(buf[7 : 7+n])
		}
	}
	for _, n := range []int{10_000, 100_000} {
		check(buf[:n])
	}
	for _, s := range []string{"", "a", "ab", "abc", "hello", "__pregel_pull", "__pregel_push",
		"1ef4f797-8335-6428-8001-8a1503f9b875agent|tools2tools__pregel_pullbranch:to:tools"} {
		check([]byte(s))
	}
}

// counting is n bytes 0, 1, 2, … (mod 251: no stripe repeats another).
func counting(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i % 251)
	}
	return b
}
