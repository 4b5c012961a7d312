//go:build race

package rewindbin

const raced = true
