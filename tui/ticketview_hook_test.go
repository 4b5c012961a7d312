package tui_test

import (
	"rewind/tui"
	"rewind/tui/ticketview"
)

// The package's internal tests draw the ticket's threads with its
// extension (ticket_hook_test.go).
func init() { tui.TicketExtensionForTests = ticketview.Extension }
