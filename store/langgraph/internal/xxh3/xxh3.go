// Package xxh3 is XXH3-128 with the default secret and seed 0, the hash
// of LangGraph Python's task ids (_xxhash_str), written after the xxHash
// specification (doc/xxhash_spec.md, xxhash.h). It is plain Go with no
// package init: github.com/zeebo/xxh3 linked klauspost/cpuid, whose init
// (CPUID, a trap to the hypervisor in a VM) every rewind process paid.
package xxh3

import (
	"encoding/binary"
	"math/bits"
)

const (
	prime32_1 = 0x9E3779B1
	prime32_2 = 0x85EBCA77
	prime32_3 = 0xC2B2AE3D
	prime64_1 = 0x9E3779B185EBCA87
	prime64_2 = 0xC2B2AE3D27D4EB4F
	prime64_3 = 0x165667B19E3779F9
	prime64_4 = 0x85EBCA77C2B2AE63
	prime64_5 = 0x27D4EB2F165667C5
	primeMx1  = 0x165667919E3779F9
	primeMx2  = 0x9FB21C651E98DF25
)

// secret is kSecret, the default secret (192 bytes).
var secret = [192]byte{
	0xb8, 0xfe, 0x6c, 0x39, 0x23, 0xa4, 0x4b, 0xbe, 0x7c, 0x01, 0x81, 0x2c, 0xf7, 0x21, 0xad, 0x1c,
	0xde, 0xd4, 0x6d, 0xe9, 0x83, 0x90, 0x97, 0xdb, 0x72, 0x40, 0xa4, 0xa4, 0xb7, 0xb3, 0x67, 0x1f,
	0xcb, 0x79, 0xe6, 0x4e, 0xcc, 0xc0, 0xe5, 0x78, 0x82, 0x5a, 0xd0, 0x7d, 0xcc, 0xff, 0x72, 0x21,
	0xb8, 0x08, 0x46, 0x74, 0xf7, 0x43, 0x24, 0x8e, 0xe0, 0x35, 0x90, 0xe6, 0x81, 0x3a, 0x26, 0x4c,
	0x3c, 0x28, 0x52, 0xbb, 0x91, 0xc3, 0x00, 0xcb, 0x88, 0xd0, 0x65, 0x8b, 0x1b, 0x53, 0x2e, 0xa3,
	0x71, 0x64, 0x48, 0x97, 0xa2, 0x0d, 0xf9, 0x4e, 0x38, 0x19, 0xef, 0x46, 0xa9, 0xde, 0xac, 0xd8,
	0xa8, 0xfa, 0x76, 0x3f, 0xe3, 0x9c, 0x34, 0x3f, 0xf9, 0xdc, 0xbb, 0xc7, 0xc7, 0x0b, 0x4f, 0x1d,
	0x8a, 0x51, 0xe0, 0x4b, 0xcd, 0xb4, 0x59, 0x31, 0xc8, 0x9f, 0x7e, 0xc9, 0xd9, 0x78, 0x73, 0x64,
	0xea, 0xc5, 0xac, 0x83, 0x34, 0xd3, 0xeb, 0xc3, 0xc5, 0x81, 0xa0, 0xff, 0xfa, 0x13, 0x63, 0xeb,
	0x17, 0x0d, 0xdd, 0x51, 0xb7, 0xf0, 0xda, 0x49, 0xd3, 0x16, 0x55, 0x26, 0x29, 0xd4, 0x68, 0x9e,
	0x2b, 0x16, 0xbe, 0x58, 0x7d, 0x47, 0xa1, 0xfc, 0x8f, 0xf8, 0xb8, 0xd1, 0x7a, 0xd0, 0x31, 0xce,
	0x45, 0xcb, 0x3a, 0x8f, 0x95, 0x16, 0x04, 0x28, 0xaf, 0xd7, 0xfb, 0xca, 0xbb, 0x4b, 0x40, 0x7e,
}

