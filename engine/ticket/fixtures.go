package ticket

import _ "embed"

// V1Checkpoint is a checkpoint document in the v1 shape (attachment `url`,
// subtask `calls`, status WAITING, no budget field), kept to prove that old
// threads still read correctly.
//
//go:embed testdata/checkpoint_v1.json
var V1Checkpoint []byte
