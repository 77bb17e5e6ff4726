-- Workspace API keys get a scope. `read` is what the specification's keys do (reporting, MCP and
-- ingestion); `admin` additionally manages tracking sources, keys and ad mappings through the admin
-- HTTP API, which the specification reserves for owners and admins.
ALTER TABLE api_keys ADD COLUMN scope Enum8('read' = 1, 'admin' = 2) DEFAULT 'read';