// Sum128 is b's XXH3-128 in canonical form: big-endian, the high 64 bits
// first (Python's xxhash.xxh3_128_digest).
func Sum128(b []byte) [16]byte {
	hi, lo := hash128(b)
	var out [16]byte
	binary.BigEndian.PutUint64(out[:8], hi)
	binary.BigEndian.PutUint64(out[8:], lo)
	return out
}

// hash128 picks the spec's path by length. With seed 0 every "+ seed"
// and "- seed" of the spec drops out.
func hash128(b []byte) (hi, lo uint64) {
	switch n := len(b); {
	case n == 0:
		lo = xxh64Avalanche(sec64(64) ^ sec64(72))
		hi = xxh64Avalanche(sec64(80) ^ sec64(88))
		return hi, lo
	case n <= 3:
		return len1to3(b)
	case n <= 8:
		return len4to8(b)
	case n <= 16:
		return len9to16(b)
	case n <= 128:
		return len17to128(b)
	case n <= 240:
		return len129to240(b)
	}
	return long(b)
}

func len1to3(b []byte) (hi, lo uint64) {
	n := len(b)
	combinedl := uint32(b[0])<<16 | uint32(b[n>>1])<<24 | uint32(b[n-1]) | uint32(n)<<8
	combinedh := bits.RotateLeft32(bits.ReverseBytes32(combinedl), 13)
	bitflipl := uint64(sec32(0) ^ sec32(4))
	bitfliph := uint64(sec32(8) ^ sec32(12))
	lo = xxh64Avalanche(uint64(combinedl) ^ bitflipl)
	hi = xxh64Avalanche(uint64(combinedh) ^ bitfliph)
	return hi, lo
}

func len4to8(b []byte) (hi, lo uint64) {
	n := len(b)
	in := uint64(le32(b)) | uint64(le32(b[n-4:]))<<32
	keyed := in ^ (sec64(16) ^ sec64(24))
	hi, lo = bits.Mul64(keyed, prime64_1+uint64(n)<<2)
	hi += lo << 1
	lo ^= hi >> 3
	lo ^= lo >> 35
	lo *= primeMx2
	lo ^= lo >> 28
	return avalanche(hi), lo
}

func len9to16(b []byte) (hi, lo uint64) {
	n := len(b)
	bitflipl := sec64(32) ^ sec64(40)
	bitfliph := sec64(48) ^ sec64(56)
	inLo, inHi := le64(b), le64(b[n-8:])
	mhi, mlo := bits.Mul64(inLo^inHi^bitflipl, prime64_1)
	mlo += uint64(n-1) << 54
	inHi ^= bitfliph
	mhi += inHi + uint64(uint32(inHi))*(prime32_2-1)
	mlo ^= bits.ReverseBytes64(mhi)
	hi, lo = bits.Mul64(mlo, prime64_2)
	hi += mhi * prime64_2
	return avalanche(hi), avalanche(lo)
}

func len17to128(b []byte) (hi, lo uint64) {
	n := len(b)
	acc := [2]uint64{uint64(n) * prime64_1, 0}
	if n > 32 {
		if n > 64 {
			if n > 96 {
				mix32(&acc, b[48:], b[n-64:], 96)
			}
			mix32(&acc, b[32:], b[n-48:], 64)
		}
		mix32(&acc, b[16:], b[n-32:], 32)
	}
	mix32(&acc, b, b[n-16:], 0)
	return finish(acc, n)
}

func len129to240(b []byte) (hi, lo uint64) {
	n := len(b)
	acc := [2]uint64{uint64(n) * prime64_1, 0}
	for i := 0; i < 4; i++ {
		mix32(&acc, b[32*i:], b[32*i+16:], 32*i)
	}
	acc[0], acc[1] = avalanche(acc[0]), avalanche(acc[1])
	// midsize start offset 3; the last round reads the secret at
	// 136 (its minimum size) - 17 (last offset) - 16.
	for i := 4; i < n/32; i++ {
		mix32(&acc, b[32*i:], b[32*i+16:], 3+32*(i-4))
	}
	mix32(&acc, b[n-16:], b[n-32:], 136-17-16)
	return finish(acc, n)
}

