#!/usr/bin/env bash
# Writes the same threads into STORE with the old binary /tmp/rw.
set -u
S="$1"
R="/tmp/rw"
$R selftest --store "$S" >/dev/null || echo selftest failed
for i in 1 2 3 4; do $R run --store "$S" --thread long --input "turn $i: where is SO20260$i, and can I get a refund?" >/dev/null || echo long $i; done
$R run --store "$S" --thread forked --input "My order SO20260901 hasn't arrived: where is it?" >/dev/null
$R run --store "$S" --thread forked --input "And the invoice for SO20260901?" >/dev/null
$R fork --store "$S" forked 3 --input "Actually, cancel SO20260901 please" >/dev/null || echo fork
$R run --store "$S" --thread paused --input "Where is SO20260777 and is it refundable?" --interrupt-before executor >/dev/null
$R run --store "$S" --thread draft --input "Refund SO20260555 please" --draft --auth-ttl 8760h >/dev/null
$R approve --store "$S" draft >/dev/null || echo approve
$R run --store "$S" --thread killed --input "Where is SO20260888, refund and invoice?" --kill-at mid-fanout >/dev/null 2>&1
for i in 1 2 3; do $R run --store "$S" --thread pruned --input "turn $i: SO2026010$i status?" >/dev/null; done
$R prune --store "$S" pruned --keep-last 5 >/dev/null || echo prune
true
