package postgres

import _ "embed"

// RowSecuritySQL makes PostgreSQL itself keep tenants apart: a role named
// after a tenant reads and writes that tenant's rows only, whatever SQL
// it sends (rowsecurity.sql says how to run it, and the roles to make).
//
//go:embed rowsecurity.sql
var RowSecuritySQL string
