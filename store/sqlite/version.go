package sqlite

// SchemaVersion is the store schema this rewind writes: Open upgrades an
// older store to it (cli/app opens an older one only for a command that
// writes).
const SchemaVersion = schemaVersion
