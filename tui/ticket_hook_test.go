package tui

// TicketExtension is the ticket graph's extension (rewind/tui/ticketview)
// for this package's own tests, which draw, check and answer the ticket's
// threads with it. An internal test cannot import ticketview (it imports
// tui), so ticketview_hook_test.go, in package tui_test, sets
// TicketExtensionForTests before any test runs.
func TicketExtension() Extension { return TicketExtensionForTests() }

// TicketExtensionForTests is ticketview.Extension.
var TicketExtensionForTests func() Extension