// finish ends both the 17–128 and 129–240 paths.
func finish(acc [2]uint64, n int) (hi, lo uint64) {
	lo = acc[0] + acc[1]
	hi = acc[0]*prime64_1 + acc[1]*prime64_4 + uint64(n)*prime64_2
	return -avalanche(hi), avalanche(lo)
}

// mix32 is XXH128_mix32B: 16 bytes of a and b each, keyed by the secret
// at s.
func mix32(acc *[2]uint64, a, b []byte, s int) {
	acc[0] += mix16(a, s)
	acc[0] ^= le64(b) + le64(b[8:])
	acc[1] += mix16(b, s+16)
	acc[1] ^= le64(a) + le64(a[8:])
}

func mix16(b []byte, s int) uint64 {
	return mulFold(le64(b)^sec64(s), le64(b[8:])^sec64(s+8))
}

// The long path: 64-byte stripes into 8 accumulators, 16 stripes a block
// ((192 - 64) / 8), each stripe's key 8 bytes further into the secret, the
// accumulators scrambled after each whole block; the last stripe is the
// input's last 64 bytes.
const (
	stripeLen  = 64
	perBlock   = (len(secret) - stripeLen) / 8
	blockLen   = stripeLen * perBlock
	lastAccKey = len(secret) - stripeLen - 7
	scrambleAt = len(secret) - stripeLen
)

func long(b []byte) (hi, lo uint64) {
	n := len(b)
	acc := [8]uint64{prime32_3, prime64_1, prime64_2, prime64_3, prime64_4, prime32_2, prime64_5, prime32_1}
	blocks := (n - 1) / blockLen
	for k := 0; k < blocks; k++ {
		stripes(&acc, b[k*blockLen:], perBlock)
		scramble(&acc)
	}
	stripes(&acc, b[blocks*blockLen:], (n-1-blocks*blockLen)/stripeLen)
	accumulate(&acc, b[n-stripeLen:], lastAccKey)
	lo = mergeAccs(&acc, 11, uint64(n)*prime64_1)
	hi = mergeAccs(&acc, len(secret)-64-11, ^(uint64(n) * prime64_2))
	return hi, lo
}

func stripes(acc *[8]uint64, b []byte, count int) {
	for i := 0; i < count; i++ {
		accumulate(acc, b[i*stripeLen:], i*8)
	}
}

// accumulate is XXH3_accumulate_512: one stripe, keyed by the secret at s.
func accumulate(acc *[8]uint64, b []byte, s int) {
	for i := range acc {
		v := le64(b[8*i:])
		k := v ^ sec64(s+8*i)
		acc[i^1] += v
		acc[i] += uint64(uint32(k)) * (k >> 32)
	}
}

func scramble(acc *[8]uint64) {
	for i := range acc {
		a := acc[i]
		a ^= a >> 47
		a ^= sec64(scrambleAt + 8*i)
		acc[i] = a * prime32_1
	}
}

func mergeAccs(acc *[8]uint64, s int, start uint64) uint64 {
	r := start
	for i := 0; i < 4; i++ {
		r += mulFold(acc[2*i]^sec64(s+16*i), acc[2*i+1]^sec64(s+16*i+8))
	}
	return avalanche(r)
}

// mulFold is XXH3_mul128_fold64: the 128-bit product's halves xored.
func mulFold(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	return hi ^ lo
}

// avalanche is XXH3_avalanche.
func avalanche(h uint64) uint64 {
	h ^= h >> 37
	h *= primeMx1
	return h ^ h>>32
}

// xxh64Avalanche is XXH64's final mix, which the shortest inputs use.
func xxh64Avalanche(h uint64) uint64 {
	h ^= h >> 33
	h *= prime64_2
	h ^= h >> 29
	h *= prime64_3
	return h ^ h>>32
}

func le32(b []byte) uint32 { return binary.LittleEndian.Uint32(b) }
func le64(b []byte) uint64 { return binary.LittleEndian.Uint64(b) }

func sec32(s int) uint32 { return le32(secret[s:]) }
func sec64(s int) uint64 { return le64(secret[s:]) }
