//go:build !race

package rewindbin

const raced = false
