package engine

// SetBaseEvery makes every nth checkpoint of a branch a base, for tests
// that want short and long delta chains; it returns the undo.
func SetBaseEvery(n int) func() {
	old := baseEvery
	baseEvery = n
	return func() { baseEvery = old }
}
