// Package unregistered is the test of a program that links engine/worker
// and no graph (a graph author's own, without the ticket): its test
// binary links nothing that registers one, so the worker's lookups meet
// an empty registry as such a program's do.
package unregistered
