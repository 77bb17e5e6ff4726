ALTER TABLE revtrack.api_keys ADD COLUMN scope Enum8('read' = 1, 'admin' = 2) DEFAULT 'read';
