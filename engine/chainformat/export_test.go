package chainformat

// Every state document the tests write is checked against json.Marshal.
func init() { checkStateJSON = true }
