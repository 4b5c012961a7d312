package sqlite

// For the upgrade tests: the schema this binary writes and how it got there.
const SchemaVersion = schemaVersion

var Migrations = migrations
