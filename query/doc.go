// Package query is the read-only reporting edge: the REST API under /api/v1 and the MCP server at
// /api/mcp, both over one query service that reads ClickHouse. It never writes and never triggers a
// platform sync.
package query
