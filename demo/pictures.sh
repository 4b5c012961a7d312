#!/usr/bin/env bash
# demo/pictures.sh regenerates the README's pictures (demo/pictures/*.svg):
# it builds rewind, prepares lessons in a throwaway store, drives the real
# TUI in tmux at a fixed size, captures each screen with its colours
# (tmux capture-pane -p -e) and renders it with charmbracelet/freeze.
#
#   demo/pictures.sh            # all of them, 120×40
#   PICTURES_SIZE=100x32 demo/pictures.sh
#
# Needs tmux and Go (freeze is `go run …@v0.2.2`, from the module proxy or
# its cache). Offline: the lessons use the mock model. Each screen is waited
# for by its content, never by a fixed sleep.
set -euo pipefail

cd "$(dirname "$0")/.."
out=demo/pictures
size=${PICTURES_SIZE:-120x40}
cols=${size%x*}
rows=${size#*x}
freeze="github.com/charmbracelet/freeze@v0.2.2"
# Not embedded: the reader's monospace font draws the box and arrow glyphs
# (JetBrains Mono, freeze's embedded font, lacks some) and each file stays
# a few tens of KB.
font="DejaVu Sans Mono, Menlo, Consolas, monospace"

command -v tmux >/dev/null || { echo "pictures.sh: tmux is needed: install it (apt-get install tmux)" >&2; exit 1; }
tmp=$(mktemp -d)
sock="rewind-pictures-$$"
cleanup() {
	tmux -L "$sock" kill-server 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT

go build -o "$tmp/rewind" .
rw() { XDG_STATE_HOME="$tmp/state" XDG_CONFIG_HOME="$tmp/config" "$tmp/rewind" "$@"; }
store="sqlite:$tmp/demo.db"
echo "preparing lessons in $store"
rw demo summary --headless --store "$store" >/dev/null
rw demo fork --headless --store "$store" >/dev/null
# A run SIGKILLed at a kill point mid fan-out: one executor stored, two not.
rw run --store "$store" --thread kill-resume --kill-at mid-fanout \
	--input "My order SO20260901 hasn't arrived: what is the order status, where is the parcel, and can I get a refund?" >/dev/null 2>&1 || true

tm() { tmux -L "$sock" "$@"; }
# A session that outlives the others keeps the server up between them.
tm new-session -d -s keep -x "$cols" -y "$rows" "sleep 3600"

# open ARGS…: rewind ARGS… in a fresh tmux window of the fixed size.
open() {
	tm kill-session -t pic 2>/dev/null || true
	tm new-session -d -s pic -x "$cols" -y "$rows" \
		"env XDG_STATE_HOME=$tmp/state XDG_CONFIG_HOME=$tmp/config TERM=tmux-256color $tmp/rewind $* 2>>$tmp/stderr; sleep 600"
}

# wait_for TEXT…: until the screen shows every TEXT (60 s at most).
wait_for() {
	local screen i t ok
	for i in $(seq 600); do
		screen=$(tm capture-pane -p -t pic)
		ok=1
		for t in "$@"; do
			[[ $screen == *"$t"* ]] || ok=0
		done
		[[ $ok == 1 ]] && return 0
		sleep 0.1
	done
	echo "pictures.sh: timed out waiting for: $*" >&2
	echo "$screen" >&2
	cat "$tmp/stderr" >&2 || true
	exit 1
}

# keys KEY…: one key at a time, as a person types.
keys() {
	local k
	for k in "$@"; do
		tm send-keys -t pic "$k"
		sleep 0.05
	done
}

# shot NAME: the screen as it is, with its colours, to $out/NAME.svg.
shot() {
	tm capture-pane -p -e -t pic >"$tmp/$1.ansi"
	go run "$freeze" --language ansi --font.family "$font" --output "$out/$1.svg" <"$tmp/$1.ansi" >/dev/null
	echo "wrote $out/$1.svg"
}

mkdir -p "$out"

# The summary vs the verbatim tail: the first compaction's summary, its
# lines #index speaker: (unfolded from its pinned line), then the tail;
# the State pane's fidelity badge.
open tui --store "$store" lesson:summary
wait_for "at @32 32/32"
keys 2 G
for _ in $(seq 16); do keys h; done
wait_for "at @16 16/32" "fidelity ✓"
keys 1 z PgUp PgUp PgUp PgUp PgUp PgUp # 1 focuses the conversation, z unfolds the pinned summary: its top
wait_for "Summary · #1–#22" "#1 user: My order"
shot summary-vs-tail

# The diff: the summarizer's checkpoint against its parent (Inspector).
keys h 3
wait_for "at @15 15/32" "Diff against parent"
shot diff

# The fork tree: two branches from @1, both whole.
open tui --store "$store" lesson:fork
wait_for "branch 2/2 at @1" "Here is where things stand"
shot fork-tree

# The kill/resume strip: r resumes the killed run; the stored executor is
# reused, the others redispatched.
open tui --store "$store" kill-resume
wait_for "at @2 2/2"
keys r
wait_for "reused, not run again" "redispatched · done" "done at @"
shot kill-resume

# A lesson in the TUI: rewind demo fork, its script beside the panes.
open demo fork --store "$store"
wait_for "Lesson fork · s hides" "PASS: with @1"
shot lesson
